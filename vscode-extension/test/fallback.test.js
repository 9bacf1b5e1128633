'use strict'
// When the native addon cannot load, the wasm package reads and renders the same workspace,
// never writes, and every edit says that it needs the native addon.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { ext, makeWorkspace, snapshot, tempDir, waitFor, NATIVE, WASM } = require('./support/fixtures')
const { loadBackend, defaultLoadOptions, readWorkspaceFiles, stateElsewhere, READ_ONLY, STATE_NOT_IN_FILES } = require('../out/backend')
const { EventBus } = require('../out/events')
const { runClarify } = require('../out/chat/participant')
const { activate } = require('../out/extension')

const { testing } = vscode

/** A native module that fails like a .node built for another platform. */
function brokenNative() {
  const dir = tempDir('agentx-broken-')
  const file = path.join(dir, 'clarify.js')
  fs.writeFileSync(file, "throw new Error('Cannot find native binding. npm has a bug related to optional dependencies')\n")
  return file
}

async function pair() {
  const { root, ws } = await makeWorkspace()
  const nativeBackend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
  const wasmBackend = loadBackend(root, { native: [brokenNative(), '/nonexistent/clarify.js'], wasm: [WASM] })
  return { root, ws, nativeBackend, wasmBackend }
}

async function chat(backend, prompt) {
  const stream = new vscode.ChatResponseStream()
  const bus = new EventBus()
  const events = []
  bus.onEvents((e) => events.push(...e))
  const metadata = await runClarify(prompt, { backend: () => backend, bus }, stream)
  return { text: stream.text, metadata, events }
}

test('the native load fails: the wasm backend takes over and says why', async () => {
  const { wasmBackend, root } = await pair()
  assert.equal(wasmBackend.kind, 'wasm')
  assert.equal(wasmBackend.canEdit, false)
  assert.equal(wasmBackend.root, root)
  assert.match(wasmBackend.fallbackReason, /the native addon did not load \(.*Cannot find native binding.*; \/nonexistent\/clarify\.js: Cannot find module/)
  assert.match(wasmBackend.version(), /^\d+\.\d+\.\d+/)
  assert.throws(() => loadBackend(root, { native: [], wasm: ['/nonexistent/clarify.cjs'] }), /neither the native addon nor the wasm package loaded: disabled; \/nonexistent/)
})

test('read-only forms give the same markdown as the native backend', async () => {
  const { nativeBackend, wasmBackend } = await pair()
  for (const prompt of ['', 'all', '#42', '#44', 'show CLR-42-001', 'show CLR-44-001', 'CLR-43-001', '#99', 'show CLR-1-001', 'help']) {
    const a = await chat(nativeBackend, prompt)
    const b = await chat(wasmBackend, prompt)
    if (prompt === 'help') {
      assert.match(b.text, /Read-only: the native addon did not load/)
      continue
    }
    assert.equal(b.text, a.text, prompt)
    assert.deepEqual(b.metadata, a.metadata, prompt)
  }
  assert.deepEqual(await wasmBackend.list({ issue: 42, all: true }), await nativeBackend.list({ issue: 42, all: true }))
  assert.deepEqual(await wasmBackend.ready(), await nativeBackend.ready())
  assert.deepEqual(await wasmBackend.statuses(), await nativeBackend.statuses())
})

test('edits are refused with "editing needs the native addon"; nothing is written', async () => {
  const { wasmBackend, root } = await pair()
  const before = snapshot(root)
  for (const prompt of ['resolve CLR-42-001 ok', 'escalate CLR-43-001 why', 'ask #45 engineer -> architect "T" Q?']) {
    const r = await chat(wasmBackend, prompt)
    assert.match(r.text, /^\*\*Read-only\*\* `READ_ONLY`: editing needs the native addon: this window runs the read-only wasm fallback because the native addon did not load/, prompt)
    assert.match(r.text, /Reading, rendering and the dry-run monitor still work\./)
    assert.deepEqual(r.events, [])
  }
  await assert.rejects(wasmBackend.resolve({ id: 'CLR-42-001' }), (e) => e.code === READ_ONLY)
  assert.deepEqual(snapshot(root), before)
})

test('stale in fallback mode: the monitor report as a dry run, files untouched', async () => {
  const { ws, wasmBackend, nativeBackend, root } = await pair()
  await ws.ask({ issueNumber: 50, from: 'engineer', to: 'architect', topic: 'Old', question: 'Still there?', now: Date.now() - 2 * 3600_000 })
  const before = snapshot(root)
  const r = await chat(wasmBackend, 'stale')
  assert.match(r.text, /^_Dry run: the read-only fallback reports what the monitor would do and writes nothing\._/)
  assert.match(r.text, /\*\*Monitor report:\*\* 1 stale, 1 retried/)
  assert.deepEqual(r.events.map((e) => e.type), ['clarification-stale'])
  assert.deepEqual(snapshot(root), before, 'nothing written')
  // The native backend then does it for real, with the same report.
  const real = await chat(nativeBackend, 'stale')
  assert.equal(real.text, r.text.replace(/^_Dry run:[^\n]*\n\n/, ''))
})

test('the extension activates on the fallback: views work, the status bar says read-only', async () => {
  const { root } = await makeWorkspace()
  testing.reset()
  testing.settings['agentx.monitorOnChange'] = true
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: 'w', index: 0 }]
  const context = vscode.extensionContext(ext)
  const api = activate(context, { native: [brokenNative()], wasm: [WASM] })
  try {
    assert.equal(api.backend().kind, 'wasm')
    assert.deepEqual(testing.executed.find((e) => e.command === 'setContext').args, ['agentx.readOnly', true])
    const item = () => testing.statusBarItems.find((i) => i.id === 'agentx.blocking')
    await waitFor(() => item()?.text === '$(warning) 3 blocking (read-only)', 10000, 'the read-only status bar')
    assert.match(item().tooltip, /Read-only: editing needs the native addon/)
    const agents = await api.agents.getChildren()
    assert.equal(agents.length, 7)
    const ready = await api.ready.getChildren()
    assert.equal(ready[0].description, 'BLOCKED: CLR-42-002 waiting on product-manager')
    const r = await vscode.sendChat('agentx-clarify.agentx', 'resolve CLR-42-001')
    assert.match(r.text, /editing needs the native addon/)
    // The palette says it too.
    testing.inputBoxAnswers.push('')
    await vscode.commands.executeCommand('agentx.resolveClarification', 'CLR-42-001')
    assert.match(testing.messages.at(-1).text, /^AgentX Clarify: Read-only READ_ONLY: editing needs the native addon/)
    assert.equal(testing.messages.at(-1).level, 'error')
    // A file change never makes the fallback write (no monitor-on-change).
    const before = snapshot(root)
    api.bus.filesChanged([path.join(root, '.agentx/state/clarifications/issue-42.json')])
    await new Promise((r) => setTimeout(r, 400))
    await api.idle()
    assert.deepEqual(snapshot(root), before)
  } finally {
    for (const d of context.subscriptions) d.dispose()
  }
})

test('default load paths: the packaged copies first, then the repository builds; env overrides', () => {
  const o = defaultLoadOptions('/ext')
  assert.deepEqual(o.native, ['/ext/native/clarify.js', '/bindings-node/clarify.js'])
  assert.deepEqual(o.wasm, ['/ext/wasm/clarify.cjs', '/bindings-wasm/pkg/node/clarify.cjs'])
  process.env.AGENTX_CLARIFY_NATIVE = 'off'
  process.env.AGENTX_CLARIFY_WASM = '/w.cjs'
  try {
    assert.deepEqual(defaultLoadOptions('/ext'), { native: [], wasm: ['/w.cjs'] })
  } finally {
    delete process.env.AGENTX_CLARIFY_NATIVE
    delete process.env.AGENTX_CLARIFY_WASM
  }
})

test('readWorkspaceFiles takes only ledger files, and tolerates a missing state dir', async () => {
  const { root } = await makeWorkspace()
  const dir = path.join(root, '.agentx', 'state', 'clarifications')
  fs.writeFileSync(path.join(dir, 'issue-042.json'), '{}')
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'x')
  fs.writeFileSync(path.join(dir, 'issue-42.json.lock'), '{}')
  const { files, statuses, config } = readWorkspaceFiles(root)
  assert.deepEqual(Object.keys(files), ['issue-42.json', 'issue-43.json', 'issue-44.json'])
  assert.ok(statuses.includes('"engineer"'))
  assert.match(config, /^\[clarify\]$/m, 'init writes config.toml; the monitor gets it')
  assert.deepEqual(readWorkspaceFiles('/nonexistent'), { files: {}, statuses: undefined, config: undefined })
})

test('the CLI bundled into the .vsix (bin/agentx, for agentx mcp) is the one the MCP definitions run', () => {
  const { cliPath } = require('../out/lm/mcp')
  const saved = process.env.AGENTX_BIN
  delete process.env.AGENTX_BIN
  try {
    const cli = cliPath(ext)
    assert.equal(cli, path.join(ext, 'bin', 'agentx'))
    const out = require('node:child_process').execFileSync(cli, ['mcp', '--help'], { encoding: 'utf8' })
    assert.match(out, /Model Context Protocol/)
  } finally {
    if (saved !== undefined) process.env.AGENTX_BIN = saved
  }
})

test('the copies bundled into the .vsix (native/, wasm/) load, each on its own', async () => {
  const { root } = await makeWorkspace()
  const bundled = defaultLoadOptions(ext)
  const nativeCopy = loadBackend(root, { native: [bundled.native[0]], wasm: [] })
  assert.equal(nativeCopy.kind, 'native')
  const wasmCopy = loadBackend(root, { native: [], wasm: [bundled.wasm[0]] })
  assert.equal(wasmCopy.kind, 'wasm')
  assert.deepEqual(await wasmCopy.list({}), await nativeCopy.list({}))
  assert.equal(wasmCopy.version(), nativeCopy.version())
})

test('the state in PostgreSQL: the wasm fallback says it cannot read it instead of showing nothing', async () => {
  const { wasmBackend, root } = await pair()
  assert.equal(stateElsewhere(root, {}), undefined)
  const config = path.join(root, '.agentx', 'config.toml')
  const before = fs.readFileSync(config, 'utf8')
  fs.writeFileSync(config, `${before}\n[store]\nurl = "postgresql://agentx@db.example/agentx"\n`)
  assert.match(stateElsewhere(root, {}), /\[store\] url/)
  assert.equal(stateElsewhere(root, { AGENTX_STORE: 'file' }), undefined)
  for (const read of [() => wasmBackend.ready(), () => wasmBackend.list({}), () => wasmBackend.statuses(), () => wasmBackend.monitor()]) {
    await assert.rejects(read(), (e) => e.code === STATE_NOT_IN_FILES && /PostgreSQL/.test(e.message) && /native addon/.test(e.message))
  }
  fs.writeFileSync(config, before)
  assert.equal(stateElsewhere(root, { AGENTX_STORE: 'postgres://x@y/z' }), 'AGENTX_STORE names a PostgreSQL database')
  assert.equal(stateElsewhere(root, { AGENTX_STORE: 'files' }), undefined)
  await assert.doesNotReject(wasmBackend.ready())
})
