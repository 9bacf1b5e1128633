'use strict'
// Every /clarify form, and what unknown input turns into.
require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const { parseClarify, helpMarkdown, ASK_SYNTAX } = require('../out/chat/parse')

test('no argument lists the active clarifications; `all` lists every one', () => {
  assert.deepEqual(parseClarify(''), { kind: 'list', all: false })
  assert.deepEqual(parseClarify('   '), { kind: 'list', all: false })
  assert.deepEqual(parseClarify('list'), { kind: 'list', all: false })
  assert.deepEqual(parseClarify('all'), { kind: 'list', all: true })
  assert.deepEqual(parseClarify('list all'), { kind: 'list', all: true })
  assert.deepEqual(parseClarify('/clarify'), { kind: 'list', all: false }, 'a leading /clarify is tolerated')
  assert.deepEqual(parseClarify('@agentx /clarify #42'), { kind: 'issue', issue: 42 }, 'so is a repeated @agentx')
  assert.deepEqual(parseClarify('@agentx  @agentx stale'), { kind: 'stale' })
})

test('#42, 42 and `issue 42` show the threads of an issue', () => {
  for (const text of ['#42', '42', 'issue 42', 'issue #42', ' #42 ', 'list #42', 'show #42']) {
    assert.deepEqual(parseClarify(text), { kind: 'issue', issue: 42 }, text)
  }
  assert.deepEqual(parseClarify('#0'), { kind: 'issue', issue: 0 })
  assert.equal(parseClarify('#042').kind, 'help', 'padded numbers are not issue numbers')
  assert.equal(parseClarify('#42 extra').kind, 'help')
  assert.match(parseClarify('issue x').problem, /issue number/)
})

test('show <id> (and a bare id) shows one thread; ids are upper-cased', () => {
  assert.deepEqual(parseClarify('show CLR-42-001'), { kind: 'show', id: 'CLR-42-001' })
  assert.deepEqual(parseClarify('show clr-42-001'), { kind: 'show', id: 'CLR-42-001' })
  assert.deepEqual(parseClarify('CLR-42-001'), { kind: 'show', id: 'CLR-42-001' })
  assert.deepEqual(parseClarify('thread CLR-7-1000'), { kind: 'show', id: 'CLR-7-1000' })
  assert.deepEqual(parseClarify('show nonsense'), { kind: 'show', id: 'nonsense' }, 'the core judges ids (INVALID_ID)')
  const missing = parseClarify('show')
  assert.equal(missing.kind, 'help')
  assert.match(missing.problem, /needs a clarification id/)
  assert.equal(parseClarify('show CLR-42-001 more').kind, 'help')
})

test('stale and monitor run the monitor', () => {
  assert.deepEqual(parseClarify('stale'), { kind: 'stale' })
  assert.deepEqual(parseClarify('MONITOR'), { kind: 'stale' })
  assert.equal(parseClarify('stale now').kind, 'help')
})

test('resolve takes typed values (docs/protocol.md §22) before its text; escalate does not', () => {
  assert.deepEqual(parseClarify('resolve CLR-42-001 --value redis'), { kind: 'resolve', id: 'CLR-42-001', values: ['redis'] })
  assert.deepEqual(parseClarify('resolve CLR-42-001 --value eu --value=us Both regions.'), {
    kind: 'resolve',
    id: 'CLR-42-001',
    message: 'Both regions.',
    values: ['eu', 'us'],
  })
  assert.deepEqual(parseClarify('escalate CLR-42-001 --value x'), { kind: 'escalate', id: 'CLR-42-001', message: '--value x' })
})

test('answer takes typed values and/or text; it needs one of them', () => {
  assert.deepEqual(parseClarify('answer CLR-42-002 --value redis'), { kind: 'answer', id: 'CLR-42-002', values: ['redis'] })
  assert.deepEqual(parseClarify('answer clr-42-002 90 days, per the DPA.'), { kind: 'answer', id: 'CLR-42-002', message: '90 days, per the DPA.' })
  assert.deepEqual(parseClarify('answer CLR-42-002 --value eu --value us Both.'), { kind: 'answer', id: 'CLR-42-002', message: 'Both.', values: ['eu', 'us'] })
  assert.match(parseClarify('answer CLR-42-002').problem, /`answer` needs the answer/)
  assert.match(parseClarify('answer').problem, /needs a clarification id/)
})

test('resolve and escalate take an id and an optional text', () => {
  assert.deepEqual(parseClarify('resolve CLR-42-001'), { kind: 'resolve', id: 'CLR-42-001' })
  assert.deepEqual(parseClarify('resolve CLR-42-001 Redis it is, TTL 24h.'), {
    kind: 'resolve',
    id: 'CLR-42-001',
    message: 'Redis it is, TTL 24h.',
  })
  assert.deepEqual(parseClarify('resolve CLR-42-001 "quoted decision"'), { kind: 'resolve', id: 'CLR-42-001', message: 'quoted decision' })
  assert.deepEqual(parseClarify('resolve CLR-42-001 "a" and "b"'), { kind: 'resolve', id: 'CLR-42-001', message: '"a" and "b"' })
  assert.deepEqual(parseClarify('escalate clr-43-001   nobody answers\nfor days'), {
    kind: 'escalate',
    id: 'CLR-43-001',
    message: 'nobody answers\nfor days',
  })
  assert.deepEqual(parseClarify('Escalate CLR-43-001'), { kind: 'escalate', id: 'CLR-43-001' })
  for (const word of ['resolve', 'escalate']) {
    const c = parseClarify(word)
    assert.equal(c.kind, 'help')
    assert.match(c.problem, new RegExp(`\`${word}\` needs a clarification id`))
  }
})

test('ask: #issue from -> to "Topic" question, with options', () => {
  assert.deepEqual(parseClarify('ask #42 engineer -> architect "Cache layer" Redis or in-process?'), {
    kind: 'ask',
    issueNumber: 42,
    from: 'engineer',
    to: 'architect',
    topic: 'Cache layer',
    question: 'Redis or in-process?',
    blocking: true,
  })
  assert.deepEqual(parseClarify('ask 7 product-manager->architect “Data model” Which one?\nSecond line.'), {
    kind: 'ask',
    issueNumber: 7,
    from: 'product-manager',
    to: 'architect',
    topic: 'Data model',
    question: 'Which one?\nSecond line.',
    blocking: true,
  })
  assert.deepEqual(parseClarify("ask #9 engineer → architect --non-blocking --workflow bug --step fix 'Flaky test' Is it the clock?"), {
    kind: 'ask',
    issueNumber: 9,
    from: 'engineer',
    to: 'architect',
    topic: 'Flaky test',
    question: 'Is it the clock?',
    blocking: false,
    workflow: 'bug',
    step: 'fix',
  })
  // The core validates names and lengths; the parser passes them through.
  assert.equal(parseClarify('ask #1 Engineer -> architect "T" Q').from, 'Engineer')
})

test('ask problems name what is missing and show the syntax', () => {
  const cases = [
    ['ask', /needs an issue/],
    ['ask #42 engineer architect "T" Q', /needs an issue, the asking agent/],
    ['ask #x engineer -> architect "T" Q', /not an issue number/],
    ['ask #42 engineer -> architect Topic Q', /topic in quotes/],
    ['ask #42 engineer -> architect "Topic Q', /no closing quote/],
    ['ask #42 engineer -> architect "Topic"', /question is missing/],
    ['ask #42 engineer -> architect --workflow', /needs a value/],
  ]
  for (const [text, problem] of cases) {
    const c = parseClarify(text)
    assert.equal(c.kind, 'help', text)
    assert.match(c.problem, problem, text)
    assert.ok(c.problem.includes(ASK_SYNTAX), text)
  }
})

test('help, and unknown input becomes help naming the input', () => {
  assert.deepEqual(parseClarify('help'), { kind: 'help' })
  assert.deepEqual(parseClarify('?'), { kind: 'help' })
  const unknown = parseClarify('frobnicate the `ledger`')
  assert.equal(unknown.kind, 'help')
  assert.match(unknown.problem, /I did not understand `frobnicate the 'ledger'`/)
  assert.ok(parseClarify('x'.repeat(500)).problem.length < 200, 'long input is cut')
})

test('the help text documents every form', () => {
  const text = helpMarkdown()
  for (const form of ['`/clarify`', '`/clarify #42`', '`/clarify show CLR-42-001`', '`/clarify stale`', '`/clarify answer CLR-42-001 [--value V] [text]`', '`/clarify resolve CLR-42-001 [--value V] [text]`', '`/clarify escalate CLR-42-001 [text]`', ASK_SYNTAX, '`/clarify help`']) {
    assert.ok(text.includes(form), form)
  }
  assert.ok(helpMarkdown('Oops.').startsWith('Oops.\n'))
  assert.match(helpMarkdown(undefined, true), /Read-only: the native addon did not load/)
})

test('route <id>, ask … --route (before the topic or closing the line) and ingest', () => {
  assert.deepEqual(parseClarify('route clr-42-001'), { kind: 'route', id: 'CLR-42-001' })
  assert.match(parseClarify('route').problem, /`route` needs one clarification id/)
  assert.equal(parseClarify('route CLR-42-001 now').kind, 'help')
  const base = { kind: 'ask', issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache', question: 'Redis?', blocking: true }
  assert.deepEqual(parseClarify('ask #42 engineer -> architect --route "Cache" Redis?'), { ...base, route: true })
  assert.deepEqual(parseClarify('ask #42 engineer -> architect "Cache" Redis? --route'), { ...base, route: true })
  assert.deepEqual(parseClarify('ask #42 engineer -> architect "Cache" Redis?'), base, 'no --route: not routed')
  assert.deepEqual(parseClarify('ask #42 engineer -> architect "Cache" Is --route a flag here?'), { ...base, question: 'Is --route a flag here?' })
  assert.deepEqual(parseClarify('ingest #42 engineer'), { kind: 'ingest', issue: 42, agent: 'engineer' })
  assert.deepEqual(parseClarify('ingest 7 engineer --parent agent-x'), { kind: 'ingest', issue: 7, agent: 'engineer', parent: 'agent-x' })
  for (const bad of ['ingest', 'ingest #42', 'ingest x engineer', 'ingest #42 engineer --parent']) {
    assert.match(parseClarify(bad).problem ?? '', /`ingest` needs the issue and the agent/, bad)
  }
  const help = helpMarkdown()
  assert.match(help, /`\/clarify route CLR-42-001`/)
  assert.match(help, /`\/clarify ingest #42 engineer \[--parent agent-x\]`/)
})
