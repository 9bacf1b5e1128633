'use strict'
// The language-model tools against real workspaces on disk (native store), with chat models
// of the stand-in: every outcome of agentx_request_clarification (answered, asked back,
// stopped, model error, cancelled, scope refused, no model, routing off, a CLI runner), the
// inbox and answer tools, the MCP definitions, and `/clarify route`, `ask --route`, `ingest`.
const vscode = require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { ext, readLedger, tempDir, NATIVE, WASM, native } = require('./support/fixtures')
const { activate } = require('../out/extension')

const { testing } = vscode
const PERSONA = '---\nname: architect\ndescription: the architect\n---\nYou are the ARCHITECT of this team: you own design decisions.'

/** A fresh workspace (default workflows), the extension activated on it. */
async function start({ persona = true, config, settings = {}, models = [] } = {}) {
  const root = tempDir()
  const ws = new native.Workspace(root)
  await ws.init()
  if (persona) {
    fs.mkdirSync(path.join(root, '.github', 'agents'), { recursive: true })
    fs.writeFileSync(path.join(root, '.github', 'agents', 'architect.agent.md'), PERSONA)
  }
  if (config) fs.appendFileSync(path.join(root, '.agentx', 'config.toml'), config)
  testing.reset()
  Object.assign(testing.settings, { 'agentx.monitorOnChange': false, ...settings })
  testing.models = models
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: path.basename(root), index: 0 }]
  const context = vscode.extensionContext(ext)
  const api = activate(context, { native: [NATIVE], wasm: [WASM] })
  test.after(() => {
    for (const d of context.subscriptions) d.dispose()
  })
  return { root, ws, api }
}

const ASK = { from: 'engineer', to: 'architect', topic: 'Cache layer', question: 'Redis or in-process?', issue: 42 }

async function request(input = ASK, token) {
  const result = await vscode.lm.invokeTool('agentx_request_clarification', { input, toolInvocationToken: undefined }, token)
  assert.ok(result instanceof vscode.LanguageModelToolResult)
  return result.content.map((p) => p.value).join('')
}

const replying = (...fragments) => vscode.fakeModel({ reply: async () => fragments })
const record = (root, id = 'CLR-42-001') => readLedger(root, 42).clarifications.find((r) => r.id === id)

test('the three tools are declared in package.json with input schemas and registered', async () => {
  await start()
  const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'))
  const declared = pkg.contributes.languageModelTools.map((t) => t.name)
  assert.deepEqual(declared, ['agentx_request_clarification', 'agentx_answer_clarification', 'agentx_clarification_inbox'])
  assert.deepEqual([...testing.tools.keys()].sort(), [...declared].sort())
  const req = pkg.contributes.languageModelTools[0]
  assert.deepEqual(req.inputSchema.required, ['from', 'to', 'topic', 'question'])
  assert.deepEqual(Object.keys(req.inputSchema.properties), ['from', 'to', 'topic', 'question', 'blocking', 'field', 'suggestions', 'issue', 'answerKind', 'options', 'allowOther', 'minSelect', 'maxSelect', 'askAgain'])
  // Answer kinds (docs/protocol.md §22): the answer tool takes a typed value, the body then optional.
  const answer = pkg.contributes.languageModelTools[1]
  assert.deepEqual(answer.inputSchema.required, ['id', 'from'])
  assert.ok(answer.inputSchema.properties.value)
  assert.match(req.modelDescription, /instead of guessing/)
  assert.match(pkg.engines.vscode, /^\^1\.10[1-9]\./)
  assert.equal(pkg.devDependencies['@types/vscode'], pkg.engines.vscode.slice(1), '@types/vscode matches engines.vscode')
  assert.equal(pkg.enabledApiProposals, undefined, 'no proposed API in the shipped extension')
})

test('answered: the chat model answers as the target with its persona; the ledger has question and answer', async () => {
  const model = replying('Redis', ', see ADR-7.')
  const { root } = await start({ models: [model] })
  const text = await request({ ...ASK, field: 'cache.backend', suggestions: ['redis', 'in-process'] })
  assert.equal(text, '[Clarification from architect]\nRedis, see ADR-7.')
  assert.equal(model.requests.length, 1)
  const prompt = model.requests[0].text
  assert.match(prompt, /You are the ARCHITECT of this team/)
  assert.doesNotMatch(prompt, /description: the architect/, 'front matter is not part of the persona')
  assert.match(prompt, /Redis or in-process\?/)
  assert.match(prompt, /CLR-42-001/)
  const r = record(root)
  assert.equal(r.status, 'answered')
  assert.deepEqual(r.thread.map((e) => [e.type, e.from, e.body]), [
    ['question', 'engineer', 'Redis or in-process?'],
    ['answer', 'architect', 'Redis, see ADR-7.'],
  ])
})

test('asked back: the result says so and names the new question; nothing is invented', async () => {
  const block = 'Before I answer:\n[CLARIFICATION_NEEDED]\nagent_id: architect\nquestions:\n- How many sessions at peak?\nto: product-manager\n[/CLARIFICATION_NEEDED]\n'
  const { root } = await start({ models: [replying(block)] })
  const text = await request()
  assert.match(text, /^CLR-42-001 is not answered yet: architect asked a question back first \(CLR-42-002, to product-manager: .*How many sessions at peak\?/)
  assert.doesNotMatch(text, /\[Clarification from/)
  assert.equal(record(root).status, 'pending')
  const back = record(root, 'CLR-42-002')
  assert.equal(back.from, 'architect')
  assert.equal(back.to, 'product-manager')
})

test('stopped: a [STOP_WORK] escalates to a human with the blocker', async () => {
  const stop = '[STOP_WORK]\nagent_id: architect\nblocker_type: missing_context\ndetails: no load figures yet\n[/STOP_WORK]'
  const { root } = await start({ models: [replying(stop)] })
  const text = await request()
  assert.match(text, /^CLR-42-001 was escalated to a human: agent stopped: missing_context: no load figures yet\. There is no answer yet; do not guess/)
  const r = record(root)
  assert.equal(r.status, 'escalated')
  assert.equal(r.thread.filter((e) => e.type === 'answer').length, 0)
})

test('model error: the record is escalated as an agent error with the model\'s message', async () => {
  const failing = vscode.fakeModel({
    reply: async () => {
      throw vscode.LanguageModelError.Blocked('the request was blocked by a content filter')
    },
  })
  const { root } = await start({ models: [failing] })
  const text = await request()
  assert.match(text, /^CLR-42-001 was escalated to a human because architect failed to answer: .*the chat model failed: Blocked: the request was blocked by a content filter/)
  const r = record(root)
  assert.equal(r.status, 'escalated')
  assert.match(r.thread.at(-1).body, /agent error: the chat model failed: Blocked/)
  assert.equal(r.thread.filter((e) => e.type === 'answer').length, 0)
})

test('an empty reply is an agent error, never an empty answer', async () => {
  const { root } = await start({ models: [replying('  ', '\n')] })
  assert.match(await request(), /escalated to a human because architect failed to answer/)
  assert.equal(record(root).status, 'escalated')
})

test('cancelled: routing stops while the model streams; the record stays pending, nothing answered', async () => {
  const { token, cancel } = vscode.cancellation()
  const model = vscode.fakeModel({
    reply: async () =>
      (async function* () {
        yield 'Redis'
        cancel()
        yield ', see ADR-7.'
      })(),
  })
  const { root } = await start({ models: [model] })
  const text = await request(ASK, token)
  assert.match(text, /^CLR-42-001 is asked and pending for architect, but not answered: routing was cancelled/)
  const r = record(root)
  assert.equal(r.status, 'pending')
  assert.deepEqual(r.thread.map((e) => e.type), ['question'])
})

test('scope refused: the refusal code, nothing written, no model asked', async () => {
  const model = replying('should not be asked')
  const { root } = await start({ models: [model] })
  const text = await request({ from: 'tester', to: 'product-manager', topic: 'Scope', question: 'In scope?', issue: 42 })
  assert.match(text, /^Refused \(SCOPE_VIOLATION\): agent 'tester' has no step .* Nothing was written\.$/)
  assert.equal(model.requests.length, 0)
  assert.equal(fs.existsSync(path.join(root, '.agentx', 'state', 'clarifications', 'issue-42.json')), false)
})

test('no model available: asked, left pending, and the result says why', async () => {
  const { root } = await start({ models: [] })
  const text = await request()
  assert.match(text, /^CLR-42-001 is asked and pending for architect, but not answered: architect has no runner in \.agentx\/config\.toml and no chat model is available\./)
  assert.equal(record(root).status, 'pending')
})

test('the model family setting chooses the model; routing through the chat model can be turned off', async () => {
  const other = vscode.fakeModel({ id: 'other', family: 'other', reply: async () => ['wrong model'] })
  const chosen = vscode.fakeModel({ id: 'chosen', family: 'arch', reply: async () => ['Redis.'] })
  await start({ models: [other, chosen], settings: { 'agentx.routing.modelFamily': 'arch' } })
  assert.equal(await request(), '[Clarification from architect]\nRedis.')
  assert.equal(other.requests.length, 0)

  const { root } = await start({ models: [chosen], settings: { 'agentx.routing.chatModel': false } })
  assert.match(await request(), /not answered: architect has no runner .* routing through the chat model is off \(agentx\.routing\.chatModel\)/)
  assert.equal(record(root).status, 'pending')
})

test('a configured CLI runner answers instead of the chat model', async () => {
  const model = replying('from the chat model')
  const config = '\n[agents.architect]\npreset = "command"\ncommand = ["echo", "Redis, from the runner."]\n'
  const { root } = await start({ models: [model], config })
  assert.equal(await request(), '[Clarification from architect]\nRedis, from the runner.')
  assert.equal(model.requests.length, 0)
  assert.equal(record(root).thread.at(-1).body, 'Redis, from the runner.')
})

test('the issue defaults to the asking agent\'s current issue, and is required without one', async () => {
  const { ws, root } = await start({ models: [replying('Redis.')] })
  const { issue: _issue, ...noIssue } = ASK
  assert.match(await request(noIssue), /^Refused \(INVALID_INPUT\): `issue` is required/)
  await ws.state({ agent: 'engineer', status: 'working', issue: 42 })
  assert.equal(await request(noIssue), '[Clarification from architect]\nRedis.')
  assert.equal(record(root).status, 'answered')
})

test('inbox and answer: the other side finds the question and answers it', async () => {
  const { root } = await start({ models: [], settings: { 'agentx.routing.chatModel': false } })
  await request()
  const inbox = async (agent) => (await vscode.lm.invokeTool('agentx_clarification_inbox', { input: { agent } })).content[0].value
  assert.match(await inbox('architect'), /^1 clarification wait for architect's answer .*\n- CLR-42-001 \(issue #42, round 1\/\d+, from engineer, blocking\) Cache layer: Redis or in-process\?$/)
  assert.equal(await inbox('product-manager'), "No clarification waits for product-manager's answer.")
  const answer = (input) => vscode.lm.invokeTool('agentx_answer_clarification', { input }).then((r) => r.content[0].value)
  assert.match(await answer({ id: 'CLR-42-001', from: 'product-manager', body: 'x' }), /^Refused \(NOT_PARTICIPANT\)/)
  assert.equal(await answer({ id: 'CLR-42-001', from: 'architect', body: 'Redis.' }), 'Answered CLR-42-001 (issue #42) as architect; engineer gets the answer.')
  assert.equal(record(root).status, 'answered')
  assert.equal(await inbox('architect'), "No clarification waits for architect's answer.")
})

test('MCP: one stdio definition per workspace root running the bundled CLI as the configured agent', async () => {
  const cli = path.join(tempDir(), 'agentx')
  fs.writeFileSync(cli, '#!/bin/sh\n', { mode: 0o755 })
  const before = process.env.AGENTX_BIN
  process.env.AGENTX_BIN = cli
  try {
    const { root } = await start({ settings: { 'agentx.mcp.agent': 'architect' } })
    const second = tempDir()
    vscode.workspace.workspaceFolders.push({ uri: vscode.Uri.file(second), name: 'second', index: 1 })
    const provider = testing.mcpProviders.get('agentx-clarify.mcp')
    assert.ok(provider, 'registered under the id package.json declares')
    const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'))
    assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders.map((p) => p.id), ['agentx-clarify.mcp'])
    const defs = await provider.provideMcpServerDefinitions()
    assert.deepEqual(defs.map((d) => [d.command, d.args, d.cwd.fsPath]), [
      [cli, ['mcp', '--agent', 'architect', '--root', root], root],
      [cli, ['mcp', '--agent', 'architect', '--root', second], second],
    ])
    assert.ok(defs.every((d) => d instanceof vscode.McpStdioServerDefinition && d.label.startsWith('AgentX Clarify (')))
    testing.settings['agentx.mcp.enabled'] = false
    assert.deepEqual(await provider.provideMcpServerDefinitions(), [])
  } finally {
    if (before === undefined) delete process.env.AGENTX_BIN
    else process.env.AGENTX_BIN = before
  }
})

test('/clarify ask … --route and /clarify route <id> show the routed answer', async () => {
  const model = replying('Redis, see ADR-7.')
  const { root } = await start({ models: [] })
  const chat = (prompt, extra) => vscode.sendChat('agentx-clarify.agentx', prompt, 'clarify', { model, ...extra })
  const asked = await chat('ask #42 engineer -> architect "Cache layer" Redis or in-process? --route')
  assert.match(asked.text, /\n> Redis, see ADR-7\.\n\n\*\*architect\*\* answered \*\*CLR-42-001\*\* \(through test-model\): the reply above is recorded as the answer\./)
  assert.deepEqual(asked.stream.parts.filter((p) => p.kind === 'markdown').map((p) => p.value).slice(1, 3), ['> ', 'Redis, see ADR-7.'], 'the reply is streamed as it arrives')
  assert.ok(asked.stream.parts.some((p) => p.kind === 'progress' && /Asking architect through Test Model/.test(p.value)))
  assert.equal(record(root).status, 'answered')
  assert.equal(model.requests.length, 1)

  await chat('ask #42 engineer -> architect "Queue" Kafka or SQS?')
  assert.equal(record(root, 'CLR-42-002').status, 'pending', 'without --route nothing is routed')
  const routed = await chat('route clr-42-002')
  assert.match(routed.text, /answered \*\*CLR-42-002\*\*/)
  assert.deepEqual(routed.followups.map((f) => f.prompt).slice(0, 2), ['show CLR-42-002', '#42'])
  const again = await chat('route CLR-42-002')
  assert.match(again.text, /`INVALID_TRANSITION`/)

  const stopping = replying('[STOP_WORK]\nagent_id: architect\nblocker_type: missing_context\ndetails: no figures\n[/STOP_WORK]')
  await chat('ask #42 engineer -> architect "Load" Peak sessions?')
  const stopped = await chat('route CLR-42-003', { model: stopping })
  assert.match(stopped.text, /\n\n\*\*Escalated\*\* \(through test-model\): CLR-42-003 was escalated to a human: agent stopped: missing\\_context: no figures\./)
  assert.equal(record(root, 'CLR-42-003').status, 'escalated')
})

test('/clarify ingest acts on the signal blocks of the selection', async () => {
  const { root } = await start()
  const output = 'working…\n[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: Cache layer\nquestions:\n- Redis or in-process?\nto: architect\n[/CLARIFICATION_NEEDED]\ndone\n'
  const file = path.join(root, 'engineer.log')
  fs.writeFileSync(file, output)
  vscode.window.activeTextEditor = {
    document: { uri: vscode.Uri.file(file), getText: (range) => (range ? output.slice(range.start, range.end) : output) },
    selection: { isEmpty: false, start: 0, end: output.length },
  }
  const res = await vscode.sendChat('agentx-clarify.agentx', 'ingest #42 engineer')
  assert.match(res.text, /^Ingested 1 signal block of \*\*engineer\*\* on issue #42 from `engineer\.log \(selection\)`:\n\n- `\[CLARIFICATION_NEEDED\]` line 2: created \*\*CLR-42-001\*\*/)
  assert.equal(record(root).to, 'architect')
  const again = await vscode.sendChat('agentx-clarify.agentx', 'ingest #42 engineer')
  assert.match(again.text, /line 2: skipped/, 'idempotent per block')
  vscode.window.activeTextEditor = undefined
  assert.match((await vscode.sendChat('agentx-clarify.agentx', 'ingest #42 engineer')).text, /Nothing to ingest/)
})

test('the Agents tree shows open delegations under both agents', async () => {
  const { ws, api } = await start()
  await ws.delegateRequest({ issueNumber: 42, from: 'engineer', to: 'architect', objective: 'Draft the cache ADR' })
  const agents = await api.agents.getChildren()
  const names = agents.map((a) => a.agent)
  assert.ok(names.includes('engineer') && names.includes('architect'), names.join(','))
  const engineer = agents.find((a) => a.agent === 'engineer')
  assert.equal(engineer.collapsibleState, vscode.TreeItemCollapsibleState.Expanded)
  const [row] = await api.agents.getChildren(engineer)
  assert.equal(row.label, '→ architect: Draft the cache ADR')
  assert.match(row.description, /^DLG-42-001 · REQUESTED/)
  const [incoming] = await api.agents.getChildren(agents.find((a) => a.agent === 'architect'))
  assert.equal(incoming.label, '← engineer: Draft the cache ADR')
})

test('the wasm fallback refuses the tools\' writes as read-only, plainly', async () => {
  const root = tempDir()
  await new native.Workspace(root).init()
  testing.reset()
  testing.settings['agentx.monitorOnChange'] = false
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(root), name: 'ro', index: 0 }]
  const context = vscode.extensionContext(ext)
  activate(context, { native: [], wasm: [WASM] })
  try {
    assert.match(await request(), /^Refused \(READ_ONLY\): editing needs the native addon/)
  } finally {
    for (const d of context.subscriptions) d.dispose()
  }
})
