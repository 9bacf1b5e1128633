// The Decisions page in a real browser (issue 45, docs/protocol.md §36): Debian's Chromium
// driven by playwright-core, on a phone (390×844) and at a desk (1280×800).
//   node --test serve/e2e/decisions.test.mjs   (needs target/debug/agentx, /usr/bin/chromium
//   and bindings-wasm's node_modules; AGENTX_BIN and CHROMIUM override the paths)
// A real `agentx serve` on a workspace where issue 7 decided a cache and issue 8 superseded
// it. Signed in by the server's one-time link, the person opens Decisions from the menu: the
// decisions are listed, the superseded one says by what; the search box (the page's, and the
// inbox's below what needs a person) finds the records
// with the query's words marked; markup a question holds stays text (no element, no script
// run); any console error or failed request fails the test. Screenshots: docs/screenshots/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'

import { BIN, CHROMIUM, SHOTS, WAIT, launch, checkTools, watcher } from './harness.mjs'

let ws
let server
let link
let browser
const problems = []

const agentx = (...args) => JSON.parse(execFileSync(BIN, ['--root', ws, '--json', ...args], { encoding: 'utf8' }))

const watch = watcher(problems)

before(async () => {
  checkTools()
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-decisions-e2e-'))
  agentx('init')
  for (const a of ['agent-x', 'engineer', 'architect']) agentx('keys', 'new', a)
  agentx('clarify', 'ask', '--issue', '7', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Session cache <img src=x onerror="window.__pwned=1">',
    '--question', 'Redis or an in-process LRU for the <b>session</b> cache?', '--field', 'cache.layer')
  agentx('clarify', 'answer', 'CLR-7-001', '--from', 'architect', '--body', 'Redis: sessions survive a deploy.')
  agentx('clarify', 'resolve', 'CLR-7-001', '--from', 'engineer')
  agentx('clarify', 'ask', '--issue', '8', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Session cache, again', '--question', 'Still Redis for the session cache now that we run one node?',
    '--field', 'cache.layer')
  agentx('clarify', 'escalate', 'CLR-8-001', '--from', 'engineer', '-m', 'a person decides')
  agentx('clarify', 'resolve', 'CLR-8-001', '-m', 'In-process LRU: one node, no network hop.', '--supersedes', 'CLR-7-001')

  // A decision taken again by reuse: the Stats page counts it for its asker.
  agentx('clarify', 'ask', '--issue', '9', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Rate limiter store', '--question', 'In-process for the rate limiter too?', '--reuse', 'CLR-8-001')
  server = spawn(BIN, ['--root', ws, 'serve', '--listen', '127.0.0.1:0', '--no-worker'], { stdio: ['ignore', 'pipe', 'inherit'] })
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
  browser = await launch()
})

after(async () => {
  await browser?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve))
    server.kill('SIGTERM')
    await exited
  }
  fs.rmSync(ws, { recursive: true, force: true })
})

test('the decisions, what superseded one, and a search with its words marked', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true })
  const page = watch(await context.newPage())
  await page.goto(link)
  await page.waitForURL((u) => u.pathname === '/', WAIT)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Decisions' }).click()
  await page.waitForURL((u) => u.pathname === '/decisions', WAIT)
  assert.equal(await page.locator('a[aria-current="page"]').innerText(), 'Decisions')

  const rows = page.locator('table.decisions tbody tr')
  assert.equal(await rows.count(), 3, 'issue 7, its supersession in 8, and 9 that reused 8')
  const first = await rows.nth(0).innerText()
  assert.match(first, /CLR-7-001/)
  assert.match(first, /superseded by\s+CLR-8-001/)
  assert.match(first, /Session cache <img src=x onerror="window.__pwned=1">/, 'the topic is shown as text')
  const second = await rows.nth(1).innerText()
  assert.match(second, /In-process LRU: one node/)
  assert.match(second, /accepted/)
  await page.screenshot({ path: path.join(SHOTS, 'decisions-phone.png'), fullPage: true })

  // The search box: the records, best first, the query's words marked.
  await page.getByRole('searchbox').fill('redis session cache')
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForURL((u) => u.searchParams.get('q') === 'redis session cache', WAIT)
  const hits = page.locator('ol.hits > li')
  assert.equal(await hits.count(), 2)
  const marks = await page.locator('ol.hits mark').allInnerTexts()
  for (const w of ['Redis', 'session', 'cache']) assert.ok(marks.includes(w), `${w} is marked: ${marks}`)
  assert.match(await hits.nth(0).innerText(), /CLR-7-001|CLR-8-001/)
  assert.equal(await page.getByRole('searchbox').inputValue(), 'redis session cache', 'the query stays in the box')

  // Markup from the ledger is text: no element was made of it, no script ran.
  assert.equal(await page.locator('main img').count(), 0)
  assert.equal(await page.locator('main b').count(), 0)
  assert.equal(await page.evaluate(() => window.__pwned), undefined)
  assert.match(await page.locator('main').innerText(), /<b>session<\/b>/)

  // The inbox's search box, below what needs a person, searches the same way.
  await page.goto(new URL('/', link).href)
  const find = page.getByRole('search', { name: 'Search every record' })
  await find.getByLabel('Asked or decided before?').fill('session cache redis')
  await page.screenshot({ path: path.join(SHOTS, 'inbox-search-phone.png'), fullPage: true })
  await find.getByRole('button', { name: 'Search' }).click()
  await page.waitForURL((u) => u.pathname === '/decisions' && u.searchParams.get('q') === 'session cache redis', WAIT)
  assert.equal(await hits.count(), 2)
  assert.ok((await page.locator('ol.hits mark').allInnerTexts()).includes('Redis'))
  assert.equal(await page.evaluate(() => window.__pwned), undefined)

  const desk = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const wide = watch(await desk.newPage())
  // At a desk, signed in by a link minted for alice with the CLI.
  const minted = agentx('tokens', 'link', '--human', 'alice', '--url', new URL(link).origin)
  await wide.goto(minted.link)
  await wide.waitForURL((u) => u.pathname === '/', WAIT)
  await wide.goto(new URL('/decisions?q=redis+session+cache', link).href)
  assert.equal(await wide.locator('ol.hits > li').count(), 2)
  await wide.screenshot({ path: path.join(SHOTS, 'decisions-desk.png'), fullPage: true })
  // Stats: what the memory saved, per agent.
  await wide.goto(new URL('/stats', link).href)
  const memory = wide.locator('h2', { hasText: "The hub's memory" })
  assert.equal(await memory.count(), 1)
  const row = await wide.locator('table tr', { hasText: 'engineer' }).filter({ has: wide.locator('th[scope="row"]') }).last().innerText()
  assert.match(row, /engineer\s+0\s+1/)
  assert.deepEqual(problems, [])
})
