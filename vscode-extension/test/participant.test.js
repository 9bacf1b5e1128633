'use strict'
// Every /clarify form against a real workspace on disk, through the native store: the
// markdown the chat shows, the follow-ups it offers, the events it publishes, what it writes.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const { makeWorkspace, readLedger, snapshot, NATIVE, WASM, native } = require('./support/fixtures')
const { loadBackend } = require('../out/backend')
const { EventBus } = require('../out/events')
const { runClarify, followUps, errorMarkdown, escapeMarkdown } = require('../out/chat/participant')

async function setup() {
  const { root, ws } = await makeWorkspace()
  const backend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
  assert.equal(backend.kind, 'native')
  const bus = new EventBus()
  const events = []
  bus.onEvents((list) => events.push(...list))
  const chat = async (prompt) => {
    const stream = new vscode.ChatResponseStream()
    const metadata = await runClarify(prompt, { backend: () => backend, bus }, stream)
    return { text: stream.text, metadata, followups: followUps(metadata) }
  }
  return { root, ws, backend, bus, events, chat }
}

const prompts = (followups) => followups.map((f) => f.prompt)

test('/clarify: the active list, rendered by the core, with follow-ups', async () => {
  const { chat, backend, root } = await setup()
  const { text, followups, metadata } = await chat('')
  const expected = backend.render({ view: 'list', clarifications: (await new native.Workspace(root).list({})).clarifications })
  assert.ok(text.includes(expected), 'the core renderer output is shown unchanged')
  assert.match(text, /\| CLR-42-001 \| #42 \| engineer -> architect \| Cache layer \| answered \|/)
  assert.match(text, /CLR-44-001 .* escalated/)
  assert.equal(metadata.records.length, 4)
  assert.deepEqual(prompts(followups), ['show CLR-42-001', 'show CLR-42-002', 'resolve CLR-42-001', 'stale'])
  assert.ok(followups.every((f) => f.command === 'clarify' && f.label))
})

test('/clarify all includes terminal records; an empty workspace says so', async () => {
  const { chat, ws } = await setup()
  await ws.resolve({ id: 'CLR-42-001', message: 'Redis.' })
  assert.doesNotMatch((await chat('')).text, /CLR-42-001/)
  assert.match((await chat('all')).text, /CLR-42-001 .* resolved/)
  const empty = await makeEmpty()
  assert.match((await empty('')).text, /No open clarifications/)
  assert.match((await empty('all')).text, /No clarifications yet/)
})

async function makeEmpty() {
  const { tempDir } = require('./support/fixtures')
  const root = tempDir()
  await new native.Workspace(root).init()
  const backend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
  return async (prompt) => {
    const stream = new vscode.ChatResponseStream()
    await runClarify(prompt, { backend: () => backend, bus: new EventBus() }, stream)
    return { text: stream.text }
  }
}

test('/clarify #42: every thread of the issue, round by round', async () => {
  const { chat } = await setup()
  const { text, followups, metadata } = await chat('#42')
  assert.match(text, /^\*\*Issue #42\*\*: 2 clarifications/)
  assert.match(text, /\*\*\[engineer -> architect\]\*\* Clarification: \*Cache layer\*/)
  assert.match(text, /> Round 1\/3 \| CLR-42-001 \| blocking/)
  assert.match(text, /\*\*\[architect\] Answer:\*\*\nRedis, see ADR-7\./)
  assert.match(text, /\*\*\[engineer -> product-manager\]\*\* Clarification: \*Retention\*/)
  assert.match(text, /\n---\n/, 'threads are separated')
  assert.equal(metadata.issue, 42)
  assert.deepEqual(prompts(followups), ['resolve CLR-42-001', 'show CLR-42-001', 'show CLR-42-002', 'stale'])
})

test('/clarify #99 on an issue without a ledger is a clear NOT_FOUND', async () => {
  const { chat } = await setup()
  const { text, metadata } = await chat('#99')
  assert.match(text, /^\*\*Not found\*\* `NOT_FOUND`: issue \\#99 has no clarifications/)
  assert.doesNotMatch(text, /at .*\.js/, 'no stack trace')
  assert.equal(metadata.command, 'error')
})

test('/clarify show <id>: one thread; follow-ups resolve or escalate and show the issue', async () => {
  const { chat } = await setup()
  let r = await chat('show CLR-42-001')
  assert.match(r.text, /^\*\*CLR-42-001\*\* · issue #42 · answered · round 1\/3/)
  assert.deepEqual(prompts(r.followups), ['resolve CLR-42-001', '#42', 'stale'])
  r = await chat('clr-42-002')
  assert.match(r.text, /\*\*CLR-42-002\*\* · issue #42 · pending/)
  assert.deepEqual(prompts(r.followups), ['escalate CLR-42-002', '#42', 'stale'])
  r = await chat('show CLR-44-001')
  assert.match(r.text, /\*\*\[ESCALATED\]\*\* by human/)
  assert.deepEqual(prompts(r.followups), ['resolve CLR-44-001', '#44', 'stale'])
  r = await chat('show CLR-42-999')
  assert.match(r.text, /\*\*Not found\*\* `NOT_FOUND`: clarification CLR-42-999 not found/)
  r = await chat('show banana')
  assert.match(r.text, /\*\*Invalid input\*\* `INVALID_ID`: invalid clarification id 'banana'/)
})

test('/clarify stale: runs the monitor, shows its report and publishes its events', async () => {
  const { chat, ws, events, root } = await setup()
  // A record asked two hours ago is past its 60-minute SLA.
  await ws.ask({ issueNumber: 50, from: 'engineer', to: 'architect', topic: 'Old question', question: 'Still there?', now: Date.now() - 2 * 3600_000 })
  const r = await chat('stale')
  assert.match(r.text, /\*\*Monitor report:\*\* 1 stale, 1 retried, 0 escalated/)
  assert.match(r.text, /\*\*Stale:\*\* CLR-50-001/)
  assert.deepEqual(events.map((e) => [e.type, e.clarificationId]), [['clarification-stale', 'CLR-50-001']])
  assert.deepEqual(readLedger(root, 50).clarifications[0].thread.map((e) => e.type), ['question', 'stale', 'retry'])
  assert.deepEqual(prompts(r.followups), [''], 'nothing escalated: back to the list')
  const again = await chat('stale')
  assert.match(again.text, /Nothing is stale, stuck, deadlocked or abandoned/)
})

test('/clarify resolve <id> [text]: writes the resolution, publishes the event, shows the thread', async () => {
  const { chat, events, root } = await setup()
  const r = await chat('resolve CLR-42-001 Redis, allkeys-lru, 24h TTL.')
  assert.match(r.text, /^Resolved: \*\*CLR-42-001\*\* \(issue #42\)\./)
  assert.match(r.text, /\*\*\[engineer\] Resolved:\*\* Redis, allkeys-lru, 24h TTL\./)
  const record = readLedger(root, 42).clarifications[0]
  assert.equal(record.status, 'resolved')
  assert.deepEqual(record.thread.at(-1).body, 'Redis, allkeys-lru, 24h TTL.')
  assert.deepEqual(events.map((e) => [e.type, e.clarificationId, e.actor]), [['clarification-resolved', 'CLR-42-001', 'engineer']])
  assert.deepEqual(prompts(r.followups), ['show CLR-42-001', '#42', ''])
  // The escalated one is resolved by a human, who must say what was decided (§30).
  const bare = await chat('resolve CLR-44-001')
  assert.match(bare.text, /a decision is needed/)
  const human = await chat('resolve CLR-44-001 Use Redis.')
  assert.match(human.text, /\*\*\[human\] Resolved:\*\* Use Redis\./)
})

test('/clarify answer <id> --value: answers a choice question as its target with the option; a value outside the options writes nothing', async () => {
  const { chat, ws, events, root } = await setup()
  await ws.ask({
    issueNumber: 46, from: 'engineer', to: 'architect', topic: 'Cache store', question: 'Which cache?',
    answerKind: 'choice', options: [{ value: 'redis', label: 'Redis' }, { value: 'lru', label: 'In-process LRU' }], allowOther: false,
  })
  const shown = await chat('show CLR-46-001')
  assert.match(shown.text, /Redis/)
  assert.match(shown.text, /In-process LRU/)
  const before = snapshot(root)
  const bad = await chat('answer CLR-46-001 --value memcached')
  assert.match(bad.text, /INVALID_ANSWER/)
  assert.match(bad.text, /redis/)
  assert.deepEqual(snapshot(root), before)
  const r = await chat('answer CLR-46-001 --value redis See ADR-7.')
  assert.match(r.text, /^Answered: \*\*CLR-46-001\*\* \(issue #46\) as architect\./)
  const record = readLedger(root, 46).clarifications[0]
  assert.equal(record.status, 'answered')
  assert.equal(record.thread.at(-1).from, 'architect')
  assert.equal(record.thread.at(-1).value, 'redis')
  assert.deepEqual(events.map((e) => [e.type, e.clarificationId]), [['clarification-answered', 'CLR-46-001']])
  assert.deepEqual(prompts(r.followups), ['show CLR-46-001', '#46', ''])
  // The requester then resolves with a value too.
  const resolved = await chat('resolve CLR-46-001 --value redis')
  assert.match(resolved.text, /^Resolved: \*\*CLR-46-001\*\*/)
  assert.equal(readLedger(root, 46).clarifications[0].thread.at(-1).value, 'redis')
})

test('/clarify resolve on a pending record explains the transition, writes nothing', async () => {
  const { chat, root } = await setup()
  const before = snapshot(root)
  const r = await chat('resolve CLR-42-002 done')
  assert.match(r.text, /^\*\*Not possible now\*\* `INVALID_TRANSITION`: cannot resolve CLR-42-002: it is pending; allowed: answer, abandon, escalate/)
  assert.match(r.text, /\/clarify show <id>/)
  assert.deepEqual(snapshot(root), before)
})

test('/clarify escalate <id> [text]: the escalation block with the reason', async () => {
  const { chat, events, root } = await setup()
  const r = await chat('escalate CLR-43-001 nobody owns export')
  assert.match(r.text, /^Escalated: \*\*CLR-43-001\*\* \(issue #43\)\./)
  assert.match(r.text, /> \*\*\[ESCALATED\]\*\* CLR-43-001/)
  assert.match(r.text, /\*\*Reason:\*\* nobody owns export/)
  assert.equal(readLedger(root, 43).clarifications[0].status, 'escalated')
  assert.equal(events[0].type, 'clarification-escalated')
  assert.equal(events[0].reason, 'nobody owns export')
})

test('/clarify ask: creates the record through the store and shows it', async () => {
  const { chat, events, root } = await setup()
  const r = await chat('ask #45 engineer -> architect "Queue choice" Kafka or SQS for the outbox?')
  assert.match(r.text, /^Asked \*\*CLR-45-001\*\* on issue #45: engineer waits on architect \(blocking\)\./)
  assert.match(r.text, /Kafka or SQS for the outbox\?/)
  const record = readLedger(root, 45).clarifications[0]
  assert.deepEqual([record.from, record.to, record.topic, record.blocking, record.maxRounds], ['engineer', 'architect', 'Queue choice', true, 3])
  assert.deepEqual(events.map((e) => e.type), ['clarification-requested'])
  assert.deepEqual(prompts(r.followups), ['show CLR-45-001', '#45', ''])
  const statuses = JSON.parse(require('node:fs').readFileSync(`${root}/.agentx/state/agent-status.json`, 'utf8'))
  assert.equal(statuses.engineer.status, 'blocked-clarification')
  assert.equal(statuses.architect.status, 'clarifying')
})

test('/clarify ask refused by scope: a clear markdown message with the code, nothing written', async () => {
  const { chat, events, root } = await setup()
  const before = snapshot(root)
  const r = await chat('ask #46 engineer -> reviewer "Review checklist" Which checklist applies?')
  assert.equal(
    r.text,
    "**Refused** `SCOPE_VIOLATION`: agent 'engineer' cannot clarify with 'reviewer'; allowed: \\[architect, product-manager\\]\n\n" +
      "The workflow decides who may ask whom: see `can_clarify` of the asking agent's step in `.agentx/workflows/`. Nothing was written.",
  )
  assert.deepEqual(snapshot(root), before)
  assert.deepEqual(events, [])
  assert.equal(r.metadata.command, 'error')
  assert.deepEqual(prompts(r.followups), ['', 'stale'])
})

test('/clarify ask: other refusals and invalid input', async () => {
  const { chat } = await setup()
  let r = await chat('ask #46 engineer -> architect --workflow bug "Flaky" Is it the clock?')
  assert.match(r.text, /^\*\*Refused\*\* `BLOCKING_NOT_ALLOWED`: .*\n\nThis step does not allow blocking requests: ask again with `--non-blocking`/)
  r = await chat('ask #46 engineer -> architect --non-blocking --workflow bug "Flaky" Is it the clock?')
  assert.match(r.text, /^Asked \*\*CLR-46-001\*\* on issue #46: engineer waits on architect\./)
  r = await chat('ask #47 engineer -> engineer "Self" Me?')
  assert.match(r.text, /^\*\*Invalid input\*\* `SELF_CLARIFICATION`/)
  r = await chat('ask #47 Engineer -> architect "T" Q?')
  assert.match(r.text, /^\*\*Invalid input\*\* `INVALID_AGENT`: .*Engineer/)
  r = await chat(`ask #47 engineer -> architect "${'t'.repeat(201)}" Q?`)
  assert.match(r.text, /^\*\*Invalid input\*\* `TEXT_TOO_LONG`/)
  r = await chat('ask #47 engineer -> human "T" Q?')
  assert.match(r.text, /`INVALID_AGENT`/)
})

test('help and unknown input: the help text, never a stack trace', async () => {
  const { chat } = await setup()
  const help = await chat('help')
  assert.match(help.text, /^\*\*`@agentx \/clarify`\*\*/)
  assert.deepEqual(prompts(help.followups), ['', 'stale'])
  const unknown = await chat('please do the thing')
  assert.match(unknown.text, /^I did not understand `please do the thing`\.\n\n\*\*`@agentx \/clarify`\*\*/)
  assert.doesNotMatch(unknown.text, /Error|at Object/)
})

test('without a backend the participant says why instead of failing', async () => {
  const stream = new vscode.ChatResponseStream()
  const meta = await runClarify('', { backend: () => undefined, bus: new EventBus(), unavailable: () => 'open a folder [now]' }, stream)
  assert.equal(stream.text, '**AgentX Clarify is not available:** open a folder \\[now\\]')
  assert.equal(meta.command, 'error')
})

test('errors: codes are titled by the class the core gives them; unexpected errors show one line, no stack', async () => {
  const { backend } = await setup()
  const md = (e) => errorMarkdown(e, backend)
  const err = (code, message) => Object.assign(new Error(message), { code })
  assert.match(md(err('NOT_PARTICIPANT', 'x')), /^\*\*Refused\*\* `NOT_PARTICIPANT`: x\n\nOnly the agents/)
  assert.match(md(err('TEXT_EMPTY', 'topic is empty')), /^\*\*Invalid input\*\* `TEXT_EMPTY`: topic is empty/)
  assert.match(md(err('NOT_FOUND', 'gone')), /^\*\*Not found\*\* `NOT_FOUND`: gone\n\nList the open ones/)
  assert.match(md(err('INVALID_TRANSITION', 'it is resolved')), /^\*\*Not possible now\*\* `INVALID_TRANSITION`/)
  assert.match(md(err('LOCK_TIMEOUT', 'held')), /^\*\*Failed\*\* `LOCK_TIMEOUT`: held\n\nAnother process/)
  assert.match(md(err('LEDGER_CORRUPT', 'bad json')), /agentx clarify verify/)
  assert.match(md(err('READ_ONLY', 'editing needs the native addon')), /^\*\*Read-only\*\* `READ_ONLY`: editing needs the native addon/)
  // The classes come from the core: the wasm fallback gives the same titles.
  const wasm = loadBackend(backend.root, { native: [], wasm: [WASM] })
  assert.equal(wasm.kind, 'wasm')
  assert.equal(errorMarkdown(err('SCOPE_VIOLATION', 'no'), wasm), md(err('SCOPE_VIOLATION', 'no')))
  assert.match(md(err('SCOPE_VIOLATION', 'no')), /^\*\*Refused\*\*/)
  const boom = new TypeError('boom\n    at somewhere (file.js:1:1)')
  assert.equal(md(boom), '**Something went wrong:** boom')
  assert.equal(md('plain'), '**Something went wrong:** plain')
  assert.equal(escapeMarkdown('a *b* [c](d) `e` <f>'), 'a \\*b\\* \\[c\\]\\(d\\) \\`e\\` \\<f\\>')
})

test('an error that wrote anyway (MAX_ROUNDS_EXCEEDED) publishes its events and shows the record', async () => {
  const { backend, root } = await setup()
  const bus = new EventBus()
  const seen = []
  bus.onEvents((e) => seen.push(...e))
  const ws = new native.Workspace(root)
  // Use up the rounds of CLR-42-001 (max 3): follow-up/answer twice, then a third follow-up.
  await ws.followUp({ id: 'CLR-42-001', from: 'engineer', question: 'TTL?' })
  await ws.answer({ id: 'CLR-42-001', from: 'architect', body: '24h.' })
  await ws.followUp({ id: 'CLR-42-001', from: 'engineer', question: 'Eviction policy?' })
  await ws.answer({ id: 'CLR-42-001', from: 'architect', body: 'allkeys-lru.' })
  let thrown
  try {
    await ws.followUp({ id: 'CLR-42-001', from: 'engineer', question: 'One more?' })
  } catch (e) {
    thrown = e
  }
  assert.equal(thrown.code, 'MAX_ROUNDS_EXCEEDED')
  const failing = { ...backend, kind: 'native', canEdit: true, root, render: (i) => backend.render(i), transitions: () => backend.transitions(), errorClass: (code) => backend.errorClass(code), resolve: () => Promise.reject(thrown) }
  const stream = new vscode.ChatResponseStream()
  const meta = await runClarify('resolve CLR-42-001', { backend: () => failing, bus }, stream)
  assert.match(stream.text, /^\*\*Refused\*\* `MAX_ROUNDS_EXCEEDED`: /)
  assert.match(stream.text, /\*\*CLR-42-001\*\* · issue #42 · escalated/)
  assert.deepEqual(seen.map((e) => e.type), ['clarification-escalated'])
  assert.deepEqual(meta.records, [{ id: 'CLR-42-001', issueNumber: 42, status: 'escalated', admits: ['resolve', 'abandon'] }])
})
