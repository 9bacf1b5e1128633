'use strict'
// The extension as VS Code activates it (against the stand-in): what it registers, the status
// bar, and refreshes driven by the event bus and by the file watcher when another process
// (the CLI, or a Node script) changes the state on disk.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { ext, makeWorkspace, readLedger, waitFor, tempDir, NATIVE, WASM, CLI, native } = require('./support/fixtures')
const { activate } = require('../out/extension')

const run = promisify(execFile)
const { testing } = vscode

/** Another process changes the workspace: the CLI when built, else a Node script on the binding. */
async function otherProcess(root, args, script) {
  if (fs.existsSync(CLI)) return run(CLI, ['--root', root, ...args])
  return run(process.execPath, ['-e', `const c = require(${JSON.stringify(NATIVE)}); (async () => { const ws = new c.Workspace(${JSON.stringify(root)}); ${script} })().catch((e) => { console.error(e); process.exit(1) })`])
}

async function start(root, settings = {}) {
  testing.reset()
  Object.assign(testing.settings, settings)
  testing.settings['agentx.monitorOnChange'] ??= false
  if (root) vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: path.basename(root), index: 0 }]
  const context = vscode.extensionContext(ext)
  const api = activate(context, { native: [NATIVE], wasm: [WASM] })
  const stop = () => {
    for (const d of context.subscriptions) d.dispose()
  }
  test.after?.(stop)
  return { api, context, stop }
}

const statusBar = () => testing.statusBarItems.find((i) => i.id === 'agentx.blocking')

test('activation registers the participant, the views, the commands and the status bar', async () => {
  const { root } = await makeWorkspace()
  const { api, stop } = await start(root)
  assert.ok(testing.participants.has('agentx-clarify.agentx'))
  const participant = testing.participants.get('agentx-clarify.agentx')
  assert.ok(participant.followupProvider)
  assert.equal(participant.iconPath.path, path.join(ext, 'media', 'agentx.svg'))
  assert.ok(testing.treeProviders.has('agentx.agents'))
  assert.ok(testing.treeViews.has('agentx.ready'))
  assert.equal(testing.decorationProviders.length, 1)
  const manifest = require('../package.json')
  const declared = manifest.contributes.commands.map((c) => c.command).sort()
  assert.deepEqual([...testing.commands.keys()].sort(), declared, 'every declared command is registered, and only those')
  assert.deepEqual(manifest.contributes.chatParticipants.map((p) => [p.id, p.name, p.commands.map((c) => c.name)]), [['agentx-clarify.agentx', 'agentx', ['clarify']]])
  assert.equal(api.backend().kind, 'native')
  assert.equal(api.backend().root, root)
  await waitFor(() => statusBar()?.visible, 10000, 'the status bar item')
  // CLR-42-001 answered, CLR-42-002 pending, CLR-43-001 pending, CLR-44-001 escalated: all blocking.
  assert.equal(statusBar().text, '$(warning) 3 blocking')
  assert.equal(statusBar().command, 'agentx.showClarifications')
  assert.equal(statusBar().backgroundColor.id, 'statusBarItem.warningBackground')
  assert.deepEqual(testing.executed.find((e) => e.command === 'setContext').args, ['agentx.readOnly', false])
  stop()
  assert.ok(statusBar().disposed)
  assert.equal(testing.watchers.every((w) => w.onDidChange && true), true)
})

test('chat through the registered participant, as the chat view sends it', async () => {
  const { root } = await makeWorkspace()
  const { stop } = await start(root)
  const r = await vscode.sendChat('agentx-clarify.agentx', '#43')
  assert.match(r.text, /\*\*Issue #43\*\*: 1 clarification/)
  assert.deepEqual(r.result.metadata.records, [{ id: 'CLR-43-001', issueNumber: 43, status: 'pending', admits: ['answer', 'abandon', 'escalate'] }])
  assert.deepEqual(r.followups.map((f) => f.prompt), ['show CLR-43-001', 'stale'])
  const resolved = await vscode.sendChat('agentx-clarify.agentx', 'resolve CLR-42-001 Redis.')
  assert.match(resolved.text, /^Resolved: \*\*CLR-42-001\*\*/)
  assert.equal(readLedger(root, 42).clarifications[0].status, 'resolved')
  // An answered record no longer held #42 up; a human resolving the escalated #44 frees it.
  const human = await vscode.sendChat('agentx-clarify.agentx', 'resolve CLR-44-001 Keep the v2 schema.')
  assert.match(human.text, /^Resolved: \*\*CLR-44-001\*\*/)
  await waitFor(() => statusBar().text === '$(warning) 2 blocking', 10000, 'the status bar after resolve')
  stop()
})

test('mutations from chat publish their events; trees and status bar refresh at once', async () => {
  const { root } = await makeWorkspace()
  const { api, stop } = await start(root)
  const events = []
  api.bus.onEvents((e) => events.push(...e))
  let agentsChanged = 0
  let readyChanged = 0
  api.agents.onDidChangeTreeData(() => agentsChanged++)
  api.ready.onDidChangeTreeData(() => readyChanged++)
  await vscode.sendChat('agentx-clarify.agentx', 'escalate CLR-43-001 stalled')
  assert.deepEqual(events.map((e) => [e.type, e.clarificationId, e.issueNumber, e.fromAgent, e.toAgent, e.actor, e.reason]), [
    ['clarification-escalated', 'CLR-43-001', 43, 'architect', 'product-manager', 'human', 'stalled'],
  ])
  assert.ok(agentsChanged >= 1 && readyChanged >= 1, 'both trees were told')
  const ready = await api.ready.getChildren()
  // An escalated blocking record still holds its issue: the requester waits on a human.
  assert.equal(ready.find((i) => i.label === '#43').description, 'BLOCKED: CLR-43-001 waiting on human')
  stop()
})

test('a change by another process (the CLI in a terminal) refreshes the views through the watcher', async (t) => {
  const { root } = await makeWorkspace()
  const { api, stop } = await start(root)
  await waitFor(() => statusBar()?.text === '$(warning) 3 blocking', 10000, 'the initial count')
  await new Promise((r) => setTimeout(r, 150)) // let the watcher settle
  const changes = []
  api.bus.onDidChange((c) => changes.push(c))
  const started = Date.now()
  await otherProcess(root, ['clarify', 'ask', '--issue', '48', '--from', 'engineer', '--to', 'architect', '--topic', 'Rate limits', '--question', 'Per user or per key?'],
    "await ws.ask({ issueNumber: 48, from: 'engineer', to: 'architect', topic: 'Rate limits', question: 'Per user or per key?' })")
  const written = Date.now()
  await waitFor(() => changes.some((c) => c.source === 'files'), 10000, 'a file change on the bus')
  const files = changes.find((c) => c.source === 'files').files
  assert.ok(files.some((f) => f.endsWith(path.join('clarifications', 'issue-48.json'))), files.join(', '))
  assert.ok(files.every((f) => !f.endsWith('.lock') && !path.basename(f).startsWith('.agentx-tmp-')), 'locks and temp files are filtered')
  await waitFor(() => statusBar().text === '$(warning) 4 blocking', 10000, 'the status bar count')
  // The latency is a figure, not an assertion (shared machines are noisy): the spec's "within a
  // second" is reported here and in docs/benchmarks.md.
  const latency = Date.now() - written
  const rows = await api.ready.getChildren()
  assert.deepEqual(rows.map((r) => r.label), ['#42', '#43', '#44', '#48'])
  assert.equal(rows[3].description, 'BLOCKED: CLR-48-001 waiting on architect')
  const agents = await api.agents.getChildren()
  assert.equal(agents.find((a) => a.label === 'engineer').description, 'blocked · waiting on architect · CLR-48-001')
  t.diagnostic(`views refreshed ${latency} ms after the other process's write (the command took ${written - started} ms)`)
  stop()
})

test('the monitor runs on ledger changes (setting agentx.monitorOnChange) and publishes its events', async () => {
  const { root } = await makeWorkspace()
  const { api, stop } = await start(root, { 'agentx.monitorOnChange': true })
  await new Promise((r) => setTimeout(r, 150))
  const events = []
  api.bus.onEvents((e) => events.push(...e))
  // Another process writes a request whose SLA expired long ago.
  const past = new Date(Date.now() - 3 * 3600_000).toISOString()
  await otherProcess(root, ['--now', past, 'clarify', 'ask', '--issue', '49', '--from', 'engineer', '--to', 'architect', '--topic', 'Old', '--question', 'Anyone?'],
    `await ws.ask({ issueNumber: 49, from: 'engineer', to: 'architect', topic: 'Old', question: 'Anyone?', now: ${JSON.stringify(past)} })`)
  await waitFor(() => events.some((e) => e.type === 'clarification-stale' && e.clarificationId === 'CLR-49-001'), 10000, 'the monitor event')
  await api.idle()
  assert.deepEqual(readLedger(root, 49).clarifications[0].thread.map((e) => e.type), ['question', 'stale', 'retry'])
  // It settles: its own write triggers one more run, which finds nothing.
  await new Promise((r) => setTimeout(r, 500))
  await api.idle()
  assert.equal(events.filter((e) => e.type === 'clarification-stale').length, 1)
  stop()
})

test('settings: agentx.root (absolute or relative) re-wires everything; no folder says why', async () => {
  const a = await makeWorkspace()
  const b = tempDir()
  const wsB = new native.Workspace(path.join(b, 'nested'))
  await wsB.init()
  await wsB.ask({ issueNumber: 7, from: 'engineer', to: 'architect', topic: 'T', question: 'Q?' })
  const { api, stop } = await start(a.root)
  assert.equal(api.backend().root, a.root)
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(b), name: 'b', index: 0 }]
  testing.setSetting('agentx.root', 'nested')
  assert.equal(api.backend().root, path.join(b, 'nested'))
  await waitFor(() => statusBar().text === '$(warning) 1 blocking', 10000, 'the count of the new root')
  testing.setSetting('agentx.root', a.root)
  assert.equal(api.backend().root, a.root)
  vscode.workspace.workspaceFolders = undefined
  testing.setSetting('agentx.root', '')
  assert.equal(api.backend(), undefined)
  assert.match(api.problem(), /open a folder/)
  const r = await vscode.sendChat('agentx-clarify.agentx', '')
  assert.match(r.text, /^\*\*AgentX Clarify is not available:\*\* open a folder/)
  await waitFor(() => statusBar().visible === false, 10000, 'the hidden status bar')
  stop()
})

test('the root is discovered upwards from the workspace folder, like the CLI does', async () => {
  const { root } = await makeWorkspace()
  const sub = path.join(root, 'src', 'deep')
  fs.mkdirSync(sub, { recursive: true })
  const { api, stop } = await start(sub)
  assert.equal(api.backend().root, root)
  stop()
})

test('outside an AgentX workspace the status bar stays hidden until `agentx init` creates one', async () => {
  const root = tempDir()
  const { api, stop } = await start(root)
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(api.backend().kind, 'native')
  assert.equal(statusBar().visible, false)
  await otherProcess(root, ['init'], 'await ws.init()')
  await waitFor(() => statusBar().visible && statusBar().text === '$(comment-discussion) 0 blocking', 10000, 'the status bar after init')
  const r = await vscode.sendChat('agentx-clarify.agentx', '')
  assert.equal(r.text, 'No open clarifications.')
  stop()
})
