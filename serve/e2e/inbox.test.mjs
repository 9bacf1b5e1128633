// The inbox in a real browser: Debian's Chromium driven by playwright-core (docs/protocol.md §23).
//   node --test serve/e2e/inbox.test.mjs     (needs target/debug/agentx, /usr/bin/chromium and
//   bindings-wasm's node_modules; AGENTX_BIN and CHROMIUM override the paths)
// A real `agentx serve` on a fresh workspace; the person signs in by the printed one-time link,
// an escalation made by the CLI shows in the open inbox without a reload, the person opens it
// and decides, and the entry shows (by whom, via web). Markup in the ledger (a <script>, an
// <img onerror>, a javascript: link in markdown) stays text. Any console error (a CSP
// violation shows as one) or failed request fails the test. Screenshots go to test-output/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(path.join(ROOT, 'bindings-wasm', 'package.json'))
const { chromium } = require('playwright-core')

const BIN = process.env.AGENTX_BIN ?? path.join(ROOT, 'target/debug/agentx')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const OUT = path.join(ROOT, 'test-output')
const WAIT = { timeout: 15000 }

let ws
let server
let link
let context
let page
let profile
const problems = []

const agentx = (...args) => JSON.parse(execFileSync(BIN, ['--root', ws, '--json', ...args], { encoding: 'utf8' }))

before(async () => {
  for (const [file, hint] of [[BIN, 'cargo build -p agentx-cli'], [CHROMIUM, 'apt-get install -y --no-install-recommends chromium']]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: ${hint}`)
  }
  fs.mkdirSync(OUT, { recursive: true })
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-serve-e2e-'))
  agentx('init')
  agentx('keys', 'new', 'agent-x')
  server = spawn(BIN, ['--root', ws, 'serve', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: server.stdout })
  link = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agentx serve printed no sign-in link')), 15000)
    lines.on('line', (line) => {
      if (line.includes('/login?once=')) {
        clearTimeout(timer)
        resolve(line.trim())
      }
    })
  })
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-serve-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 860 },
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
})

after(async () => {
  await context?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)))
    server.kill('SIGTERM')
    assert.equal(await exited, 0, 'agentx serve exits 0 on SIGTERM')
  }
  fs.rmSync(profile, { recursive: true, force: true })
  fs.rmSync(ws, { recursive: true, force: true })
})

test('sign in by the link, see a CLI escalation arrive live, decide it, markup stays inert', async () => {
  await page.goto(link)
  assert.equal(new URL(page.url()).pathname, '/', 'the link lands on the inbox')
  await page.waitForSelector('text=Nothing waits here', WAIT)
  await page.waitForFunction(() => document.body.classList.contains('live-on'), null, WAIT)
  // A marker on the window: it survives only if the page is never reloaded.
  await page.evaluate(() => { window.__sameDocument = true })

  const xssTopic = 'Cache <img src=x onerror="window.__xss=1">'
  const xssQuestion = 'Redis or LRU? <script>window.__xss=2</script> [docs](javascript:window.__xss=3) **bold**'
  const asked = agentx('clarify', 'ask', '--issue', '1', '--from', 'engineer', '--to', 'architect', '--topic', xssTopic, '--question', xssQuestion)
  const id = asked.clarification.id
  agentx('clarify', 'escalate', id, '-m', 'needs a decision <b>now</b>')

  // The row shows when asked (pending), then again when escalated: wait for the second.
  const row = page.locator(`tr.escalated[data-id="${id}"]`)
  await row.waitFor(WAIT)
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the row arrived without a reload')
  assert.match(await row.innerText(), /escalated/)
  assert.match(await row.innerText(), /needs a decision <b>now<\/b>/, 'the reason is shown as text')
  await page.screenshot({ path: path.join(OUT, 'serve-inbox.png'), fullPage: true })

  await row.locator('a', { hasText: id }).click()
  await page.waitForURL(`**/clarifications/${id}`, WAIT)
  await page.waitForSelector('.md.rendered', WAIT)
  // The thread: rendered markdown, every piece of markup from the ledger as text.
  const md = page.locator('.md.rendered')
  assert.match(await md.innerText(), /<script>window.__xss=2<\/script>/)
  assert.ok(await md.locator('strong').count() > 0, "the renderer's markdown is rendered")
  assert.match(await md.innerText(), /\*\*bold\*\*/, "a body's own markdown is the core's escaped text")
  assert.equal(await page.locator('main script, main img, main iframe').count(), 0)
  assert.equal(await page.locator('a[href^="javascript:"]').count(), 0)
  assert.equal(await page.evaluate(() => window.__xss), undefined)

  await page.evaluate(() => { window.__sameDocument = true })
  await page.fill('form[data-op="decide"] textarea[name="message"]', 'Redis, see ADR-7')
  await page.click('form[data-op="decide"] button[type="submit"]')
  await page.waitForSelector('#outcome:has-text("Done")', WAIT)
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the result showed without a reload')
  const thread = await page.locator('.md.rendered').innerText()
  assert.match(thread, /human \(local via web\)/, 'the entry names who decided')
  assert.match(thread, /Redis, see ADR-7/)
  assert.match(await page.locator('.meta').innerText(), /resolved/)
  await page.locator('details.entries summary').click()
  assert.match(await page.locator('details.entries').innerText(), /local via web/)
  await page.screenshot({ path: path.join(OUT, 'serve-thread.png'), fullPage: true })

  // Readable on a phone: the inbox fits a narrow screen without sideways scrolling.
  await page.setViewportSize({ width: 390, height: 800 })
  await page.goto(new URL('/?status=all', link).href)
  await page.waitForSelector(`tr[data-id="${id}"]`, WAIT)
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  assert.ok(overflow <= 1, `the page is ${overflow}px wider than a phone`)
  await page.screenshot({ path: path.join(OUT, 'serve-inbox-phone.png'), fullPage: true })

  const verified = agentx('clarify', 'verify')
  assert.equal(verified.ok, true)
  const shown = agentx('clarify', 'show', id)
  const last = shown.clarification.thread.at(-1)
  assert.deepEqual([last.from, last.by, last.via, last.signer], ['human', 'local', 'web', 'agent-x'])
  assert.deepEqual(problems, [])
})

test('a choice question is decided by its option, recorded as the typed value', async () => {
  const asked = agentx('clarify', 'ask', '--issue', '2', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Cache layer', '--question', 'Which cache?', '--kind', 'choice',
    '--option', 'redis=Redis', '--option', 'lru=In-process LRU', '--no-other')
  const id = asked.clarification.id
  agentx('clarify', 'escalate', id, '-m', 'the team must choose')
  await page.goto(new URL(`/clarifications/${id}`, link).href)
  await page.waitForSelector('form[data-op="decide"][data-kind="choice"]', WAIT)
  // A radio per option, labelled; without allowOther the text box is only a note.
  assert.match(await page.locator('.fields').innerText(), /answer kind\s+choice/)
  const options = page.locator('form[data-op="decide"] input[name="value"][type="radio"]')
  assert.equal(await options.count(), 2)
  assert.match(await page.locator('form[data-op="decide"] fieldset').innerText(), /In-process LRU/)
  await page.locator('form[data-op="decide"] label.option', { hasText: 'In-process LRU' }).click()
  await page.screenshot({ path: path.join(OUT, 'serve-thread-choice.png'), fullPage: true })
  await page.click('form[data-op="decide"] button[type="submit"]')
  // Whatever the outcome, say it: a refusal names its code.
  await page.waitForFunction(() => (document.getElementById('outcome')?.textContent ?? '') !== '', null, WAIT)
  assert.match(await page.locator('#outcome').innerText(), /^Done/)
  const shown = agentx('clarify', 'show', id)
  const last = shown.clarification.thread.at(-1)
  assert.deepEqual([last.type, last.from, last.value, last.body, last.via], ['resolution', 'human', 'lru', 'In-process LRU', 'web'])
  assert.deepEqual(problems, [])
})
