'use strict'
// The palette and view commands: show, run the monitor, resolve, escalate (with quick picks and
// input boxes, or an id / a tree item as argument), and their errors as notifications.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { ext, makeWorkspace, readLedger, NATIVE, WASM } = require('./support/fixtures')
const { activate } = require('../out/extension')
const { ClarificationItem } = require('../out/trees/ready')
const { AgentItem } = require('../out/trees/agents')

const { testing } = vscode

async function start() {
  const { root, ws } = await makeWorkspace()
  testing.reset()
  testing.settings['agentx.monitorOnChange'] = false
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: path.basename(root), index: 0 }]
  const context = vscode.extensionContext(ext)
  const api = activate(context, { native: [NATIVE], wasm: [WASM] })
  const stop = () => context.subscriptions.forEach((d) => d.dispose())
  const events = []
  api.bus.onEvents((e) => events.push(...e))
  return { root, ws, api, stop, events }
}

const run = (id, ...args) => vscode.commands.executeCommand(id, ...args)
const previews = () => testing.executed.filter((e) => e.command === 'markdown.showPreview').map((e) => e.args[0].toString())

test('Show Clarifications opens the rendered list in a markdown preview', async () => {
  const { api, stop } = await start()
  const uri = await run('agentx.showClarifications')
  assert.equal(uri.toString(), 'agentx-clarify:/clarifications.md')
  assert.deepEqual(previews(), ['agentx-clarify:/clarifications.md'])
  const doc = await vscode.workspace.openTextDocument(uri)
  assert.match(doc.getText(), /^\| Id \| Issue \| From -> To \| Topic \| Status \| Round \| Blocking \|/)
  assert.equal(api.docs.get('clarifications'), doc.getText())
  stop()
})

test('Show Clarification Thread: by id (tree click) or picked from all records', async () => {
  const { api, stop } = await start()
  await run('agentx.showClarification', 'CLR-42-001')
  assert.match(api.docs.get('CLR-42-001'), /^\*\*CLR-42-001\*\* · issue #42 · answered/)
  testing.quickPickAnswers.push('CLR-44-001')
  await run('agentx.showClarification')
  assert.deepEqual(testing.lastQuickPick.map((i) => i.label), ['CLR-42-001', 'CLR-42-002', 'CLR-43-001', 'CLR-44-001'])
  assert.match(api.docs.get('CLR-44-001'), /\[ESCALATED\]/)
  // An agent row carries its clarification.
  const agent = new AgentItem('engineer', { status: 'blocked-clarification', issue: null, lastActivity: null, clarificationId: 'CLR-42-002', waitingOn: 'product-manager', respondingTo: null })
  await run('agentx.showClarification', agent)
  assert.match(api.docs.get('CLR-42-002'), /Retention/)
  stop()
})

test('Run Clarification Monitor: report in a preview, events on the bus', async () => {
  const { ws, api, stop, events, root } = await start()
  await ws.ask({ issueNumber: 50, from: 'engineer', to: 'architect', topic: 'Old', question: 'Anyone?', now: Date.now() - 2 * 3600_000 })
  await run('agentx.runMonitor')
  assert.match(api.docs.get('monitor'), /^\*\*Monitor report:\*\* 1 stale, 1 retried/)
  assert.deepEqual(events.map((e) => e.type), ['clarification-stale'])
  assert.equal(readLedger(root, 50).clarifications[0].retries, 1)
  stop()
})

test('Resolve Clarification: pick among answered/escalated, type the decision, ledger written', async () => {
  const { stop, events, root } = await start()
  testing.quickPickAnswers.push('CLR-42-001')
  testing.inputBoxAnswers.push('  Redis, 24h TTL.  ')
  const result = await run('agentx.resolveClarification')
  assert.deepEqual(testing.lastQuickPick.map((i) => [i.label, i.description]), [
    ['CLR-42-001', 'engineer -> architect · answered'],
    ['CLR-44-001', 'engineer -> architect · escalated'],
  ])
  assert.equal(testing.lastInputBox.title, 'Resolve CLR-42-001')
  assert.equal(result.clarification.status, 'resolved')
  const entry = readLedger(root, 42).clarifications[0].thread.at(-1)
  assert.deepEqual([entry.type, entry.from, entry.body], ['resolution', 'engineer', 'Redis, 24h TTL.'])
  assert.deepEqual(events.map((e) => e.type), ['clarification-resolved'])
  assert.deepEqual(testing.messages.at(-1), { level: 'info', text: 'AgentX Clarify: CLR-42-001 is resolved.' })
  stop()
})

test('Escalate Clarification from a tree item (inline action); an empty reason uses the default body', async () => {
  const { stop, root } = await start()
  const record = readLedger(root, 43).clarifications[0]
  testing.inputBoxAnswers.push('')
  await run('agentx.escalateClarification', new ClarificationItem({ ...record, issueNumber: 43 }))
  const entry = readLedger(root, 43).clarifications[0].thread.at(-1)
  assert.deepEqual([entry.type, entry.from, entry.body], ['escalation', 'human', 'escalated by human'])
  stop()
})

test('cancelling the pick or the input box writes nothing', async () => {
  const { stop, root } = await start()
  const before = JSON.stringify(readLedger(root, 42))
  testing.quickPickAnswers.push(undefined)
  assert.equal(await run('agentx.resolveClarification'), undefined)
  testing.inputBoxAnswers.push(undefined)
  assert.equal(await run('agentx.escalateClarification', 'CLR-42-002'), undefined)
  assert.equal(JSON.stringify(readLedger(root, 42)), before)
  stop()
})

test('a refused command shows the code and message as an error notification', async () => {
  const { stop } = await start()
  testing.inputBoxAnswers.push('done')
  await run('agentx.resolveClarification', 'CLR-42-002')
  assert.deepEqual(testing.messages.at(-1), {
    level: 'error',
    text: 'AgentX Clarify: Not possible now INVALID_TRANSITION: cannot resolve CLR-42-002: it is pending; allowed: answer, abandon, escalate Show the thread with /clarify show <id> to see where it stands.',
  })
  stop()
})

test('nothing to resolve: an information message instead of an empty pick', async () => {
  const { ws, stop } = await start()
  await ws.resolve({ id: 'CLR-42-001' })
  // A person's decision says something (docs/protocol.md §30).
  await ws.resolve({ id: 'CLR-44-001', message: 'Use Redis.' })
  assert.equal(await run('agentx.resolveClarification'), undefined)
  assert.deepEqual(testing.messages.at(-1), { level: 'info', text: 'AgentX Clarify: no clarification is answered or escalated.' })
  stop()
})

test('Refresh tells both trees', async () => {
  const { api, stop } = await start()
  let n = 0
  api.agents.onDidChangeTreeData(() => n++)
  api.ready.onDidChangeTreeData(() => n++)
  await run('agentx.refresh')
  assert.equal(n, 2)
  stop()
})
