// Decides what `@agentx /clarify …` answers: it runs the parsed command against the backend,
// streams the core's markdown, publishes the events of what it changed, and offers the natural
// next step as follow-ups. Errors become a short markdown message with their code, never a
// stack trace.
import * as vscode from 'vscode'
import type { Clarification, ClarifyError, ErrorClass, MonitorReport, StoreAnswerInput, Transitions } from '../../../bindings-node/clarify'
import { READ_ONLY, type Backend } from '../backend'
import type { EventBus } from '../events'
import { describe, routeClarification, type RouteResult } from '../lm/route'
import { helpMarkdown, parseClarify, type Command } from './parse'

export const PARTICIPANT_ID = 'agentx-clarify.agentx'

/** What the follow-up provider needs to know about an answer. */
export interface ClarifyMetadata {
  command: Command['kind'] | 'error'
  /** Records shown or changed, with their status after the command. */
  /** Records shown or changed: their status after the command and the operations it admits
   *  (the core's `transitions` table). */
  records: { id: string; issueNumber: number; status: string; admits: Operation[] }[]
  issue?: number
  /** Escalated by a monitor run. */
  escalated?: string[]
}

export interface Deps {
  backend: () => Backend | undefined
  bus: EventBus
  /** Why no backend is available (shown instead of an answer). */
  unavailable?: () => string | undefined
}

/** Something that takes markdown, like vscode.ChatResponseStream. */
export interface MarkdownSink {
  markdown(value: string | vscode.MarkdownString): void
  progress?(value: string): void
}

/** What a chat request adds to the prompt: its model, its cancellation, the editor's text. */
export interface RequestContext {
  model?: vscode.LanguageModelChat
  token?: vscode.CancellationToken
  /** The agent output `ingest` reads: the selection, else the open file (undefined: none). */
  ingestText?: () => Promise<{ text: string; source: string } | undefined>
}

export async function runClarify(prompt: string, deps: Deps, out: MarkdownSink, request: RequestContext = {}): Promise<ClarifyMetadata> {
  const command = parseClarify(prompt)
  const backend = deps.backend()
  if (command.kind === 'help') {
    out.markdown(helpMarkdown(command.problem, backend ? !backend.canEdit : false))
    return { command: 'help', records: [] }
  }
  if (!backend) {
    out.markdown(
      `**AgentX Clarify is not available:** ${escapeMarkdown(deps.unavailable?.() ?? 'no workspace is open')}`,
    )
    return { command: 'error', records: [] }
  }
  try {
    return await execute(command, backend, deps.bus, out, request)
  } catch (e) {
    const err = e as Partial<ClarifyError>
    // MAX_ROUNDS_EXCEEDED wrote an escalation anyway: the views must see it.
    if (Array.isArray(err.events)) deps.bus.publish(err.events)
    out.markdown(errorMarkdown(e, backend))
    if (err.clarification) out.markdown('\n\n' + backend.render({ view: 'thread', clarification: err.clarification }))
    return { command: 'error', records: err.clarification ? [summaryOf(err.clarification, backend.transitions())] : [] }
  }
}

async function execute(
  command: Exclude<Command, { kind: 'help' }>,
  backend: Backend,
  bus: EventBus,
  out: MarkdownSink,
  request: RequestContext,
): Promise<ClarifyMetadata> {
  const table = backend.transitions()
  const summary = (r: Clarification) => summaryOf(r, table)
  switch (command.kind) {
    case 'list': {
      const records = await backend.list({ all: command.all })
      if (records.length > 0) out.markdown(`${command.all ? 'All' : 'Active'} clarifications in \`${backend.root}\`:\n\n`)
      out.markdown(
        records.length === 0 && command.all ? 'No clarifications yet.' : backend.render({ view: 'list', clarifications: records }),
      )
      return { command: 'list', records: records.map(summary) }
    }
    case 'issue': {
      const { ledger } = await backend.show({ issue: command.issue })
      const records = (ledger?.clarifications ?? []).map((r) => ({ ...r, issueNumber: command.issue }) as Clarification)
      out.markdown(`**Issue #${command.issue}**: ${records.length} clarification${records.length === 1 ? '' : 's'}\n\n`)
      out.markdown(records.map((r) => backend.render({ view: 'thread', clarification: r })).join('\n\n---\n\n'))
      return { command: 'issue', issue: command.issue, records: records.map(summary) }
    }
    case 'show': {
      const { clarification } = await backend.show({ id: command.id })
      if (!clarification) throw Object.assign(new Error(`clarification ${command.id} not found`), { code: 'NOT_FOUND' })
      out.markdown(backend.render({ view: 'thread', clarification }))
      return { command: 'show', issue: clarification.issueNumber, records: [summary(clarification)] }
    }
    case 'stale': {
      const { report, events, dryRun } = await backend.monitor()
      bus.publish(events)
      if (dryRun) out.markdown('_Dry run: the read-only fallback reports what the monitor would do and writes nothing._\n\n')
      out.markdown(backend.render({ view: 'report', report }))
      return { command: 'stale', records: [], escalated: report.escalated.map((e) => e.id) }
    }
    case 'answer': {
      // The person answers for the record's target (the CLI's `clarify answer --from <target>`).
      const shown = (await backend.show({ id: command.id })).clarification
      const value = command.values?.length ? await typedValue(backend, command.id, command.values) : undefined
      const result = await backend.answer({
        id: command.id,
        from: shown?.to ?? '',
        ...(command.message ? { body: command.message } : {}),
        ...(value !== undefined ? { value } : {}),
      } as StoreAnswerInput)
      bus.publish(result.events)
      const r = result.clarification
      out.markdown(`${result.idempotent ? 'Already done' : 'Answered'}: **${r.id}** (issue #${r.issueNumber}) as ${escapeMarkdown(r.to)}.\n\n`)
      out.markdown(backend.render({ view: 'thread', clarification: r }))
      appendReport(result.monitor, backend, out)
      return { command: 'answer', issue: r.issueNumber, records: [summary(r)] }
    }
    case 'resolve':
    case 'escalate': {
      const input = { id: command.id, ...(command.message ? { message: command.message } : {}) }
      const values = command.kind === 'resolve' ? command.values : undefined
      const result =
        command.kind === 'resolve'
          ? await backend.resolve(values?.length ? { ...input, value: await typedValue(backend, command.id, values) } : input)
          : await backend.escalate(input)
      bus.publish(result.events)
      const r = result.clarification
      const verb = command.kind === 'resolve' ? 'Resolved' : 'Escalated'
      out.markdown(`${result.idempotent ? 'Already done' : verb}: **${r.id}** (issue #${r.issueNumber}).\n\n`)
      out.markdown(backend.render({ view: command.kind === 'resolve' ? 'thread' : 'escalation', clarification: r }))
      appendReport(result.monitor, backend, out)
      return { command: command.kind, issue: r.issueNumber, records: [summary(r)] }
    }
    case 'ask': {
      const { kind: _kind, route, ...input } = command
      const result = await backend.ask(input)
      bus.publish(result.events)
      const r = result.clarification
      out.markdown(
        result.idempotent
          ? `Already asked: **${r.id}** (issue #${r.issueNumber}).\n\n`
          : `Asked **${r.id}** on issue #${r.issueNumber}: ${escapeMarkdown(r.from)} waits on ${escapeMarkdown(r.to)}${r.blocking ? ' (blocking)' : ''}.\n\n`,
      )
      if (route && (r.status === 'pending' || r.status === 'stale')) {
        const routed = await routeForChat(backend, bus, r.id, out, request)
        return { command: 'ask', issue: r.issueNumber, records: [summary(routed.record ?? r)] }
      }
      out.markdown(backend.render({ view: 'thread', clarification: r }))
      appendReport(result.monitor, backend, out)
      return { command: 'ask', issue: r.issueNumber, records: [summary(r)] }
    }
    case 'route': {
      const routed = await routeForChat(backend, bus, command.id, out, request)
      return { command: 'route', issue: routed.record?.issueNumber, records: routed.record ? [summary(routed.record)] : [] }
    }
    case 'ingest': {
      const input = await request.ingestText?.()
      if (!input || input.text.trim() === '') {
        out.markdown('**Nothing to ingest:** select the agent\'s output in an editor (or open the file that holds it), then ask again.')
        return { command: 'error', records: [] }
      }
      const report = await backend.ingest({ issue: command.issue, agent: command.agent, ...(command.parent ? { parent: command.parent } : {}), text: input.text })
      bus.publish(report.events)
      out.markdown(ingestMarkdown(report, input.source))
      appendReport(report.monitor, backend, out)
      return { command: 'ingest', issue: command.issue, records: [] }
    }
  }
}

/**
 * Routes `id` for the chat view: progress while the target works, the model's reply streamed
 * as it arrives (quoted: not yet recorded), then what the core made of it.
 */
async function routeForChat(backend: Backend, bus: EventBus, id: string, out: MarkdownSink, request: RequestContext) {
  let streamed = ''
  const onText = (fragment: string) => {
    if (streamed === '') out.markdown('> ')
    streamed += fragment
    out.markdown(escapeMarkdown(fragment).replace(/\n/g, '\n> '))
  }
  const result = await routeClarification(backend, id, { model: request.model, token: request.token, progress: (m) => out.progress?.(m), onText })
  if (result.kind !== 'not-routed') bus.refresh()
  if (streamed !== '') out.markdown('\n\n')
  out.markdown(routeMarkdown(result, streamed !== ''))
  const record = result.kind === 'not-routed' ? undefined : result.record
  if (record) out.markdown('\n\n' + backend.render({ view: 'thread', clarification: record }))
  return { record }
}

/** A routing result in the chat: the answer as a quote (unless it was streamed), or what happened instead. */
export function routeMarkdown(result: RouteResult, streamed = false): string {
  const via = 'via' in result ? (result.via.kind === 'runner' ? ' (its runner)' : ` (through ${escapeMarkdown(result.via.model)})`) : ''
  if (result.kind === 'answered') {
    if (streamed) return `**${escapeMarkdown(result.to)}** answered **${result.id}**${via}: the reply above is recorded as the answer.`
    const quoted = result.answer.split('\n').map((line) => `> ${escapeMarkdown(line)}`).join('\n')
    return `**${escapeMarkdown(result.to)}** answered **${result.id}**${via}:\n\n${quoted}`
  }
  const title = { 'asked-back': 'Asked back', escalated: 'Escalated', superseded: 'Superseded', 'not-routed': 'Not routed' }[result.kind]
  return `**${title}**${via}: ${escapeMarkdown(describe(result))}`
}

type IngestReport = Awaited<ReturnType<Backend['ingest']>>

/** What each signal block did, one line per block. */
export function ingestMarkdown(report: IngestReport, source: string): string {
  const lines = report.blocks.map((b) => {
    const detail = [b.status ?? '', b.reason ?? b.error?.message ?? ''].filter(Boolean).join(' ')
    return `- \`[${b.block}]\` line ${b.startLine}: ${b.outcome}${b.id ? ` **${b.id}**` : ''}${detail ? ` — ${escapeMarkdown(detail)}` : ''}`
  })
  const problems = report.problems.map((p) => `- line ${p.line}: ${escapeMarkdown(p.message)}`)
  const head = `Ingested ${report.blocks.length} signal block${report.blocks.length === 1 ? '' : 's'} of **${escapeMarkdown(report.agent)}** on issue #${report.issueNumber} from \`${source.replace(/`/g, "'")}\``
  return [head + (lines.length ? ':' : '.'), '', ...lines, ...(problems.length ? ['', 'Problems:', ...problems] : [])].join('\n')
}

function appendReport(report: MonitorReport | undefined, backend: Backend, out: MarkdownSink): void {
  if (!report) return
  const acted =
    report.stale.length + report.escalated.length + report.stuck.length + report.deadlocks.length + report.abandoned.length
  if (acted > 0) out.markdown('\n\n' + backend.render({ view: 'report', report }))
}

type Operation = keyof Transitions

function summaryOf(r: Clarification, table: Transitions): ClarifyMetadata['records'][number] {
  const admits = (Object.keys(table) as Operation[]).filter((op) => table[op][r.status] !== undefined)
  return { id: r.id, issueNumber: r.issueNumber, status: r.status, admits }
}

/** A refusal's title by the class the core gives its code (`errorCodes`). */
const TITLES: Partial<Record<ErrorClass, string>> = {
  policy: 'Refused',
  input: 'Invalid input',
  'not-found': 'Not found',
  transition: 'Not possible now',
}

const HINTS: Record<string, string> = {
  SCOPE_VIOLATION:
    "The workflow decides who may ask whom: see `can_clarify` of the asking agent's step in `.agentx/workflows/`. Nothing was written.",
  BLOCKING_NOT_ALLOWED: 'This step does not allow blocking requests: ask again with `--non-blocking`. Nothing was written.',
  MAX_ROUNDS_EXCEEDED: 'The thread used all its rounds and was escalated to a human: resolve it with `/clarify resolve <id> text`.',
  NOT_PARTICIPANT: 'Only the agents of the thread (or a human, on an escalated record) may do this.',
  IDEMPOTENCY_CONFLICT: 'The idempotency key is already used by a different request.',
  NOT_FOUND: 'List the open ones with `/clarify`.',
  INVALID_TRANSITION: 'Show the thread with `/clarify show <id>` to see where it stands.',
  READ_ONLY: 'Reading, rendering and the dry-run monitor still work.',
  LOCK_TIMEOUT: 'Another process held the ledger lock too long; try again.',
  LEDGER_CORRUPT: 'The ledger file does not parse; it was left untouched. Check it with `agentx clarify verify`.',
}

/**
 * A refusal or failure as markdown: what kind (the class `backend` knows for the code; the
 * extension's own `READ_ONLY` is read-only), the stable code, the message, a hint.
 */
export function errorMarkdown(e: unknown, backend?: Pick<Backend, 'errorClass'>): string {
  const err = e as Partial<ClarifyError> & { code?: string }
  const message = e instanceof Error ? e.message : String(e)
  const code: string | undefined = typeof err.code === 'string' ? err.code : undefined
  if (!code) return `**Something went wrong:** ${escapeMarkdown(firstLine(message))}`
  const kind = backend?.errorClass(code)
  const title = code === READ_ONLY ? 'Read-only' : ((kind && TITLES[kind]) ?? 'Failed')
  const hint = HINTS[code]
  return `**${title}** \`${code}\`: ${escapeMarkdown(firstLine(message))}${hint ? `\n\n${hint}` : ''}`
}

function firstLine(text: string): string {
  return text.split('\n')[0]
}

/** Escapes text so it cannot open markdown constructs (links, emphasis, code, html). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+!|<>~]/g, '\\$&')
}

/** The next natural steps after an answer. */
export function followUps(meta: ClarifyMetadata | undefined): vscode.ChatFollowup[] {
  if (!meta) return []
  const out: vscode.ChatFollowup[] = []
  const add = (prompt: string, label: string) => {
    if (out.length < 4 && !out.some((f) => f.prompt === prompt)) out.push({ prompt, label, command: 'clarify' })
  }
  const records = meta.records
  switch (meta.command) {
    case 'list': {
      for (const r of records.slice(0, 2)) add(`show ${r.id}`, `Show the thread of ${r.id}`)
      const closable = records.find((r) => r.admits.includes('resolve'))
      if (closable) add(`resolve ${closable.id}`, `Resolve ${closable.id}`)
      add('stale', 'Run the monitor')
      break
    }
    case 'issue':
    case 'show':
      for (const r of records) {
        if (r.admits.includes('resolve')) add(`resolve ${r.id}`, `Resolve ${r.id}`)
      }
      if (meta.command === 'show') {
        // Escalation is offered where the requester cannot close the record yet (an answered one
        // is resolved, not escalated, as its natural next step).
        for (const r of records) if (r.admits.includes('escalate') && !r.admits.includes('resolve')) add(`escalate ${r.id}`, `Escalate ${r.id}`)
        if (meta.issue !== undefined) add(`#${meta.issue}`, `Show every thread of issue #${meta.issue}`)
      } else {
        for (const r of records) if (r.admits.length > 0) add(`show ${r.id}`, `Show the thread of ${r.id}`)
      }
      add('stale', 'Run the monitor')
      break
    case 'stale':
      for (const id of meta.escalated ?? []) add(`show ${id}`, `Show the thread of ${id}`)
      add('', 'List active clarifications')
      break
    case 'answer':
    case 'resolve':
    case 'escalate':
    case 'ask':
    case 'route':
      for (const r of records) add(`show ${r.id}`, `Show the thread of ${r.id}`)
      if (meta.issue !== undefined) add(`#${meta.issue}`, `Show every thread of issue #${meta.issue}`)
      add('', 'List active clarifications')
      break
    case 'ingest':
      if (meta.issue !== undefined) add(`#${meta.issue}`, `Show every thread of issue #${meta.issue}`)
      add('', 'List active clarifications')
      break
    case 'help':
    case 'error':
      add('', 'List active clarifications')
      add('stale', 'Run the monitor')
      break
  }
  return out
}

/** The agent output for `ingest`: an attached selection or file, else the active editor's selection or document. */
async function editorText(request: vscode.ChatRequest): Promise<{ text: string; source: string } | undefined> {
  for (const ref of request.references) {
    const value = ref.value
    if (value instanceof vscode.Location) {
      const doc = await vscode.workspace.openTextDocument(value.uri)
      return { text: doc.getText(value.range), source: `${vscode.workspace.asRelativePath(value.uri)} (selection)` }
    }
    if (value instanceof vscode.Uri) {
      const doc = await vscode.workspace.openTextDocument(value)
      return { text: doc.getText(), source: vscode.workspace.asRelativePath(value) }
    }
  }
  const editor = vscode.window.activeTextEditor
  if (!editor) return undefined
  const selected = !editor.selection.isEmpty
  return {
    text: selected ? editor.document.getText(editor.selection) : editor.document.getText(),
    source: `${vscode.workspace.asRelativePath(editor.document.uri)}${selected ? ' (selection)' : ''}`,
  }
}

/** Registers `@agentx` with its `/clarify` command. */
export function registerParticipant(deps: Deps, extensionUri: vscode.Uri): vscode.ChatParticipant {
  const handler: vscode.ChatRequestHandler = async (request, _context, stream, token) => {
    const metadata = await runClarify(request.prompt, deps, stream, {
      model: request.model,
      token,
      ingestText: () => editorText(request),
    })
    return { metadata }
  }
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler)
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'agentx.svg')
  participant.followupProvider = {
    provideFollowups: (result) => followUps(result.metadata as ClarifyMetadata | undefined),
  }
  return participant
}

/**
 * The typed value (docs/protocol.md §22) that `--value` words stand for, by the record's answer kind:
 * yes/no for confirm, one option for choice, several for multi_choice. The core checks it.
 */
async function typedValue(backend: Backend, id: string, words: string[]): Promise<boolean | string | string[]> {
  const record = (await backend.show({ id })).clarification
  const kind = record?.answerKind
  if (kind === 'multi_choice') return words
  if (kind === 'confirm' && words.length === 1) {
    const w = words[0].toLowerCase()
    if (w === 'yes' || w === 'true') return true
    if (w === 'no' || w === 'false') return false
  }
  return words.length === 1 ? words[0] : words
}
