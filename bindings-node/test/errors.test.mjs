// Every error code reachable from Node, asserted on `err.code`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { c, T0, tempWorkspace, ledgerPath, caught } from './helpers.mjs'

const ask = (over = {}) => ({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache layer', question: 'Redis or in-process?', now: T0, ...over })

function opened() {
  return c.request(ask())
}

function codeOf(fn) {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof Error)
    assert.equal(e.name, 'ClarifyError')
    return e.code
  }
  assert.fail('expected a throw')
}

test('input validation codes', () => {
  assert.equal(codeOf(() => c.answer({ ledger: opened().ledger, id: 'CLR-42-01', from: 'architect', body: 'x', now: T0 })), 'INVALID_ID')
  assert.equal(codeOf(() => c.request(ask({ from: 'Engineer' }))), 'INVALID_AGENT')
  assert.equal(codeOf(() => c.request(ask({ to: 'human' }))), 'INVALID_AGENT')
  assert.equal(codeOf(() => c.request(ask({ issueNumber: '../1' }))), 'INVALID_ISSUE')
  assert.equal(codeOf(() => c.request(ask({ issueNumber: 2 ** 31 }))), 'INVALID_ISSUE')
  assert.equal(codeOf(() => c.request(ask({ topic: '   ' }))), 'TEXT_EMPTY')
  assert.equal(codeOf(() => c.request(ask({ topic: 'é'.repeat(201) }))), 'TEXT_TOO_LONG')
  assert.equal(codeOf(() => c.request(ask({ to: 'engineer' }))), 'SELF_CLARIFICATION')
  assert.equal(codeOf(() => c.request(ask({ now: undefined }))), 'INVALID_INPUT')
  assert.equal(codeOf(() => c.request('not an object')), 'INVALID_INPUT')
  assert.equal(codeOf(() => c.request({ issueNumber: 1n })), 'INVALID_INPUT', 'a BigInt cannot cross')
  const cycle = {}
  cycle.self = cycle
  assert.equal(codeOf(() => c.request(cycle)), 'INVALID_INPUT', 'nor can a cycle')
})

test('policy codes', () => {
  assert.equal(codeOf(() => c.request(ask({ to: 'reviewer' }))), 'SCOPE_VIOLATION')
  assert.equal(codeOf(() => c.request(ask({ workflow: 'bug' }))), 'BLOCKING_NOT_ALLOWED')
  assert.equal(codeOf(() => c.request(ask({ workflow: 'epic' }))), 'INVALID_WORKFLOW')
  const bad = { feature: '[[steps]]\nid = "x"\nagent = "engineer"\nclarify_max_rounds = "three"\n' }
  const err = (() => { try { c.request(ask({ workflows: bad })) } catch (e) { return e } })()
  assert.equal(err.code, 'CONFIG_INVALID')
  assert.match(err.message, /^feature\.toml:4:22: /)
  assert.equal(codeOf(() => c.request(ask({ config: '[clarify]\nmax_retries = "x"\n' }))), 'CONFIG_INVALID')
  const first = c.request(ask({ idempotencyKey: 'k1' }))
  assert.equal(codeOf(() => c.request(ask({ ledger: first.ledger, idempotencyKey: 'k1', question: 'other?' }))), 'IDEMPOTENCY_CONFLICT')
})

test('state machine codes', () => {
  const r = opened()
  assert.equal(codeOf(() => c.answer({ ledger: r.ledger, id: 'CLR-42-009', from: 'architect', body: 'x', now: T0 })), 'NOT_FOUND')
  assert.equal(codeOf(() => c.answer({ ledger: r.ledger, id: 'CLR-42-001', from: 'reviewer', body: 'x', now: T0 })), 'NOT_PARTICIPANT')
  assert.equal(codeOf(() => c.resolve({ ledger: r.ledger, id: 'CLR-42-001', now: T0 })), 'INVALID_TRANSITION')
  assert.equal(codeOf(() => c.answer({ ledger: '{ not json', id: 'CLR-42-001', from: 'architect', body: 'x', now: T0 })), 'LEDGER_CORRUPT')
})

test('MAX_ROUNDS_EXCEEDED throws and carries the written escalation', () => {
  let ledger = opened().ledger
  for (let round = 1; round <= 3; round++) {
    ledger = c.answer({ ledger, id: 'CLR-42-001', from: 'architect', body: `answer ${round}`, now: T0 }).ledger
    if (round < 3) ledger = c.followUp({ ledger, id: 'CLR-42-001', from: 'engineer', question: `follow-up number ${round} ${'z'.repeat(round)}`, now: T0 }).ledger
  }
  const e = (() => { try { c.followUp({ ledger, id: 'CLR-42-001', from: 'engineer', question: 'once more', now: T0 }) } catch (e) { return e } })()
  assert.equal(e.code, 'MAX_ROUNDS_EXCEEDED')
  assert.equal(e.clarification.status, 'escalated')
  assert.equal(e.clarification.thread.at(-1).from, 'agent-x')
  assert.equal(e.events[0].type, 'clarification-escalated')
  assert.equal(e.ledger.clarifications[0].status, 'escalated')
})

test('store codes: LEDGER_CORRUPT, LEDGER_INCONSISTENT, LOCK_TIMEOUT, IO_ERROR', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  fs.writeFileSync(path.join(root, '.agentx/config.toml'), '[clarify]\nlock_timeout_ms = 200\n')
  await ws.ask(ask({ now: undefined }))
  // A fresh lock held by a live process (this one) on another file → timeout.
  const lock = ledgerPath(root, 42) + '.lock'
  fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: (await import('node:os')).hostname(), timestamp: Date.now(), agent: 'other' }))
  assert.equal((await caught(() => ws.answer({ id: 'CLR-42-001', from: 'architect', body: 'x' }))).code, 'LOCK_TIMEOUT')
  fs.unlinkSync(lock)
  // Tampered history → verify fails with the problems attached.
  const text = fs.readFileSync(ledgerPath(root, 42), 'utf8')
  fs.writeFileSync(ledgerPath(root, 42), text.replace('Redis or in-process?', 'Memcached?'))
  const inconsistent = await caught(() => ws.verify())
  assert.equal(inconsistent.code, 'LEDGER_INCONSISTENT')
  assert.equal(inconsistent.problems[0].id, 'CLR-42-001')
  // A symlinked ledger is refused.
  fs.symlinkSync('/etc/hostname', ledgerPath(root, 7))
  assert.equal((await caught(() => ws.ask(ask({ issueNumber: 7, now: undefined })))).code, 'IO_ERROR')
  assert.equal((await caught(() => ws.ask({ issueNumber: 1 }))).code, 'INVALID_INPUT')
})

test('the store decodes its fields with the helpers of the pure API: the same errors, word for word', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  const same = async (store, pure) => {
    const a = await caught(store)
    let b
    try {
      pure()
    } catch (e) {
      b = e
    }
    assert.ok(b, 'the pure call must throw too')
    assert.deepEqual({ code: a.code, message: a.message }, { code: b.code, message: b.message })
    return a.code
  }
  // An integral float is an integer from JS; a fraction, a huge number or a path is refused.
  assert.deepEqual((await ws.list({ issue: 42.0 })).clarifications, [])
  assert.equal(await same(() => ws.list({ issue: 4.5 }), () => c.list({ issue: 4.5 })), 'INVALID_ISSUE')
  assert.equal(await same(() => ws.show({ issue: 2 ** 31 }), () => c.show({ issue: 2 ** 31 })), 'INVALID_ISSUE')
  assert.equal(await same(() => ws.list({ issue: '../1' }), () => c.list({ issue: '../1' })), 'INVALID_ISSUE')
  assert.equal(await same(() => ws.list({ status: ['open'] }), () => c.list({ status: ['open'] })), 'INVALID_INPUT')
  assert.equal(await same(() => ws.list({ status: 'pending' }), () => c.list({ status: 'pending' })), 'INVALID_INPUT')
  assert.equal(await same(() => ws.ask(ask({ issueNumber: 2 ** 31 })), () => c.request(ask({ issueNumber: 2 ** 31 }))), 'INVALID_ISSUE')
})

test('numbers JSON cannot carry are the docs/protocol.md §9 codes on every path, never napi\'s own nor a silent null', async () => {
  for (const bad of [NaN, Infinity, -Infinity]) {
    assert.equal(codeOf(() => c.request(ask({ issueNumber: bad }))), 'INVALID_ISSUE', `issueNumber ${bad}`)
    assert.equal(codeOf(() => c.request(ask({ now: bad }))), 'INVALID_INPUT', `now ${bad}`)
    assert.equal(codeOf(() => c.list({ issue: bad, ledgers: [] })), 'INVALID_ISSUE', `list issue ${bad}`)
  }
  // Nested too (a ledger's field), and through a Date's toJSON (an invalid Date is null).
  const r = opened()
  const ledger = structuredClone(r.ledger)
  ledger.clarifications[0].round = NaN
  assert.equal(codeOf(() => c.answer({ ledger, id: 'CLR-42-001', from: 'architect', body: 'x', now: T0 })), 'INVALID_INPUT')
  const e = (() => { try { c.request(ask({ now: Infinity })) } catch (e) { return e } })()
  assert.match(e.message, /`now` must be a finite number, found Infinity/)
  // Non-integers reach the core, which refuses them with the same codes.
  assert.equal(codeOf(() => c.request(ask({ issueNumber: 1.5 }))), 'INVALID_ISSUE')
  assert.equal(codeOf(() => c.request(ask({ now: T0 + 0.5 }))), 'INVALID_INPUT')
  // A real null is not refused here (the core decides what null means).
  assert.equal(c.request(ask({ workflow: null })).clarification.id, 'CLR-42-001')

  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  for (const bad of [NaN, Infinity]) {
    assert.equal((await caught(() => ws.ask(ask({ issueNumber: bad })))).code, 'INVALID_ISSUE')
    assert.equal((await caught(() => ws.ask(ask({ now: bad })))).code, 'INVALID_INPUT')
    assert.equal((await caught(() => ws.list({ issue: bad }))).code, 'INVALID_ISSUE')
    assert.equal((await caught(() => ws.monitor({ now: bad }))).code, 'INVALID_INPUT')
  }
  assert.equal((await caught(() => ws.ask(ask({ issueNumber: 2.5 })))).code, 'INVALID_ISSUE')
  assert.equal(fs.existsSync(ledgerPath(root, 42)), false, 'nothing was written')

  const mem = new c.MemoryWorkspace()
  for (const bad of [NaN, Infinity, 1.5]) {
    assert.equal(codeOf(() => mem.run('ask', ask({ now: undefined }), bad)), 'INVALID_INPUT', `run now ${bad}`)
  }
  assert.equal(codeOf(() => mem.run('ask', ask({ issueNumber: NaN }))), 'INVALID_ISSUE')
  assert.equal(mem.run('ask', ask()).clarification.id, 'CLR-42-001')
})

test('a workspace root that does not exist is an error; init creates it', async () => {
  const root = path.join(tempWorkspace(), 'not', 'yet')
  const ws = new c.Workspace(root)
  const e = await caught(() => ws.list())
  assert.equal(e.code, 'IO_ERROR')
  assert.match(e.message, /does not exist/)
  await ws.init()
  assert.deepEqual((await ws.list()).clarifications, [])
})
