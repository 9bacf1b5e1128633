'use strict'
// The Agents tree (an icon per docs/protocol.md §5 status, what each agent waits on or answers) and the
// Ready queue (issues with ledgers, the blocked badge and tooltip), over real workspaces.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const { makeWorkspace, NATIVE, WASM, native } = require('./support/fixtures')
const { loadBackend, ReadyReader } = require('../out/backend')
const { EventBus } = require('../out/events')
const { AgentsTree, AgentItem, STATUS_LOOK } = require('../out/trees/agents')
const { ReadyTree, IssueItem, ClarificationItem, BLOCKED_BADGE, issueUri } = require('../out/trees/ready')

const status = (s, extra = {}) => ({ status: s, issue: null, lastActivity: '2026-11-22T10:00:00.000Z', clarificationId: null, waitingOn: null, respondingTo: null, ...extra })

test('agent items: an icon and colour for every status', () => {
  const expected = {
    idle: ['circle-large-outline', undefined],
    working: ['tools', 'charts.blue'],
    clarifying: ['sync~spin', 'charts.yellow'],
    'blocked-clarification': ['warning', 'list.warningForeground'],
    done: ['pass', 'testing.iconPassed'],
    stuck: ['error', 'list.errorForeground'],
  }
  assert.deepEqual(Object.keys(STATUS_LOOK).sort(), Object.keys(expected).sort())
  for (const [s, [icon, color]] of Object.entries(expected)) {
    const item = new AgentItem('someone', status(s))
    assert.ok(item instanceof vscode.TreeItem)
    assert.ok(item.iconPath instanceof vscode.ThemeIcon, s)
    assert.equal(item.iconPath.id, icon, s)
    assert.equal(item.iconPath.color?.id, color, s)
    assert.equal(item.contextValue, `agent.${s}`)
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.None)
  }
  const odd = new AgentItem('x', status('sleeping'))
  assert.equal(odd.iconPath.id, 'question')
  assert.equal(odd.description, 'sleeping')
})

test('agent items: clarifying names whom it answers, blocked names whom it waits on', () => {
  const blocked = new AgentItem('engineer', status('blocked-clarification', { issue: 42, clarificationId: 'CLR-42-002', waitingOn: 'product-manager' }))
  assert.equal(blocked.label, 'engineer')
  assert.equal(blocked.description, 'blocked · waiting on product-manager · CLR-42-002 · #42')
  assert.deepEqual(blocked.accessibilityInformation, { label: 'engineer blocked · waiting on product-manager · CLR-42-002 · #42', role: 'treeitem' })
  assert.deepEqual(blocked.command, { command: 'agentx.showClarification', title: 'Show Clarification Thread', arguments: ['CLR-42-002'] })
  assert.ok(blocked.tooltip instanceof vscode.MarkdownString)
  assert.match(blocked.tooltip.value, /\*\*engineer\*\*: blocked\\-clarification/)
  assert.match(blocked.tooltip.value, /- waiting on: product\\-manager/)
  const answering = new AgentItem('architect', status('clarifying', { clarificationId: 'CLR-42-001', respondingTo: 'engineer' }))
  assert.equal(answering.description, 'clarifying · answering engineer · CLR-42-001')
  assert.match(answering.tooltip.value, /- answering: engineer/)
  const idle = new AgentItem('reviewer', status('idle'))
  assert.equal(idle.description, 'idle')
  assert.equal(idle.command, undefined)
})

test('the Agents tree lists every agent of agent-status.json, by name', async () => {
  const { root } = await makeWorkspace()
  const backend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
  const tree = new AgentsTree(() => backend, new EventBus())
  const items = await tree.getChildren()
  const rows = Object.fromEntries(items.map((i) => [i.label, [i.iconPath.id, i.description]]))
  assert.deepEqual(rows, {
    architect: ['sync~spin', 'clarifying · answering engineer · CLR-44-001'],
    devops: ['pass', 'done · #41'],
    engineer: ['warning', 'blocked · waiting on architect · CLR-44-001'],
    'product-manager': ['sync~spin', 'clarifying · answering architect · CLR-43-001'],
    reviewer: ['circle-large-outline', 'idle'],
    tester: ['tools', 'working · #42'],
    'ux-designer': ['error', 'stuck · #45'],
  })
  assert.deepEqual(await tree.getChildren(items[0]), [], 'agents have no children')
  assert.equal(tree.getTreeItem(items[0]), items[0])
})

test('the Ready queue: one row per issue with a ledger, a blocked badge and a tooltip', async () => {
  const { root } = await makeWorkspace()
  const backend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
  // An escalated blocking record holds its issue: the requester waits on a human until one
  // resolves it.
  const before = await new ReadyTree(() => backend, new EventBus()).getChildren()
  assert.equal(before[2].description, 'BLOCKED: CLR-44-001 waiting on human')
  assert.equal(before[2].tooltip.value, '**Issue #44 is blocked**\n\n- CLR-44-001 is waiting on human\n')
  await new (require('../../bindings-node/clarify.js').Workspace)(root).resolve({ id: 'CLR-44-001', message: 'v2 schema' })
  const tree = new ReadyTree(() => backend, new EventBus())
  const loaded = []
  tree.onDidLoad((issues) => loaded.push(issues))
  const redecorated = []
  tree.onDidChangeFileDecorations((uris) => redecorated.push(uris.map((u) => u.toString())))
  const issues = await tree.getChildren()
  assert.deepEqual(issues.map((i) => [i.label, i.description, i.iconPath.id, i.contextValue]), [
    ['#42', 'BLOCKED: CLR-42-002 waiting on product-manager', 'circle-slash', 'issue.blocked'],
    ['#43', 'BLOCKED: CLR-43-001 waiting on product-manager', 'circle-slash', 'issue.blocked'],
    ['#44', 'ready', 'pass', 'issue.ready'],
  ])
  assert.deepEqual(issues.map((i) => i.accessibilityInformation.label), [
    '#42 BLOCKED: CLR-42-002 waiting on product-manager',
    '#43 BLOCKED: CLR-43-001 waiting on product-manager',
    '#44 ready',
  ], 'screen readers (and the e2e test) read the row as shown')
  assert.equal(loaded.length, 1)
  assert.deepEqual(redecorated, [['agentx-ready:/issue/42', 'agentx-ready:/issue/43']], 'the badges that appeared')
  await tree.getChildren()
  assert.equal(redecorated.length, 1, 'a re-read with the same badges redraws none')
  const [i42, , i44] = issues
  assert.ok(i42.tooltip instanceof vscode.MarkdownString)
  assert.equal(i42.tooltip.value, '**Issue #42 is blocked**\n\n- CLR-42-002 is waiting on product-manager\n')
  assert.match(i44.tooltip, /ready: no blocking clarification is waiting/)
  // The badge: a file decoration on the row's resource URI.
  assert.equal(i42.resourceUri.toString(), issueUri(42).toString())
  const badge = tree.provideFileDecoration(i42.resourceUri)
  assert.ok(badge instanceof vscode.FileDecoration)
  assert.equal(badge.badge, BLOCKED_BADGE)
  assert.equal(badge.tooltip, 'blocked: CLR-42-002 is waiting on product-manager')
  assert.equal(badge.color.id, 'list.errorForeground')
  assert.equal(tree.provideFileDecoration(i44.resourceUri), undefined)
  assert.equal(tree.provideFileDecoration(vscode.Uri.file('/x')), undefined)
  // Children: the issue's clarifications, with their status icons and inline actions.
  const children = await tree.getChildren(i42)
  assert.deepEqual(children.map((c) => [c.label, c.iconPath.id, c.contextValue, c.description]), [
    ['CLR-42-001', 'comment', 'clarification.answered', 'engineer -> architect · answered · Cache layer'],
    ['CLR-42-002', 'clock', 'clarification.pending', 'engineer -> product-manager · pending · Retention'],
  ])
  assert.deepEqual(children[0].command.arguments, ['CLR-42-001'])
  assert.deepEqual(await tree.getChildren(children[0]), [])
  await new native.Workspace(root).answer({ id: 'CLR-42-002', from: 'product-manager', body: 'Thirty days.' })
  const after = await tree.getChildren()
  assert.equal(after[0].description, 'ready')
  assert.deepEqual(redecorated.at(-1), ['agentx-ready:/issue/42'], 'only the badge that went away')
  assert.equal(tree.provideFileDecoration(issueUri(42)), undefined)
  assert.equal(tree.provideFileDecoration(issueUri(43)).badge, BLOCKED_BADGE)
})

test('(+k more) when an issue waits on several records; the tooltip names each', () => {
  const item = new IssueItem({ issueNumber: 45, blocked: [{ id: 'CLR-45-001', waitingOn: 'ux-designer' }, { id: 'CLR-45-002', waitingOn: 'engineer' }] })
  assert.equal(item.description, 'BLOCKED: CLR-45-001 waiting on ux-designer (+1 more)')
  assert.match(item.tooltip.value, /CLR-45-001 is waiting on ux-designer\n- CLR-45-002 is waiting on engineer/)
  const record = new ClarificationItem({ id: 'CLR-45-003', issueNumber: 45, from: 'engineer', to: 'architect', topic: 'T', status: 'escalated', blocking: true, round: 1, maxRounds: 5, thread: [] })
  assert.equal(record.iconPath.id, 'flame')
})

test('both trees refresh on bus events and file changes', async () => {
  const bus = new EventBus()
  const agents = new AgentsTree(() => undefined, bus)
  const ready = new ReadyTree(() => undefined, bus)
  let a = 0
  let r = 0
  agents.onDidChangeTreeData(() => a++)
  ready.onDidChangeTreeData(() => r++)
  bus.publish([{ type: 'clarification-requested' }])
  bus.filesChanged(['/x/.agentx/state/agent-status.json'])
  bus.refresh()
  assert.deepEqual([a, r], [3, 3])
  assert.deepEqual(await agents.getChildren(), [], 'no backend: empty trees')
  assert.deepEqual(await ready.getChildren(), [])
  agents.dispose()
  ready.dispose()
  bus.publish([])
  assert.deepEqual([a, r], [3, 3], 'disposed trees no longer listen')
})

test('the ready queue is read again only when a ledger file changed, appeared or went', async () => {
  const { root, ws } = await makeWorkspace()
  let reads = 0
  const counting = { ready: (input) => (reads++, native.ready(input)) }
  const reader = new ReadyReader(counting, root)
  const first = reader.read()
  assert.deepEqual(reader.read(), first)
  assert.equal(reads, 1, 'unchanged files: the last answer stands')
  assert.deepEqual(first.find((i) => i.issueNumber === 44).blocked, [{ id: 'CLR-44-001', waitingOn: 'human' }])

  await ws.answer({ id: 'CLR-42-002', from: 'product-manager', body: 'Thirty days.' })
  assert.deepEqual(reader.read().find((i) => i.issueNumber === 42).blocked, [])
  assert.equal(reads, 2, 'a ledger rewritten')

  await ws.ask({ issueNumber: 46, from: 'engineer', to: 'architect', topic: 'Queue', question: 'Kafka?' })
  assert.deepEqual(reader.read().find((i) => i.issueNumber === 46).blocked, [{ id: 'CLR-46-001', waitingOn: 'architect' }])
  assert.equal(reads, 3, 'a new ledger')

  const fs = require('node:fs')
  const path = require('node:path')
  fs.rmSync(path.join(root, '.agentx', 'state', 'clarifications', 'issue-46.json'))
  assert.equal(reader.read().some((i) => i.issueNumber === 46), false)
  assert.equal(reads, 4, 'a ledger removed')
  reader.read()
  assert.equal(reads, 4)
})
