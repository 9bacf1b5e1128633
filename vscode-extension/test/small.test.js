'use strict'
// The small decisions: which files are state changes, the status bar text, the root setting,
// and the event bus.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { isStateFile, EventBus, EVENT_TYPES, watchState } = require('../out/events')
const { countBlocking, statusText } = require('../out/statusBar')
const { resolveRoot, discoverRoot } = require('../out/root')
const { tempDir, waitFor } = require('./support/fixtures')
const fs = require('node:fs')

test('lock and temp files are not state changes', () => {
  assert.equal(isStateFile('/w/.agentx/state/clarifications/issue-42.json'), true)
  assert.equal(isStateFile('/w/.agentx/state/agent-status.json'), true)
  assert.equal(isStateFile('/w/.agentx/state/clarifications/issue-42.json.lock'), false)
  assert.equal(isStateFile('/w/.agentx/state/agent-status.json.lock'), false)
  assert.equal(isStateFile('/w/.agentx/state/clarifications/.agentx-tmp-abc123'), false)
})

test('the bus: events go to onEvents and onDidChange; file changes and refresh to onDidChange', () => {
  const bus = new EventBus()
  const events = []
  const changes = []
  bus.onEvents((e) => events.push(e))
  bus.onDidChange((c) => changes.push(c.source))
  const e = { type: 'clarification-answered', clarificationId: 'CLR-1-001' }
  bus.publish([e])
  bus.publish([])
  bus.publish(undefined)
  bus.filesChanged(['/a'])
  bus.refresh()
  assert.deepEqual(events, [[e]], 'an empty list is no event')
  assert.deepEqual(changes, ['events', 'events', 'events', 'files', 'refresh'])
  assert.equal(EVENT_TYPES.length, 6)
  bus.dispose()
  bus.refresh()
  assert.equal(changes.length, 5)
})

test('the watcher coalesces a burst of writes into one change, without locks', async () => {
  const root = tempDir()
  const dir = path.join(root, '.agentx', 'state', 'clarifications')
  fs.mkdirSync(dir, { recursive: true })
  const bus = new EventBus()
  const changes = []
  bus.onDidChange((c) => changes.push(c))
  // A 200 ms quiet period: the four writes below take microseconds, so even a loaded machine
  // delivers their events inside it.
  const watcher = watchState(root, bus, 200)
  await new Promise((r) => setTimeout(r, 50))
  fs.writeFileSync(path.join(dir, 'issue-1.json.lock'), '{}')
  fs.writeFileSync(path.join(dir, 'issue-1.json'), '{}')
  fs.writeFileSync(path.join(dir, 'issue-2.json'), '{}')
  fs.rmSync(path.join(dir, 'issue-1.json.lock'))
  await waitFor(() => changes.length > 0, 10000, 'the coalesced change')
  await new Promise((r) => setTimeout(r, 400))
  assert.equal(changes.length, 1)
  assert.deepEqual(changes[0].files.map((f) => path.basename(f)), ['issue-1.json', 'issue-2.json'])
  watcher.dispose()
  fs.writeFileSync(path.join(dir, 'issue-3.json'), '{}')
  await new Promise((r) => setTimeout(r, 400))
  assert.equal(changes.length, 1, 'disposed: silent')
})

test('status bar: the blockers of every issue in the ready queue', () => {
  const issue = (issueNumber, ...ids) => ({ issueNumber, blocked: ids.map((id) => ({ id, waitingOn: 'architect' })) })
  assert.equal(countBlocking([issue(42, 'CLR-42-001', 'CLR-42-002'), issue(43), issue(44, 'CLR-44-001')]), 3)
  assert.equal(countBlocking([issue(43)]), 0)
  assert.equal(countBlocking([]), 0)
  assert.equal(statusText(0, false), '$(comment-discussion) 0 blocking')
  assert.equal(statusText(2, true), '$(warning) 2 blocking (read-only)')
})

test('root: the setting (absolute, relative, ~), else discovered upwards, else the folder', () => {
  const top = tempDir()
  fs.mkdirSync(path.join(top, '.agentx'))
  const deep = path.join(top, 'a', 'b')
  fs.mkdirSync(deep, { recursive: true })
  assert.equal(resolveRoot('', [deep]), top)
  assert.equal(resolveRoot(undefined, [deep]), top)
  assert.equal(resolveRoot('/abs/root', [deep]), '/abs/root')
  assert.equal(resolveRoot('sub/dir', [deep]), path.join(deep, 'sub', 'dir'))
  assert.equal(resolveRoot('~/x', [deep]), path.join(process.env.HOME, 'x'))
  assert.equal(resolveRoot('', []), undefined)
  assert.equal(resolveRoot('relative', []), undefined)
  const bare = tempDir()
  assert.equal(discoverRoot(bare), undefined)
  assert.equal(resolveRoot('', [bare]), bare)
})

test('the stand-in is faithful where it matters', () => {
  assert.throws(() => new vscode.FileDecoration('TOO'), /at most 2 characters/)
  const d = vscode.commands.registerCommand('x.y', () => 1)
  assert.throws(() => vscode.commands.registerCommand('x.y', () => 2), /already exists/)
  d.dispose()
  assert.equal(vscode.Uri.parse('agentx-ready:/issue/42').path, '/issue/42')
  assert.equal(vscode.Uri.file('/a/b').toString(), 'file:///a/b')
})
