// The inbox in a real browser: Debian's Chromium driven by playwright-core (docs/protocol.md §23),
// as the person who decides meets it — on a phone (390×844) and at a desk (1280×800).
//   node --test serve/e2e/inbox.test.mjs     (needs target/debug/agentx, /usr/bin/chromium and
//   bindings-wasm's node_modules; AGENTX_BIN and CHROMIUM override the paths)
// A real `agentx serve` on a fresh workspace with a webhook sink the test receives. From the
// link in a notification, signed out → the sign-in page says why → a one-time link minted with
// `agentx tokens link` → back on the thread; the question, the options (≥ 44 px) and the
// button are inside the first screen; a note alone is refused (the page says why, the ledger
// is unchanged); an option with a note is recorded as both, by alice, and the sink that got
// the push is told; a foreign `next` stays on this server; the Audit page shows the decision,
// Stats draws its charts; the inbox on a phone is cards with "Needs you" first; the desktop
// card uses the width. Markup in the ledger stays text; any console error (a CSP violation
// shows as one) or failed request fails the test. Screenshots go to docs/screenshots/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'

import { BIN, CHROMIUM, SHOTS, WAIT, launch, checkTools } from './harness.mjs'
const PHONE = { width: 390, height: 844 }
const DESK = { width: 1280, height: 800 }

let ws
let server
let origin
let browser
let phone
let desk
const events = []
let receiver
const problems = []

const agentx = (...args) => JSON.parse(execFileSync(BIN, ['--root', ws, '--json', ...args], { encoding: 'utf8' }))

function watch(page) {
  page.on('console', (m) => {
    // The browser logs the refusal the test provokes on purpose (a 400 from the API).
    if (m.type() === 'error' && !m.location().url?.endsWith('/api/v1/call')) problems.push(`console.error: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('response', (r) => {
    // A refusal the test provokes on purpose is an answer, not a problem.
    if (r.status() >= 400 && !r.url().endsWith('/api/v1/call')) problems.push(`HTTP ${r.status()} ${r.url()}`)
  })
  return page
}

async function startServer() {
  const child = spawn(BIN, ['--root', ws, 'serve', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: child.stdout })
  const link = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agentx serve printed no sign-in link')), 15000)
    lines.on('line', (line) => {
      if (line.includes('/login?once=')) {
        clearTimeout(timer)
        resolve(line.trim())
      }
    })
  })
  return { child, origin: new URL(link).origin }
}

async function stopServer(child) {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  child.kill('SIGTERM')
  assert.equal(await exited, 0, 'agentx serve exits 0 on SIGTERM')
}

// The question a test asks: a choice of four, no free text.
function askChoice(issue, topic) {
  const asked = agentx('clarify', 'ask', '--issue', String(issue), '--from', 'engineer', '--to', 'architect',
    '--topic', topic, '--question', 'Which cache should the session store use? We deploy on Friday.',
    '--kind', 'choice', '--option', 'redis=Redis', '--option', 'lru=In-process LRU',
    '--option', 'memcached=Memcached', '--option', 'none=No cache for now', '--no-other',
    '--context', 'p99 budget 20 ms; sessions must survive a deploy')
  const id = asked.clarification.id
  agentx('clarify', 'escalate', id, '-m', 'the team is split: a person decides')
  return id
}

async function eventFor(id, type) {
  const deadline = Date.now() + 15000
  while (Date.now() < deadline) {
    const found = events.find((e) => e.type === type && e.data.id === id)
    if (found) return found
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no ${type} event for ${id} reached the sink`)
}

async function inFirstScreen(page, selector) {
  const box = await page.locator(selector).first().boundingBox()
  assert.ok(box, `${selector} is shown`)
  const { height, width } = page.viewportSize()
  assert.ok(box.y >= 0 && box.y + box.height <= height && box.x + box.width <= width,
    `${selector} is inside the first ${width}×${height} screen: ${JSON.stringify(box)}`)
  return box
}

before(async () => {
  checkTools()
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-serve-e2e-'))
  agentx('init')
  agentx('keys', 'new', 'agent-x')
  // The sink: a webhook the test itself receives (what a push would carry).
  receiver = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => { body += c })
    req.on('end', () => {
      events.push(JSON.parse(body))
      res.writeHead(200).end()
    })
  })
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r))
  fs.writeFileSync(path.join(ws, '.agentx', 'config.toml'),
    `[[notify]]\nname = "lead"\nkind = "webhook"\nurl = "http://127.0.0.1:${receiver.address().port}/hook"\n`)
  ;({ child: server, origin } = await startServer())
  browser = await launch()
  phone = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true })
  desk = await browser.newContext({ viewport: DESK })
})

after(async () => {
  await browser?.close()
  if (server) await stopServer(server)
  receiver?.close()
  fs.rmSync(ws, { recursive: true, force: true })
})

test('from a push, signed out, by a one-time link, to the thread; decide on a phone', async () => {
  // The worker's first pass sees the sink (a sink is told from then on), then the push.
  await new Promise((r) => setTimeout(r, 1000))
  const id = askChoice(1, 'Cache layer for the session store')
  const push = await eventFor(id, 'clarification.escalated')
  assert.equal(push.data.url, `${origin}/clarifications/${id}`, 'the push links the thread on this server')

  const page = watch(await phone.newPage())
  await page.goto(push.data.url)
  assert.equal(new URL(page.url()).pathname, '/login', 'signed out: the sign-in page')
  assert.match(await page.locator('main').innerText(), new RegExp(`Sign in to open /clarifications/${id}`))

  // On the phone, a link minted for alice (the CLI, as she would send it to herself).
  const minted = agentx('tokens', 'link', '--human', 'alice', '--url', origin)
  assert.match(minted.link, /\/login\?once=/)
  await page.goto(minted.link)
  await page.waitForURL(`**/clarifications/${id}`, WAIT)
  assert.match(await page.locator('header .who').innerText(), /alice/)
  const again = await page.goto(minted.link)
  assert.equal(again.status(), 401, 'a sign-in link works once')
  problems.length = 0
  await page.goto(push.data.url)

  // The first screen holds the question, every option (a large target) and the button.
  await inFirstScreen(page, '.ask .question')
  const options = page.locator('form.decide label.option')
  assert.equal(await options.count(), 4)
  for (let i = 0; i < 4; i++) {
    const box = await inFirstScreen(page, `form.decide label.option >> nth=${i}`)
    assert.ok(box.height >= 44, `option ${i} is ${box.height}px high`)
  }
  await inFirstScreen(page, 'form.decide button[type="submit"]')
  // Options are options, said once; no markdown checkboxes, no CLI hint, the id unbroken.
  assert.equal(await page.locator('main :text("[ ]")').count(), 0)
  assert.equal(await page.locator('main :text("agentx clarify resolve")').count(), 0)
  const heading = await page.locator('h1 .id').boundingBox()
  assert.ok(heading.height < 30, `the id is on one line: ${JSON.stringify(heading)}`)
  assert.equal(await page.locator('p.facts').count(), 1, 'the facts once')
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  assert.ok(overflow <= 1, `the page is ${overflow}px wider than the phone`)
  await page.screenshot({ path: path.join(SHOTS, 'serve-thread-phone.png') })

  // A note alone is no decision on a closed choice: the page says why, nothing is written.
  const before = agentx('clarify', 'show', id).clarification.thread.length
  await page.fill('form.decide textarea[name="message"]', 'whatever is faster')
  await page.tap('form.decide button[type="submit"]')
  await page.waitForSelector('form.decide .problem:not([hidden])', WAIT)
  assert.match(await page.locator('form.decide .problem').innerText(), /a note alone is not a decision/)
  // The server refuses it too, whatever a page sends.
  const refused = await page.evaluate(async (id) => {
    const csrf = document.querySelector('meta[name="csrf"]').content
    const r = await fetch('/api/v1/call', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ op: 'decide', input: { id, message: 'whatever is faster' } }) })
    return [r.status, (await r.json()).error?.code]
  }, id)
  assert.deepEqual(refused, [400, 'INVALID_ANSWER'])
  assert.equal(agentx('clarify', 'show', id).clarification.thread.length, before, 'the ledger is unchanged')

  // Tap an option, keep the note: decided, and the page shows it without a reload.
  await page.evaluate(() => { window.__sameDocument = true })
  await page.locator('form.decide label.option', { hasText: 'In-process LRU' }).tap()
  await page.fill('form.decide textarea[name="message"]', 'see ADR-7; revisit after the load test')
  await page.tap('form.decide button[type="submit"]')
  await page.waitForSelector('.done', WAIT)
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload')
  assert.match(await page.locator('.done').innerText(), /Decided by alice: In-process LRU — see ADR-7/)
  assert.match(await page.locator('#outcome').innerText(), /^Decided/)
  const last = agentx('clarify', 'show', id).clarification.thread.at(-1)
  assert.deepEqual([last.type, last.from, last.by, last.via, last.value, last.body, last.signer],
    ['resolution', 'human', 'alice', 'web', 'lru', 'see ADR-7; revisit after the load test', 'agent-x'])
  await page.screenshot({ path: path.join(SHOTS, 'serve-thread-phone-decided.png'), fullPage: true })

  // The sink that got the push is told the decision, once.
  const decided = await eventFor(id, 'clarification.resolved')
  assert.deepEqual([decided.data.by, decided.data.value, decided.data.label], ['alice', 'lru', 'In-process LRU'])

  // The audit leads with it.
  const audited = agentx('clarify', 'audit', id).chain[0].decided
  assert.deepEqual([audited.by, audited.via, audited.value, audited.label, audited.note, audited.signer],
    ['alice', 'web', 'lru', 'In-process LRU', 'see ADR-7; revisit after the load test', 'agent-x'])
  await page.goto(`${origin}/audit?issue=1`)
  const row = page.locator('table.audit tbody tr').first()
  assert.match(await row.innerText(), /alice \(human via web\)/)
  assert.match(await row.innerText(), /In-process LRU/)
  assert.match(await row.innerText(), /signed by agent-x/)
  assert.match(await page.locator('main').innerText(), /✓ verified/)
  assert.equal(await page.locator('main pre.json').count(), 0, 'a table, not raw JSON')
  assert.deepEqual(problems, [])
})

test('a foreign next stays on this server', async () => {
  const stranger = watch(await (await browser.newContext({ viewport: PHONE })).newPage())
  await stranger.goto(`${origin}/login?next=${encodeURIComponent('//evil.example/x')}`)
  assert.doesNotMatch(await stranger.content(), /evil\.example/)
  const minted = agentx('tokens', 'link', '--human', 'bob', '--url', origin)
  await stranger.goto(minted.link)
  assert.equal(new URL(stranger.url()).origin, origin, 'never off-site')
  assert.equal(new URL(stranger.url()).pathname, '/')
  assert.deepEqual(problems, [])
})

test('the inbox on a phone: needs you first, cards, filters folded; the desk uses the width', async () => {
  // Escalations, one conversation (a question asked back), and a record asked of a person.
  const first = askChoice(3, 'Retention of the audit logs')
  const back = agentx('clarify', 'ask', '--issue', '3', '--from', 'architect', '--to', 'engineer', '--topic', 'Which regulation applies?',
    '--question', 'Is this EU data?', '--asked-back-from', agentx('clarify', 'ask', '--issue', '3', '--from', 'engineer', '--to', 'architect',
      '--topic', 'Log format', '--question', 'JSON or logfmt?').clarification.id).clarification.id
  const xss = agentx('clarify', 'ask', '--issue', '4', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Cache <img src=x onerror="window.__xss=1">', '--question', 'Redis? <script>window.__xss=2</script>').clarification.id
  agentx('clarify', 'escalate', xss, '-m', 'needs a decision <b>now</b>')

  const page = watch(await phone.newPage())
  await page.goto(`${origin}/`)
  await page.waitForSelector('section.needs-you li.card', WAIT)
  assert.match(await page.title(), /^\(\d+\) Inbox/, 'the count in the tab title')
  const needs = page.locator('section.needs-you')
  assert.ok(await needs.locator(`li.card[data-id="${first}"]`).count() === 1)
  assert.match(await needs.locator(`li.card[data-id="${xss}"]`).innerText(), /needs a decision <b>now<\/b>/, 'text stays text')
  assert.equal(await page.evaluate(() => window.__xss), undefined)
  assert.equal(await page.locator('details.filters[open]').count(), 0, 'the filters are folded')
  assert.equal(await page.locator('main table').count(), 0, 'cards, not a table')
  assert.match(await page.locator(`li.card[data-id="${first}"]`).innerText(), /ASKS|asks/)
  // The question asked back sits in the card of the one it came from.
  assert.equal(await page.locator(`li.card li.card[data-id="${back}"]`).count(), 1)
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  assert.ok(overflow <= 1, `the inbox is ${overflow}px wider than the phone`)
  await page.screenshot({ path: path.join(SHOTS, 'serve-inbox-phone.png'), fullPage: true })

  // Arriving live: a new escalation shows without a reload.
  await page.evaluate(() => { window.__sameDocument = true })
  const late = askChoice(5, 'Feature flag for the beta')
  await page.locator(`section.needs-you li.card[data-id="${late}"]`).waitFor(WAIT)
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'it arrived without a reload')

  // At a desk: the decision card uses the width (no narrow column).
  const deskPage = watch(await desk.newPage())
  await deskPage.goto(agentx('tokens', 'link', '--human', 'alice', '--url', origin).link)
  await deskPage.goto(`${origin}/clarifications/${late}`)
  const form = await deskPage.locator('form.decide').boundingBox()
  assert.ok(form.width > 1000, `the form is ${form.width}px wide`)
  const option = await deskPage.locator('form.decide label.option').first().boundingBox()
  assert.ok(option.height < 60, 'labels on one line')
  await deskPage.screenshot({ path: path.join(SHOTS, 'serve-thread-desktop.png') })
  await deskPage.goto(`${origin}/`)
  await deskPage.screenshot({ path: path.join(SHOTS, 'serve-inbox.png') })
  await deskPage.goto(`${origin}/audit`)
  await deskPage.screenshot({ path: path.join(SHOTS, 'serve-audit.png'), fullPage: true })

  // Stats: tables and two charts drawn by the server, no script of their own.
  await deskPage.goto(`${origin}/stats`)
  assert.equal(await deskPage.locator('figure.chart svg').count(), 2)
  assert.ok(await deskPage.locator('figure.chart svg rect.c-person').count() >= 1, 'a person decided')
  assert.equal(await deskPage.locator('main script').count(), 0)
  assert.ok(await deskPage.locator('main table').count() >= 2)
  await deskPage.screenshot({ path: path.join(SHOTS, 'serve-stats.png'), fullPage: true })
  // One time format, the zone shown, on every page.
  for (const p of ['/', `/clarifications/${late}`, '/audit', '/agents']) {
    await deskPage.goto(`${origin}${p}`)
    const text = await deskPage.locator('main').innerText()
    assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT\d\d:\d\d/, `${p}: no raw timestamps`)
  }
  assert.deepEqual(problems, [])
})
