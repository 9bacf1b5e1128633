// People by name in a real browser (issue 43, docs/protocol.md §37): Debian's Chromium driven
// by playwright-core, on a phone (390×844).
//   node --test serve/e2e/people.test.mjs   (needs target/debug/agentx, /usr/bin/chromium and
//   bindings-wasm's node_modules; AGENTX_BIN and CHROMIUM override the paths)
// A real `agentx serve` on a workspace whose people.toml names alice (a lead) and bob, with
// `default_deciders = ["role:lead"]`: an escalation is assigned to alice. Bob, signed in by his
// own one-time link, finds it under "Other records" (assigned to alice), its page read-only
// with who may decide it, and his POST of a decision is 403 NOT_ALLOWED naming alice — the
// ledger unchanged. Alice finds it under "Needs you", takes it ("You are on it"), and decides.
// Where a workflow asks two to agree (quorum 2), the button says Approve, alice's approval
// leaves it "1 of 2 approved (alice); waiting on bob", and bob's same decision resolves it.
// Any console error or failed request other than bob's refused POST fails the test.
// Screenshots: docs/screenshots/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'

import { BIN, CHROMIUM, SHOTS, WAIT, launch, checkTools, watcher } from './harness.mjs'
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true }

let ws
let server
let base
let browser
const problems = []

const agentx = (...args) => JSON.parse(execFileSync(BIN, ['--root', ws, '--json', ...args], { encoding: 'utf8' }))

const watch = (page, allowed) => watcher(problems, allowed)(page)

async function signIn(name) {
  const { link } = agentx('tokens', 'link', '--human', name, '--url', base)
  const context = await browser.newContext(PHONE)
  return { context, link }
}

before(async () => {
  checkTools()
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-people-e2e-'))
  agentx('init')
  for (const a of ['agent-x', 'engineer', 'architect']) agentx('keys', 'new', a)
  fs.writeFileSync(path.join(ws, '.agentx/people.toml'), '[people.alice]\nroles = ["lead"]\n\n[people.bob]\n')
  fs.appendFileSync(path.join(ws, '.agentx/config.toml'), '\n[people]\ndefault_deciders = ["role:lead"]\n')
  agentx('clarify', 'ask', '--issue', '42', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Session cache', '--question', 'Redis or an in-process LRU for the session cache?')
  const escalated = agentx('clarify', 'escalate', 'CLR-42-001', '--from', 'engineer', '-m', 'a lead decides')
  assert.deepEqual(escalated.clarification.assigned, ['alice'])
  // Issue 43 follows a workflow where alice and bob must both approve (quorum 2).
  fs.writeFileSync(path.join(ws, '.agentx/workflows/review.toml'),
    '[[steps]]\nid = "design"\nagent = "architect"\ndeciders = ["alice", "bob"]\nquorum = 2\n\n[[steps]]\nid = "build"\nagent = "engineer"\ncan_clarify = ["architect"]\n')
  agentx('clarify', 'ask', '--issue', '43', '--workflow', 'review', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Queue', '--question', 'SQS or Redis streams?')
  const both = agentx('clarify', 'escalate', 'CLR-43-001', '--from', 'engineer', '-m', 'both leads decide')
  assert.equal(both.clarification.approvals.needed, 2)
  server = spawn(BIN, ['--root', ws, 'serve', '--listen', '127.0.0.1:0', '--no-worker'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: server.stdout })
  const first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agentx serve printed no sign-in link')), 15000)
    lines.on('line', (line) => {
      if (line.includes('/login?once=')) {
        clearTimeout(timer)
        resolve(line.trim())
      }
    })
  })
  base = new URL(first.slice(first.indexOf('http'))).origin
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

test('bob sees alice\'s escalation read-only and is refused; alice takes it and decides', async () => {
  const before = fs.readFileSync(path.join(ws, '.agentx/state/clarifications/issue-42.json'), 'utf8')

  // Bob: not under "Needs you"; the card says whose it is.
  const bob = await signIn('bob')
  const refused = (text) => text.includes('/api/v1/call') || text.includes('403')
  const bp = watch(await bob.context.newPage(), refused)
  await bp.goto(bob.link)
  await bp.waitForURL((u) => u.pathname === '/', WAIT)
  assert.equal(await bp.locator('section.needs-you li.card[data-id="CLR-42-001"]').count(), 0, "alice's record does not need bob")
  assert.equal(await bp.locator('section.needs-you li.card[data-id="CLR-43-001"]').count(), 1, 'the one he approves does')
  const card = bp.locator('section.others li.card[data-id="CLR-42-001"]')
  assert.match(await card.innerText(), /assigned\s+alice/i)

  // Its page: who may decide, and no decision form.
  await bp.goto(`${base}/clarifications/CLR-42-001`)
  assert.match(await bp.locator('p.holding').innerText(), /Assigned to alice · Only alice may decide it/)
  assert.equal(await bp.locator('form.decide').count(), 0, 'no form for bob')
  assert.equal(await bp.getByRole('button', { name: 'Take it' }).count(), 0)
  await bp.screenshot({ path: path.join(SHOTS, 'thread-not-yours-phone.png'), fullPage: true })

  // A decision posted anyway is refused by the server, with the reason, and writes nothing.
  const answer = await bp.evaluate(async () => {
    const csrf = document.querySelector('meta[name="csrf"]')?.content ?? ''
    const r = await fetch('/api/v1/call', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify({ op: 'decide', input: { id: 'CLR-42-001', message: 'Redis.' } }),
    })
    return { status: r.status, body: await r.json() }
  })
  assert.equal(answer.status, 403)
  assert.equal(answer.body.error.code, 'NOT_ALLOWED')
  assert.match(answer.body.error.message, /'bob' cannot resolve CLR-42-001: it is assigned to alice/)
  assert.equal(fs.readFileSync(path.join(ws, '.agentx/state/clarifications/issue-42.json'), 'utf8'), before)
  await bob.context.close()

  // Alice: it needs her; she takes it, then decides.
  const alice = await signIn('alice')
  const ap = watch(await alice.context.newPage())
  await ap.goto(alice.link)
  await ap.waitForURL((u) => u.pathname === '/', WAIT)
  const mine = ap.locator('section.needs-you li.card[data-id="CLR-42-001"]')
  assert.equal(await mine.count(), 1, 'under Needs you')
  await mine.getByRole('link', { name: 'Session cache' }).click()
  await ap.waitForURL((u) => u.pathname === '/clarifications/CLR-42-001', WAIT)
  const take = ap.getByRole('button', { name: 'Take it' })
  const box = await take.boundingBox()
  assert.ok(box && box.height >= 44 && box.y + box.height <= 844, `Take it is a tap target on the first screen: ${JSON.stringify(box)}`)
  await take.click()
  await ap.locator('p.holding', { hasText: 'You are on it' }).waitFor(WAIT)
  assert.equal(await ap.getByRole('button', { name: 'Take it' }).count(), 0, 'taken: no second Take it')
  await ap.screenshot({ path: path.join(SHOTS, 'thread-claimed-phone.png'), fullPage: true })
  // The same page at a desk.
  const desk = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
  const dp = watch(await desk.newPage())
  await dp.goto(agentx('tokens', 'link', '--human', 'alice', '--url', base).link)
  await dp.waitForURL((u) => u.pathname === '/', WAIT)
  await dp.screenshot({ path: path.join(SHOTS, 'inbox-people-desktop.png'), fullPage: true })
  await dp.goto(`${base}/clarifications/CLR-42-001`)
  await dp.locator('p.holding', { hasText: 'You are on it' }).waitFor(WAIT)
  await dp.screenshot({ path: path.join(SHOTS, 'thread-claimed-desktop.png'), fullPage: true })
  await desk.close()
  const shown = agentx('clarify', 'show', 'CLR-42-001')
  assert.equal(shown.clarification.claimedBy.person, 'alice')
  const claim = shown.clarification.thread.at(-1)
  assert.deepEqual([claim.type, claim.by, claim.via], ['claim', 'alice', 'web'])

  await ap.locator('form.decide textarea[name="message"]').fill('Redis: sessions survive a deploy.')
  await ap.getByRole('button', { name: 'Decide' }).click()
  await ap.locator('#outcome', { hasText: 'resolved' }).waitFor(WAIT)
  const decided = agentx('clarify', 'show', 'CLR-42-001').clarification
  assert.equal(decided.status, 'resolved')
  const resolution = decided.thread.at(-1)
  assert.deepEqual([resolution.type, resolution.by], ['resolution', 'alice'])
  assert.deepEqual(agentx('clarify', 'verify').problems, [])
  await alice.context.close()
  assert.deepEqual(problems, [])
})

test('where two must agree the button is Approve, and the second approval decides', async () => {
  const approve = async (name, text) => {
    const who = await signIn(name)
    const page = watch(await who.context.newPage())
    await page.goto(who.link)
    await page.waitForURL((u) => u.pathname === '/', WAIT)
    await page.goto(`${base}/clarifications/CLR-43-001`)
    const button = page.getByRole('button', { name: 'Approve' })
    assert.equal(await button.count(), 1, `${name} sees Approve`)
    await page.locator('form.decide textarea[name="message"]').fill(text)
    await button.click()
    return { who, page }
  }
  const first = await approve('alice', 'SQS: managed, and we are on AWS.')
  await first.page.locator('#outcome', { hasText: '1 of 2 approved (alice); waiting on bob' }).waitFor(WAIT)
  await first.page.screenshot({ path: path.join(SHOTS, 'thread-quorum-phone.png'), fullPage: true })
  assert.equal(agentx('clarify', 'show', 'CLR-43-001').clarification.status, 'escalated')
  await first.who.context.close()
  const second = await approve('bob', 'SQS: managed, and we are on AWS.')
  await second.page.locator('#outcome', { hasText: 'resolved' }).waitFor(WAIT)
  await second.who.context.close()
  const decided = agentx('clarify', 'show', 'CLR-43-001').clarification
  assert.equal(decided.status, 'resolved')
  assert.deepEqual(decided.thread.at(-1).approvedBy, ['alice', 'bob'])
  assert.deepEqual(problems, [])
})
