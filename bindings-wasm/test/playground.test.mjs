// Browser test of the playground: Debian's Chromium driven by playwright-core.
//   cd bindings-wasm && npm run test:browser      (needs /usr/bin/chromium and pkg/web)
// It serves the page with the same server as scripts/playground, loads the three-agent deadlock
// example, advances the clock, and checks that the monitor's escalation shows in the SVG
// wait-for graph and in the report; a refusal is shown inline; the scenario survives an
// offline reload from its URL; and the page logs no console or page errors.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { startServer, ensureWasmBuilt, ROOT } from '../playground/server.mjs'

const require = createRequire(import.meta.url)
const { chromium } = require('playwright-core')

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const OUT = path.join(ROOT, 'test-output')
const SHOT = path.join(OUT, 'playground-deadlock.png')
const WAIT = { timeout: 20000 }
// SVG shapes can have an empty bounding box (a horizontal edge), which Playwright calls hidden.
const IN_DOM = { ...WAIT, state: 'attached' }

let server
let context
let page
let profile
const problems = []

before(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium chromium-driver`)
  }
  ensureWasmBuilt()
  server = await startServer()
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-playground-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  })
  page = context.pages()[0] ?? (await context.newPage())
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`)
  })
  await page.goto(server.url)
  await page.waitForSelector('body[data-ready="true"]', WAIT)
})

after(async () => {
  await context?.close()
  await server?.close()
  if (profile) fs.rmSync(profile, { recursive: true, force: true })
})

const count = (sel) => page.locator(sel).count()

test('the three-agent deadlock example: the monitor breaks the cycle when the clock advances', async () => {
  await page.selectOption('#example-select', 'three-agent-deadlock')
  const svg = 'svg.wait-for[data-issue="1"]'
  await page.waitForSelector(`${svg} [data-edge="CLR-1-003"]`, IN_DOM)

  // Before the monitor runs: three agents wait on each other, the cycle is live.
  assert.deepEqual(
    (await page.locator(`${svg} .node`).evaluateAll((ns) => ns.map((n) => n.dataset.agent))).sort(),
    ['architect', 'engineer', 'product-manager'],
  )
  assert.equal(await count(`${svg} .edge.in-cycle.live`), 3)
  assert.equal(await count(`${svg} .edge.would-escalate[data-edge="CLR-1-001"]`), 1)
  assert.equal(await count(`${svg} .edge.escalated`), 0)
  assert.match(await page.textContent('#clock-time'), /22 Nov 2026 · 10:03$/)

  // +1 min: the clock moves and the monitor runs.
  await page.click('[data-advance="60000"]')
  await page.waitForSelector(`${svg} .edge.escalated[data-edge="CLR-1-001"]`, IN_DOM)
  assert.match(await page.textContent('#clock-time'), /22 Nov 2026 · 10:04$/)

  // The cycle is marked: its three agents and its three records; the victim is drawn apart.
  assert.deepEqual(
    (await page.locator(`${svg} .node.in-cycle`).evaluateAll((ns) => ns.map((n) => n.dataset.agent))).sort(),
    ['architect', 'engineer', 'product-manager'],
  )
  assert.deepEqual(
    await page.locator(`${svg} .edge.in-cycle`).evaluateAll((es) => es.map((e) => e.dataset.edge)),
    ['CLR-1-001', 'CLR-1-002', 'CLR-1-003'],
  )
  assert.equal(await count(`${svg} .edge.escalated`), 1)
  const escalated = page.locator(`${svg} .edge.escalated[data-edge="CLR-1-001"]`)
  assert.equal(await escalated.getAttribute('data-from'), 'engineer')
  assert.equal(await escalated.getAttribute('data-to'), 'product-manager')
  assert.notEqual(await escalated.locator('.line').evaluate((l) => getComputedStyle(l).strokeDasharray), 'none')
  assert.match(await escalated.locator('.line').getAttribute('marker-end'), /escalated/)
  assert.match(await page.textContent(`${svg} [data-label="CLR-1-001"]`), /escalated/)
  assert.equal(await count(`${svg} .edge.live`), 0, 'no live cycle is left')
  assert.match(await page.textContent('.narrative.broken'), /CLR-1-001 was escalated/)

  // The timeline shows the monitor step and its escalation.
  assert.match(await page.textContent('#timeline li.current'), /monitor run[\s\S]*escalated CLR-1-001/)

  fs.mkdirSync(OUT, { recursive: true })
  await page.screenshot({ path: SHOT })
  console.log(`screenshot: ${path.relative(process.cwd(), SHOT) || SHOT} (${SHOT})`)

  // The report lists the escalated id and the deadlock.
  await page.click('#tab-report')
  await page.waitForSelector('#view-report [data-report="escalated"][data-id="CLR-1-001"]', WAIT)
  const deadlock = page.locator('#view-report [data-report="deadlock"]')
  assert.equal(await deadlock.count(), 1)
  assert.equal(await deadlock.getAttribute('data-id'), 'CLR-1-001')
  assert.match(await deadlock.textContent(), /CLR-1-001\s*CLR-1-002\s*CLR-1-003/)
  const rendered = await page.textContent('#view-report .report-card .md')
  assert.match(rendered, /Monitor report: 0 stale, 0 retried, 1 escalated, 0 stuck, 1 deadlocks, 0 abandoned/)
  assert.match(rendered, /Escalated: CLR-1-001 — deadlock: CLR-1-001, CLR-1-002, CLR-1-003 between product-manager, architect, engineer; engineer yields to a human/)

  // The thread of the escalated record carries the [ESCALATED] block.
  await page.click('#tab-threads')
  await page.waitForSelector('#view-threads details.thread[data-record="CLR-1-001"]', WAIT)
  assert.match(await page.textContent('#view-threads details.thread[data-record="CLR-1-001"]'), /\[ESCALATED\][\s\S]*agentx clarify resolve CLR-1-001/)
  await page.click('#tab-graph')
})

test('a refusal is shown inline with its code and message', async () => {
  await page.click('#tab-actions')
  await page.click('#op-request')
  const form = '#form-request'
  await page.selectOption(`${form} [data-picker="from"] select`, 'engineer')
  await page.selectOption(`${form} [data-picker="to"] select`, '__other__')
  await page.fill(`${form} [data-picker="to"] input`, 'reviewer')
  await page.click(`${form} button[type="submit"]`)
  await page.waitForSelector(`${form} .outcome.error .refusal`, WAIT)
  assert.equal(await page.textContent(`${form} .refusal .code`), 'SCOPE_VIOLATION')
  assert.match(await page.textContent(`${form} .refusal .msg`), /agent 'engineer' cannot clarify with 'reviewer'/)
  assert.match(await page.textContent('#timeline li.current'), /SCOPE_VIOLATION/)
  // A refused request writes nothing: the graph still shows the same escalation.
  assert.equal(await count('svg.wait-for .edge.escalated[data-edge="CLR-1-001"]'), 1)
  await page.click('#undo')
})

test('the scenario lives in the URL and the page works offline once loaded', async () => {
  assert.match(page.url(), /#s=z[\w-]+$/)
  await page.waitForFunction(() => location.hash.length > 10 && !!navigator.serviceWorker?.controller, null, WAIT)
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true))
  await context.setOffline(true)
  try {
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]', WAIT)
    await page.waitForSelector('svg.wait-for .edge.escalated[data-edge="CLR-1-001"]', IN_DOM)
    assert.match(await page.textContent('#clock-time'), /10:04$/)
    assert.match(await page.textContent('#timeline'), /monitor run/)
  } finally {
    await context.setOffline(false)
  }
})

test('the ask form offers what the core\'s scope preview allows; the clock jumps to its next wake-up', async () => {
  await page.click('#new-scenario')
  await page.click('#tab-actions')
  await page.click('#op-request')
  const form = '#form-request'
  const options = (key) => page.locator(`${form} [data-picker="${key}"] select option`).evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== '__other__'))
  const hint = () => page.textContent(`${form} [data-hint="request"]`)
  assert.match(await page.textContent(`${form} select[name="workflow"] option[value=""]`), /auto: feature/)
  assert.deepEqual(await options('from'), ['architect', 'engineer'])
  await page.selectOption(`${form} [data-picker="from"] select`, 'engineer')
  assert.deepEqual(await options('to'), ['architect', 'product-manager'])
  assert.deepEqual(await page.locator(`${form} select[name="step"] option`).evaluateAll((os) => os.map((o) => o.value)), ['', 'implement'])
  await page.selectOption(`${form} [data-picker="to"] select`, 'architect')
  assert.match(await hint(), /Governing step implement of feature: at most 3 rounds, SLA 60 min, blocking allowed\./)
  // Under bug the governing step forbids blocking: the form unticks it, and a blocking request
  // would get the core's refusal.
  await page.selectOption(`${form} select[name="workflow"]`, 'bug')
  assert.equal(await page.isChecked(`${form} input[name="blocking"]`), false)
  assert.match(await hint(), /Governing step fix of bug: at most 2 rounds, SLA 30 min, blocking not allowed\.$/)
  await page.check(`${form} input[name="blocking"]`)
  assert.match(await hint(), /A blocking request will be refused \(BLOCKING_NOT_ALLOWED\)/)
  await page.selectOption(`${form} select[name="workflow"]`, '')
  await page.check(`${form} input[name="blocking"]`)

  // Nothing pending: no wake-up. After the request: 1 ms past its 60 min SLA.
  assert.equal(await page.isDisabled('#next-deadline'), true)
  await page.click(`${form} button[type="submit"]`)
  await page.waitForSelector(`${form} .outcome.ok`, WAIT)
  const asked = (await page.textContent('#clock-time')).trim()
  assert.match(await page.getAttribute('#next-deadline', 'title'), /Jump to .*:00:00\.001 \(1 h from now\)/)
  await page.click('#next-deadline')
  await page.waitForFunction(() => /:00:00\.001$/.test(document.querySelector('#clock-time').textContent), null, WAIT)
  assert.match(await page.textContent('#timeline li.current'), /monitor run[\s\S]*stale CLR-1-001[\s\S]*retry CLR-1-001/)
  // Undo goes back to the snapshot before the monitor run: the same wake-up is next again.
  await page.click('#undo')
  assert.equal((await page.textContent('#clock-time')).trim(), asked)
  assert.match(await page.getAttribute('#next-deadline', 'title'), /:00:00\.001 \(1 h from now\)/)
  assert.match(await page.textContent('#timeline li.current'), /engineer → architect/)
})

test('no console errors, page errors or failed requests', () => {
  assert.deepEqual(problems, [])
})
