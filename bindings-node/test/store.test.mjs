// The Node store shares the CLI's store code: same shapes, same locks, same refusals.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { c, native, AGENTX, ROOT, tempWorkspace, ledgerPath, caught, here } from './helpers.mjs'

const run = promisify(execFile)
const cli = async (root, ...args) => JSON.parse((await run(AGENTX, ['--root', root, '--json', ...args])).stdout)

test('the store returns the CLI --json shapes', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  assert.ok((await ws.init()).created.includes('.agentx/workflows/feature.toml'))
  const asked = await ws.ask({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache', question: 'Redis?', now: '2026-11-22T10:00:00Z' })
  assert.deepEqual(Object.keys(asked), ['ok', 'clarification', 'events', 'idempotent', 'related', 'monitor', 'warnings'])
  assert.equal(asked.clarification.id, 'CLR-42-001')
  await ws.answer({ id: 'CLR-42-001', from: 'architect', body: 'Yes, Redis.', now: '2026-11-22T10:05:00Z' })
  const resolved = await ws.resolve({ id: 'CLR-42-001', now: '2026-11-22T10:06:00Z' })
  assert.equal(resolved.clarification.status, 'resolved')
  // The CLI reads exactly what Node wrote, and both show it identically.
  assert.deepEqual(await ws.show({ id: 'CLR-42-001' }), await cli(root, 'clarify', 'show', 'CLR-42-001'))
  assert.deepEqual(await ws.list({ all: true }), await cli(root, 'clarify', 'list', '--all'))
  assert.deepEqual(await ws.stats({}), await cli(root, 'clarify', 'stats'))
  assert.deepEqual(await ws.verify(), { ok: true, problems: [], warnings: [] })
  const hook = await ws.hookStart({ agent: 'engineer', issue: 42 })
  assert.equal(hook.agent.status, 'working')
  const ready = await ws.ready({})
  assert.deepEqual(ready.issues, [{ issueNumber: 42, blocked: [] }])
  await ws.ask({ issueNumber: 43, from: 'engineer', to: 'architect', topic: 'Schema', question: 'One table?', now: '2026-11-22T10:07:00Z' })
  await ws.escalate({ id: 'CLR-43-001', now: '2026-11-22T10:08:00Z' })
  // An escalated blocking record holds its issue by default; includeEscalated: false leaves it out.
  assert.deepEqual((await ws.ready({ includeEscalated: false, now: '2026-11-22T10:09:00Z' })).issues[1], { issueNumber: 43, blocked: [] })
  const withEscalated = await ws.ready({ now: '2026-11-22T10:09:00Z' })
  assert.deepEqual(withEscalated.issues[1], { issueNumber: 43, blocked: [{ id: 'CLR-43-001', waitingOn: 'human' }] })
  assert.deepEqual(withEscalated, await cli(root, 'ready', '--now', '2026-11-22T10:09:00Z'))
  assert.equal((await ws.state({})).statuses.engineer.issue, 42)
  assert.equal(c.Workspace.discover(path.join(root, '.agentx/workflows')).root, root)
})

test('a corrupt ledger is refused and left byte-identical', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  const bytes = '{"issueNumber": 5, "clarifications": [ oops'
  fs.writeFileSync(ledgerPath(root, 5), bytes)
  const e = await caught(() => ws.ask({ issueNumber: 5, from: 'engineer', to: 'architect', topic: 't', question: 'q' }))
  assert.equal(e.code, 'LEDGER_CORRUPT')
  assert.equal(fs.readFileSync(ledgerPath(root, 5), 'utf8'), bytes)
  const m = await ws.monitor({})
  assert.deepEqual(m.report.errors.map((x) => [x.file, x.code]), [['issue-5.json', 'LEDGER_CORRUPT']])
  assert.equal(fs.readFileSync(ledgerPath(root, 5), 'utf8'), bytes)
})

test('a lock left by a dead process is taken at once', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  fs.writeFileSync(ledgerPath(root, 3) + '.lock', JSON.stringify({ pid: 999999999, hostname: os.hostname(), timestamp: Date.now(), agent: 'ghost' }))
  const t = performance.now()
  await ws.ask({ issueNumber: 3, from: 'engineer', to: 'architect', topic: 't', question: 'q' })
  // Well under the 5 s lock timeout and the 30 s stale age: the dead holder's lock was broken.
  assert.ok(performance.now() - t < 4000, 'no waiting for the 30 s stale age')
  assert.ok(!fs.existsSync(ledgerPath(root, 3) + '.lock'))
})

test('4 CLI processes and 4 Node workers × 50 asks on one ledger: no lost update', async () => {
  const root = tempWorkspace()
  await new c.Workspace(root).init()
  // This checks that no update is lost, not how fast 8 writers queue: on a loaded machine a
  // writer can wait longer than the default 5 s for its turn, so the timeout is generous.
  const config = path.join(root, '.agentx/config.toml')
  fs.writeFileSync(config, fs.readFileSync(config, 'utf8').replace('lock_timeout_ms = 5000', 'lock_timeout_ms = 60000'))
  const PER = 50
  const cliWriter = async (w) => {
    for (let i = 0; i < PER; i++) {
      await run(AGENTX, ['--root', root, '--json', 'clarify', 'ask', '--issue', '9', '--from', 'engineer', '--to', 'architect', '--topic', `cli ${w} ${i}`, '--question', `question ${w}/${i}?`, '--non-blocking'])
    }
  }
  const nodeWriter = (w) => new Promise((resolve, reject) => {
    const worker = new Worker(path.join(here, 'worker-asks.mjs'), { workerData: { root, w, n: PER } })
    worker.on('message', resolve)
    worker.on('error', reject)
    worker.on('exit', (code) => code !== 0 && reject(new Error(`worker exited ${code}`)))
  })
  const t = performance.now()
  await Promise.all([0, 1, 2, 3].flatMap((w) => [cliWriter(w), nodeWriter(w)]))
  const seconds = ((performance.now() - t) / 1000).toFixed(1)
  const ledger = JSON.parse(fs.readFileSync(ledgerPath(root, 9), 'utf8'))
  const ids = ledger.clarifications.map((r) => r.id)
  assert.equal(ids.length, 8 * PER, 'every ask landed')
  assert.equal(new Set(ids).size, ids.length, 'ids are unique')
  assert.deepEqual(ids, Array.from({ length: 8 * PER }, (_, i) => `CLR-9-${String(i + 1).padStart(3, '0')}`))
  const topics = new Set(ledger.clarifications.map((r) => r.topic))
  assert.equal(topics.size, 8 * PER)
  assert.deepEqual(await cli(root, 'clarify', 'verify'), { ok: true, problems: [], warnings: [] })
  console.log(`400 asks from 4 CLI processes + 4 Node workers in ${seconds}s, ids unique, verify clean`)
})

test('migrate upgrades a ledger AgentX wrote, in the store and in memory alike', async () => {
  // AgentX's TypeScript router: JSON.stringify(…, null, 2), record-level issueNumber, no hashes.
  const agentx = {
    issueNumber: 8,
    clarifications: [{
      id: 'CLR-8-001', issueNumber: 8, from: 'engineer', to: 'architect', topic: 'Cache', blocking: true,
      status: 'pending', round: 1, maxRounds: 5, created: '2026-11-22T10:00:00.940Z',
      staleAfter: '2026-11-22T10:30:00.940Z', resolvedAt: null,
      thread: [{ round: 1, from: 'engineer', type: 'question', body: 'Redis?', timestamp: '2026-11-22T10:00:00.942Z' }],
    }],
  }
  const text = JSON.stringify(agentx, null, 2)
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  fs.writeFileSync(ledgerPath(root, 8), text)
  assert.ok((await ws.verify()).warnings.length > 0)
  const dry = await ws.migrate({ dryRun: true })
  assert.equal(fs.readFileSync(ledgerPath(root, 8), 'utf8'), text, 'a dry run writes nothing')
  const done = await ws.migrate()
  assert.deepEqual(done.migrated, dry.migrated)
  assert.equal(done.migrated[0].file, 'issue-8.json')
  assert.ok(done.migrated[0].changes.some((ch) => ch.id === 'CLR-8-001' && ch.message === 'hashed entry 1 in order'))
  assert.deepEqual((await ws.verify()).warnings, [])
  assert.deepEqual(await cli(root, 'migrate'), { ok: true, dryRun: false, migrated: [], unchanged: 1, errors: [] })
  const mem = new c.MemoryWorkspace({ ledgers: { 'issue-8.json': text } })
  assert.deepEqual(mem.run('migrate', {}).migrated, done.migrated)
})

test('route runs the target agent off the JS thread; an agent error rejects with AGENT_ERROR and the escalation', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  // A program given as a path is inside the workspace (docs/protocol.md §31).
  fs.cpSync(path.join(ROOT, 'examples/agents'), path.join(root, 'agents'), { recursive: true })
  fs.appendFileSync(path.join(root, '.agentx/config.toml'), [
    '[agents.architect]', 'preset = "claude"', 'command = ["agents/claude"]',
    'env = { AGENT_MODE = "slow", AGENT_SLEEP = "0.3" }',
    '[agents.product-manager]', 'preset = "gemini"', 'command = ["agents/gemini"]',
    'env = { AGENT_MODE = "error" }', '',
  ].join('\n'))
  const asked = await ws.ask({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache layer', question: 'Redis or in-process?' })
  const id = asked.clarification.id

  // The JS thread stays free while the agent runs: timers keep firing.
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 20)
  const routed = await ws.route({ id })
  clearInterval(timer)
  assert.ok(ticks >= 5, `the event loop ran ${ticks} times during a 300 ms agent`)
  assert.equal(routed.outcome, 'answered')
  assert.equal(routed.clarification.status, 'answered')
  assert.equal(routed.clarification.thread[1].body, 'Redis, with LRU eviction and a 15-minute TTL (ADR-7).')
  assert.deepEqual(routed.events.slice(0, 2).map((e) => e.type), ['clarification-routed', 'clarification-answered'])
  assert.equal(routed.run.agent, 'architect')
  assert.ok(fs.existsSync(path.join(root, routed.run.log)))

  const resume = await ws.resumePrompt({ id })
  assert.match(resume.text, /^CLARIFICATION RESPONSE\nClarification: CLR-42-001\n/)
  assert.equal(resume.resume.rounds[0].answer, 'Redis, with LRU eviction and a 15-minute TTL (ADR-7).')

  const failing = await ws.ask({ issueNumber: 42, from: 'engineer', to: 'product-manager', topic: 'Export', question: 'CSV?' })
  const err = await caught(() => ws.route({ id: failing.clarification.id }))
  assert.equal(err.code, 'AGENT_ERROR')
  assert.equal(err.outcome, 'escalated')
  assert.equal(err.clarification.status, 'escalated')
  assert.match(err.clarification.thread.at(-1).body, /^agent error: exit status 41: GEMINI_API_KEY/)
  assert.deepEqual(err.events.slice(0, 3).map((e) => e.type), ['clarification-routed', 'clarification-route-failed', 'clarification-escalated'])

  const none = await caught(() => ws.route({ id: 'CLR-42-001' }))
  assert.equal(none.code, 'INVALID_TRANSITION')
  fs.rmSync(root, { recursive: true, force: true })
})

test('Layer 4 on the store: check, gate, audit and keys, as the CLI gives them', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  for (const agent of ['agent-x', 'engineer', 'architect']) await cli(root, 'keys', 'new', agent)
  const keys = (await ws.keysList()).keys
  assert.deepEqual(keys.map((k) => [k.agent, k.private, k.mismatch]), [['agent-x', true, false], ['architect', true, false], ['engineer', true, false]])
  assert.ok(!JSON.stringify(keys).includes('ed25519-seed:'), 'no private key in JSON')
  const plan = { gaps: [
    { id: 'gap-001', field: 'storage.cache', severity: 'BLOCK', question: 'Redis?', blocked_operations: ['deploy'] },
    { id: 'gap-002', field: 'api.version', severity: 'WARN', question: 'v1 or v2?' },
  ] }
  const first = await ws.check({ issue: 42, from: 'engineer', to: 'architect', plan, now: '2026-11-22T10:00:00Z' })
  assert.equal(first.status, 'needs_clarification')
  assert.match(first.session_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'the store drew a UUID v4')
  assert.deepEqual(first.gaps.map((g) => g.clarificationId), ['CLR-42-001', 'CLR-42-002'])
  const closed = await caught(() => ws.gate({ issue: 42, operation: 'deploy' }))
  assert.equal(closed.code, 'GATE_CLOSED')
  assert.deepEqual(closed.open.map((g) => g.clarificationId), ['CLR-42-001'])
  assert.deepEqual((await ws.gate({ issue: 42, operation: 'build' })).open, [])
  await ws.answer({ id: 'CLR-42-001', from: 'architect', body: 'Redis.', now: '2026-11-22T10:01:00Z' })
  await ws.resolve({ id: 'CLR-42-001', from: 'engineer', now: '2026-11-22T10:02:00Z' })
  const again = await ws.check({ issue: 42, from: 'engineer', to: 'architect', plan: { ...plan, session_id: first.session_id }, now: '2026-11-22T10:03:00Z' })
  assert.equal(again.status, 'ready_to_proceed')
  assert.equal(again.idempotent, true)
  const audit = await ws.audit({ id: 'CLR-42-001' })
  assert.equal(audit.verified, true)
  assert.match(audit.chain[0].ask_signature, /^ed25519:/)
  assert.deepEqual(audit, await cli(root, 'clarify', 'audit', 'CLR-42-001'))
  assert.deepEqual(await ws.gate({ issue: 42, operation: 'deploy' }), await cli(root, 'gate', '--issue', '42', '--operation', 'deploy'))
  // A replaced public key: the audit rejects with SIGNATURE_INVALID and its problems.
  fs.copyFileSync(path.join(root, '.agentx/keys/engineer.pub'), path.join(root, '.agentx/keys/architect.pub'))
  const tampered = await caught(() => ws.audit({ id: 'CLR-42-001' }))
  assert.equal(tampered.code, 'SIGNATURE_INVALID')
  assert.equal(tampered.verified, false)
  assert.ok(tampered.problems.some((p) => p.message.includes('signature by architect')))
  // A bad plan writes nothing.
  const bad = await caught(() => ws.check({ issue: 43, from: 'engineer', to: 'architect', plan: { gaps: [{ id: 'g', field: 'f', severity: 'CRITICAL', question: 'q' }] } }))
  assert.equal(bad.code, 'INVALID_INPUT')
  assert.ok(!fs.existsSync(ledgerPath(root, 43)))
})

test('the change feed reports a CLI write once; ready without the monitor writes nothing', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  assert.equal(ws.changes(), null, 'the first look starts the feed')
  assert.equal(ws.changes(), null)
  await cli(root, 'clarify', 'ask', '--issue=7', '--from=engineer', '--to=architect', '--topic=Cache', '--question=Redis?')
  const changed = ws.changes()
  assert.deepEqual(changed.issues, [7])
  assert.equal(changed.statuses, true)
  assert.ok(changed.revision > 0)
  assert.equal(ws.changes(), null, 'reported once')
  // Long after: the monitor would mark the record stale; the view leaves the ledger alone.
  const before = fs.readFileSync(ledgerPath(root, 7), 'utf8')
  const view = await ws.ready({ monitor: false, includeEscalated: true, now: '2030-01-01T00:00:00Z' })
  assert.deepEqual(view.issues, [{ issueNumber: 7, blocked: [{ id: 'CLR-7-001', waitingOn: 'architect' }] }])
  assert.equal(view.monitor, undefined)
  assert.equal(fs.readFileSync(ledgerPath(root, 7), 'utf8'), before)
  assert.equal(ws.changes(), null, 'the view wrote nothing')
})

test('every name of the operation table is callable from Node; a misspelt field names the nearest', async () => {
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  const operations = native.operations()
  assert.ok(operations.includes('reopen') && operations.includes('routePrompt'), String(operations))
  for (const op of operations) {
    assert.equal(typeof ws[op], 'function', op)
    // With no fields each is refused for its input (a missing `id`…) or runs; never unknown.
    let message = ''
    try { await ws[op]({}) } catch (e) { message = e.message }
    assert.ok(!message.includes('unknown operation'), `${op}: ${message}`)
  }
  for (const name of native.functions()) {
    assert.equal(typeof c[name], 'function', name)
    let message = ''
    try { c[name]({}) } catch (e) { message = e.message }
    assert.ok(!message.includes('unknown operation'), `${name}: ${message}`)
  }
  const misspelt = await caught(() => ws.ask({ issueNumber: 1, from: 'engineer', to: 'architect', topic: 't', question: 'q', blockng: false }))
  assert.equal(misspelt.code, 'INVALID_INPUT')
  assert.equal(misspelt.message, 'invalid input: unknown field `blockng`; did you mean `blocking`?')
})
