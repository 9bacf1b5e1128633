// Test-only (AgentX Clarify e2e; never ship this). Two language-model providers and the calls
// an agent would make:
//  - vendor `copilot` (proposed `chatProvider`, `isDefault`): the chat view refuses to send a
//    request to any participant until a default model exists; it answers with a fixed text.
//  - vendor `agentx-test` (stable `registerLanguageModelChatProvider`), family
//    `architect-test`: answers as the architect when the prompt carries the architect's
//    persona and the question, and says what is missing otherwise (never an answer then).
//  - commands that call `agentx_request_clarification` as the engineer and start the `agentx
//    mcp` server, writing what they got to `<workspace>/.e2e/*.json` for the driver to read.
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const vscode = require('vscode')

const FAKE = {
  id: 'fake-model',
  name: 'Fake model',
  family: 'fake',
  version: '1.0.0',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  isDefault: true,
  isUserSelectable: true,
  capabilities: { imageInput: false, toolCalling: false },
}
const ARCHITECT = {
  id: 'architect-test-model',
  name: 'Architect test model',
  family: 'architect-test',
  version: '1.0.0',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  capabilities: { imageInput: false, toolCalling: false },
}
const PERSONA_MARK = 'You are the ARCHITECT of this team'
const QUESTION = 'Which cache for the session store: Redis or in-process?'
const ANSWER = 'Redis with allkeys-lru eviction; see ADR-7.'

function textOf(messages) {
  return messages
    .map((m) => m.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join(''))
    .join('\n')
}

function results(name, value) {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath
  if (!folder) return
  const dir = path.join(folder, '.e2e')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(value, null, 2))
}

async function askAsEngineer() {
  const started = Date.now()
  try {
    const result = await vscode.lm.invokeTool('agentx_request_clarification', {
      input: { from: 'engineer', to: 'architect', topic: 'Session cache', question: QUESTION, issue: 47 },
      toolInvocationToken: undefined,
    })
    const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('')
    results('tool', { ok: true, text, ms: Date.now() - started })
    void vscode.window.showInformationMessage(`agentx_request_clarification: ${text.replace(/\n/g, ' ')}`)
  } catch (e) {
    results('tool', { ok: false, error: String(e && e.message ? e.message : e), ms: Date.now() - started })
  }
}

/** `workbench.mcp.startServer` is internal and an early call can be a no-op: retry until the tools show. */
async function startMcp() {
  const started = Date.now()
  let attempts = 0
  let last = ''
  while (Date.now() - started < 90_000) {
    attempts++
    try {
      await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { autoTrustChanges: true, waitForLiveTools: true })
    } catch (e) {
      last = String(e && e.message ? e.message : e)
    }
    const tools = vscode.lm.tools.map((t) => t.name).filter((n) => n.startsWith('mcp_'))
    if (tools.some((n) => n.endsWith('clarify_ask'))) {
      results('mcp', { ok: true, tools, attempts, ms: Date.now() - started })
      return
    }
    await new Promise((r) => setTimeout(r, 1000))
  }
  results('mcp', { ok: false, error: last, attempts, tools: vscode.lm.tools.map((t) => t.name), ms: Date.now() - started })
}

function activate(context) {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('copilot', {
      provideLanguageModelChatInformation: () => [FAKE],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new vscode.LanguageModelTextPart('fake model answer'))
      },
      provideTokenCount: async (_model, text) => (typeof text === 'string' ? Math.ceil(text.length / 4) : 1),
    }),
    vscode.lm.registerLanguageModelChatProvider('agentx-test', {
      provideLanguageModelChatInformation: () => [ARCHITECT],
      provideLanguageModelChatResponse: async (_model, messages, _options, progress) => {
        const prompt = textOf(messages)
        results('architect-prompt', { prompt })
        const missing = [prompt.includes(PERSONA_MARK) ? '' : 'the persona', prompt.includes(QUESTION) ? '' : 'the question'].filter(Boolean)
        // Without the persona or the question there is no answer: a block the core reads as a stop.
        const reply = missing.length
          ? `[STOP_WORK]\nagent_id: architect\nblocker_type: missing_context\ndetails: the prompt lacks ${missing.join(' and ')}\n[/STOP_WORK]`
          : ANSWER
        for (const part of reply.match(/.{1,12}/gs)) progress.report(new vscode.LanguageModelTextPart(part))
      },
      provideTokenCount: async (_model, text) => (typeof text === 'string' ? Math.ceil(text.length / 4) : 1),
    }),
    vscode.commands.registerCommand('agentxTest.askAsEngineer', askAsEngineer),
    vscode.commands.registerCommand('agentxTest.startMcp', startMcp),
  )
}

module.exports = { activate, deactivate() {} }
