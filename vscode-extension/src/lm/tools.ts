// The language-model tools (docs/protocol.md §14.3) that let Copilot agent mode and custom agents ask each
// other instead of guessing: `agentx_request_clarification` asks through the store (scope,
// rounds, locks as the CLI) and routes the question to its target; the other side reads its
// inbox and answers. Every result is text a model reads; a refusal says its code and that
// nothing was written, never an invented answer.
import * as vscode from 'vscode'
import type { ClarifyError } from '../../../bindings-node/clarify'
import type { Backend } from '../backend'
import type { EventBus } from '../events'
import { describe, lastOf, routeClarification } from './route'

export const REQUEST_TOOL = 'agentx_request_clarification'
export const ANSWER_TOOL = 'agentx_answer_clarification'
export const INBOX_TOOL = 'agentx_clarification_inbox'

export interface RequestInput {
  from: string
  to: string
  topic: string
  question: string
  blocking?: boolean
  field?: string
  suggestions?: string[]
  issue?: number
  /** docs/protocol.md §22: the shape of the answer (text, confirm, choice, multi_choice) and its options. */
  answerKind?: 'text' | 'confirm' | 'choice' | 'multi_choice'
  options?: { value: string; label?: string; description?: string }[]
  allowOther?: boolean
  minSelect?: number
  maxSelect?: number
  /** Ask even when the issue already holds the same question. */
  askAgain?: boolean
}
export interface AnswerInput {
  id: string
  from: string
  body?: string
  /** A typed answer (docs/protocol.md §22): true/false, an option value, or option values. */
  value?: boolean | string | string[]
}
export interface InboxInput {
  agent: string
}

export interface ToolDeps {
  backend: () => Backend | undefined
  bus: EventBus
  unavailable?: () => string | undefined
}

function text(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)])
}

/** A refusal as the model reads it: the stable code, the message, that nothing was written. */
function refusal(e: unknown): string {
  const err = e as Partial<ClarifyError> & { code?: string }
  const message = (e instanceof Error ? e.message : String(e)).split('\n')[0]
  return err.code ? `Refused (${err.code}): ${message}. Nothing was written.` : `Failed: ${message}. Nothing was written.`
}

/** The issue of a request: given, else the asking agent's current issue (agent-status.json). */
async function issueOf(backend: Backend, input: RequestInput): Promise<number | undefined> {
  if (input.issue !== undefined) return input.issue
  const status = (await backend.statuses())[input.from]
  return typeof status?.issue === 'number' ? status.issue : undefined
}

/** `agentx_request_clarification`: ask, then route; the answer or what happened instead. */
export async function requestClarification(deps: ToolDeps, input: RequestInput, token?: vscode.CancellationToken): Promise<string> {
  const backend = deps.backend()
  if (!backend) return `AgentX Clarify is not available: ${deps.unavailable?.() ?? 'no workspace is open'}. Nothing was asked.`
  const issueNumber = await issueOf(backend, input)
  if (issueNumber === undefined) {
    return `Refused (INVALID_INPUT): \`issue\` is required: ${input.from} has no current issue in .agentx/state/agent-status.json. Nothing was written.`
  }
  let id: string
  try {
    const asked = await backend.ask({
      issueNumber,
      from: input.from,
      to: input.to,
      topic: input.topic,
      question: input.question,
      blocking: input.blocking ?? true,
      ...(input.field ? { field: input.field } : {}),
      ...(input.suggestions?.length ? { suggestions: input.suggestions } : {}),
      ...(input.answerKind ? { answerKind: input.answerKind } : {}),
      ...(input.options?.length ? { options: input.options } : {}),
      ...(input.allowOther !== undefined ? { allowOther: input.allowOther } : {}),
      ...(input.minSelect !== undefined ? { minSelect: input.minSelect } : {}),
      ...(input.maxSelect !== undefined ? { maxSelect: input.maxSelect } : {}),
      ...(input.askAgain ? { askAgain: true } : {}),
    })
    deps.bus.publish(asked.events)
    id = asked.clarification.id
    // A replay, or a re-ask answered from the record that already holds the question (docs/protocol.md §22).
    if ((asked.idempotent || asked.reused) && asked.clarification.status !== 'pending' && asked.clarification.status !== 'stale') {
      const answer = lastOf(asked.clarification, 'answer', input.to)
      return answer !== undefined ? `[Clarification from ${input.to}]\n${answer}` : `${id} was asked before and is ${asked.clarification.status}.`
    }
  } catch (e) {
    return refusal(e)
  }
  try {
    const result = await routeClarification(backend, id, { token })
    if (result.kind !== 'not-routed') deps.bus.refresh()
    return describe(result)
  } catch (e) {
    return `${id} is asked and pending for ${input.to}, but routing it failed: ${refusal(e).replace(/ Nothing was written\.$/, '')} It waits for ${input.to} or the monitor.`
  }
}

/** `agentx_answer_clarification`: the target answers a question waiting for it. */
export async function answerClarification(deps: ToolDeps, input: AnswerInput): Promise<string> {
  const backend = deps.backend()
  if (!backend) return `AgentX Clarify is not available: ${deps.unavailable?.() ?? 'no workspace is open'}.`
  try {
    const result = await backend.answer({
      id: input.id,
      from: input.from,
      ...(input.body !== undefined ? { body: input.body } : {}),
      ...(input.value !== undefined ? { value: input.value } : {}),
    } as Parameters<Backend['answer']>[0])
    deps.bus.publish(result.events)
    const r = result.clarification
    return `${result.idempotent ? 'Already answered' : 'Answered'} ${r.id} (issue #${r.issueNumber}) as ${input.from}; ${r.from} gets the answer.`
  } catch (e) {
    return refusal(e)
  }
}

/** `agentx_clarification_inbox`: the questions waiting for `agent`'s answer. */
export async function clarificationInbox(deps: ToolDeps, input: InboxInput): Promise<string> {
  const backend = deps.backend()
  if (!backend) return `AgentX Clarify is not available: ${deps.unavailable?.() ?? 'no workspace is open'}.`
  try {
    const waiting = (await backend.list({})).filter((r) => r.to === input.agent && (r.status === 'pending' || r.status === 'stale'))
    if (waiting.length === 0) return `No clarification waits for ${input.agent}'s answer.`
    const lines = waiting.map((r) => {
      const question = lastOf(r, 'question') ?? ''
      const options = r.options?.length ? `${r.answerKind}, values: ${r.options.map((o) => o.value).join(' | ')}${r.allowOther === false ? ' only' : ''}` : r.answerKind === 'confirm' ? 'confirm, value true or false' : ''
      const extra = [r.field ? `field ${r.field}` : '', r.suggestions?.length ? `acceptable: ${r.suggestions.join(' | ')}` : '', options].filter(Boolean).join('; ')
      return `- ${r.id} (issue #${r.issueNumber}, round ${r.round}/${r.maxRounds}, from ${r.from}${r.blocking ? ', blocking' : ''}) ${r.topic}: ${question}${extra ? ` (${extra})` : ''}`
    })
    return `${waiting.length} clarification${waiting.length === 1 ? '' : 's'} wait for ${input.agent}'s answer (answer with ${ANSWER_TOOL}):\n${lines.join('\n')}`
  } catch (e) {
    return refusal(e)
  }
}

/** Registers the three tools (declared in package.json `contributes.languageModelTools`). */
export function registerTools(deps: ToolDeps): vscode.Disposable[] {
  return [
    vscode.lm.registerTool<RequestInput>(REQUEST_TOOL, {
      prepareInvocation: ({ input }) => ({ invocationMessage: `Asking ${input.to}: ${input.topic}` }),
      invoke: async ({ input }, token) => text(await requestClarification(deps, input, token)),
    }),
    vscode.lm.registerTool<AnswerInput>(ANSWER_TOOL, {
      prepareInvocation: ({ input }) => ({ invocationMessage: `Answering ${input.id} as ${input.from}` }),
      invoke: async ({ input }) => text(await answerClarification(deps, input)),
    }),
    vscode.lm.registerTool<InboxInput>(INBOX_TOOL, {
      prepareInvocation: ({ input }) => ({ invocationMessage: `Reading ${input.agent}'s clarification inbox` }),
      invoke: async ({ input }) => text(await clarificationInbox(deps, input)),
    }),
  ]
}
