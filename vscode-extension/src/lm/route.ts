// Decides who answers a pending clarification from inside VS Code (docs/protocol.md §14.3): the target's
// CLI runner when `.agentx/config.toml` has one (the store's `route`, exactly the CLI's),
// else the user's chat model (`vscode.lm`) with the core's prompt and the target's persona,
// its reply read by the core's interpretation (answer / asked back / stopped / agent error)
// and recorded under the ledger lock. Nothing here writes text of its own into a ledger: an
// outcome without an answer is reported as such.
import * as vscode from 'vscode'
import type { Clarification, ClarifyError } from '../../../bindings-node/clarify'
import type { Backend } from '../backend'

export type RouteResult =
  /** The target answered; `answer` is its text as recorded. */
  | { kind: 'answered'; id: string; to: string; answer: string; via: Via; record: Clarification }
  /** The target asked a question back instead (a new record, `askedBack`). */
  | { kind: 'asked-back'; id: string; to: string; askedBack?: Clarification; via: Via; record: Clarification }
  /** Escalated to a human: the target stopped, or failed (`agentError`). */
  | { kind: 'escalated'; id: string; to: string; reason: string; agentError: boolean; via: Via; record?: Clarification }
  /** Someone else acted on the record first: nothing was written; `record` is how it stands. */
  | { kind: 'superseded'; id: string; to: string; via: Via; record?: Clarification }
  /** Not routed; the record stays pending for its target or the monitor. */
  | { kind: 'not-routed'; id: string; to: string; reason: string; cancelled: boolean }

/** How the question reached the target. */
export type Via = { kind: 'runner' } | { kind: 'chat-model'; model: string }

export interface RouteOptions {
  token?: vscode.CancellationToken
  /** The chat request's model: used unless `agentx.routing.modelFamily` names a family. */
  model?: vscode.LanguageModelChat
  /** Told before a model request starts (the chat view shows it as progress). */
  progress?: (message: string) => void
  /** Each fragment of the model's reply as it arrives (not yet interpreted nor recorded). */
  onText?: (fragment: string) => void
}

/** The routing settings (`agentx.routing.*`). */
export function routingSettings(): { chatModel: boolean; modelFamily: string } {
  const config = vscode.workspace.getConfiguration('agentx')
  return {
    chatModel: config.get<boolean>('routing.chatModel', true),
    modelFamily: (config.get<string>('routing.modelFamily', '') ?? '').trim(),
  }
}

/** The chat model the settings choose: of `agentx.routing.modelFamily` when set, else the first. */
export async function selectModel(family: string): Promise<vscode.LanguageModelChat | undefined> {
  const models = await vscode.lm.selectChatModels(family ? { family } : {})
  return models[0]
}

/** Routes pending record `id` once. Refusals of the store (not found, not pending…) throw. */
export async function routeClarification(backend: Backend, id: string, options: RouteOptions = {}): Promise<RouteResult> {
  const { clarification } = await backend.show({ id })
  if (!clarification) throw Object.assign(new Error(`clarification ${id} not found`), { code: 'NOT_FOUND' })
  const to = clarification.to
  const cancelled = (): RouteResult => ({
    kind: 'not-routed',
    id,
    to,
    cancelled: true,
    reason: 'routing was cancelled before the answer was recorded',
  })
  if (options.token?.isCancellationRequested) return cancelled()

  if ((await backend.runner(to)) !== undefined) {
    // A CLI process: the native store runs it to the end (bounded by the runner's timeout).
    options.progress?.(`Running the ${to} runner of .agentx/config.toml…`)
    return fromStore(id, to, { kind: 'runner' }, () => backend.route(id))
  }

  const settings = routingSettings()
  if (!settings.chatModel) {
    return { kind: 'not-routed', id, to, cancelled: false, reason: `${to} has no runner in .agentx/config.toml and routing through the chat model is off (agentx.routing.chatModel)` }
  }
  const model = (!settings.modelFamily && options.model) || (await selectModel(settings.modelFamily))
  if (!model) {
    const which = settings.modelFamily ? ` of the family '${settings.modelFamily}' (agentx.routing.modelFamily)` : ''
    return { kind: 'not-routed', id, to, cancelled: false, reason: `${to} has no runner in .agentx/config.toml and no chat model${which} is available` }
  }
  const prompt = await backend.chatPrompt({ id })
  if (options.token?.isCancellationRequested) return cancelled()
  options.progress?.(`Asking ${to} through ${model.name}…`)
  const via: Via = { kind: 'chat-model', model: model.id }
  let reply: { reply: string } | { error: string }
  try {
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User(prompt.prompt)],
      { justification: `AgentX routes ${prompt.from}'s question ${id} to ${to}, answering as ${to}.` },
      options.token,
    )
    let text = ''
    for await (const fragment of response.text) {
      if (options.token?.isCancellationRequested) return cancelled()
      text += fragment
      options.onText?.(fragment)
    }
    reply = { reply: text }
  } catch (e) {
    if (options.token?.isCancellationRequested) return cancelled()
    reply = { error: modelError(e) }
  }
  if (options.token?.isCancellationRequested) return cancelled()
  return fromStore(id, to, via, () => backend.chatReply({ id, round: prompt.round, model: model.id, ...reply }))
}

/** A model failure in one line: the LanguageModelError code when there is one. */
function modelError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e)
  const code = e instanceof vscode.LanguageModelError && e.code ? `${e.code}: ` : ''
  return `${code}${message}`.split('\n')[0] || 'the request failed without a message'
}

type Routed = { outcome: string; clarification: Clarification; askedBack?: Clarification }

/** The store's routing document (or its AGENT_ERROR, which carries the escalated record) as a result. */
async function fromStore(id: string, to: string, via: Via, run: () => Promise<Routed>): Promise<RouteResult> {
  let routed: Routed
  try {
    routed = await run()
  } catch (e) {
    const err = e as Partial<ClarifyError> & { code?: string; clarification?: Clarification }
    if (err.code !== 'AGENT_ERROR') throw e
    return { kind: 'escalated', id, to, via, agentError: true, record: err.clarification, reason: lastOf(err.clarification, 'escalation') ?? (e as Error).message }
  }
  const record = routed.clarification
  switch (routed.outcome) {
    case 'answered':
      return { kind: 'answered', id, to, via, record, answer: lastOf(record, 'answer', to) ?? '' }
    case 'asked-back':
      return { kind: 'asked-back', id, to, via, record, askedBack: routed.askedBack }
    case 'escalated':
      return { kind: 'escalated', id, to, via, record, agentError: false, reason: lastOf(record, 'escalation') ?? 'escalated' }
    default:
      return { kind: 'superseded', id, to, via, record: record ?? undefined }
  }
}

/** The body of the last entry of `type` (by `from`, when given) in the record's thread. */
export function lastOf(record: Clarification | undefined, type: string, from?: string): string | undefined {
  const entries = (record?.thread ?? []).filter((e) => e.type === type && (from === undefined || e.from === from))
  return entries[entries.length - 1]?.body
}

/** The result in words for the asking agent (a tool result) — the answer, or what happened instead. */
export function describe(result: RouteResult): string {
  const id = result.id
  switch (result.kind) {
    case 'answered':
      return `[Clarification from ${result.to}]\n${result.answer}`
    case 'asked-back': {
      const back = result.askedBack
      const question = back ? lastOf(back, 'question') : undefined
      return back
        ? `${id} is not answered yet: ${result.to} asked a question back first (${back.id}, to ${back.to}${question ? `: ${question}` : ''}). Wait for it to be answered; do not guess.`
        : `${id} is not answered yet: ${result.to} asked a question back first. Do not guess.`
    }
    case 'escalated':
      return `${id} was escalated to a human${result.agentError ? ` because ${result.to} failed to answer` : ''}: ${result.reason}. There is no answer yet; do not guess — wait for the human's decision or work on something that does not depend on it.`
    case 'superseded': {
      const r = result.record
      const answer = r && lastOf(r, 'answer', result.to)
      if (r && answer !== undefined && (r.status === 'answered' || r.status === 'resolved')) return `[Clarification from ${result.to}]\n${answer}`
      return `${id} was acted on elsewhere while it was being routed; it is now ${r?.status ?? 'unknown'}. No answer was recorded by this request.`
    }
    case 'not-routed':
      return `${id} is asked and pending for ${result.to}, but not answered: ${result.reason}. It waits for ${result.to} to answer (or for the monitor); do not guess.`
  }
}
