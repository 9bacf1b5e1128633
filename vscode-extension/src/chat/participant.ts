// Decides what `@agentx /clarify …` answers: it runs the parsed command against the backend,
// streams the core's markdown, publishes the events of what it changed, and offers the natural
// next step as follow-ups. Errors become a short markdown message with their code, never a
// stack trace.
import * as vscode from 'vscode'
import type { Clarification, ClarifyError, ErrorClass, MonitorReport, Transitions } from '../../../bindings-node/clarify'
import { READ_ONLY, type Backend } from '../backend'
import type { EventBus } from '../events'
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
}

export async function runClarify(prompt: string, deps: Deps, out: MarkdownSink): Promise<ClarifyMetadata> {
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
    return await execute(command, backend, deps.bus, out)
  } catch (e) {
    const err = e as Partial<ClarifyError>
    // MAX_ROUNDS_EXCEEDED wrote an escalation anyway: the views must see it.
    if (Array.isArray(err.events)) deps.bus.publish(err.events)
    out.markdown(errorMarkdown(e, backend))
    if (err.clarification) out.markdown('\n\n' + backend.render({ view: 'thread', clarification: err.clarification }))
    return { command: 'error', records: err.clarification ? [summaryOf(err.clarification, backend.transitions())] : [] }
  }
}

async function execute(command: Exclude<Command, { kind: 'help' }>, backend: Backend, bus: EventBus, out: MarkdownSink): Promise<ClarifyMetadata> {
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
    case 'resolve':
    case 'escalate': {
      const input = { id: command.id, ...(command.message ? { message: command.message } : {}) }
      const result = command.kind === 'resolve' ? await backend.resolve(input) : await backend.escalate(input)
      bus.publish(result.events)
      const r = result.clarification
      const verb = command.kind === 'resolve' ? 'Resolved' : 'Escalated'
      out.markdown(`${result.idempotent ? 'Already done' : verb}: **${r.id}** (issue #${r.issueNumber}).\n\n`)
      out.markdown(backend.render({ view: command.kind === 'resolve' ? 'thread' : 'escalation', clarification: r }))
      appendReport(result.monitor, backend, out)
      return { command: command.kind, issue: r.issueNumber, records: [summary(r)] }
    }
    case 'ask': {
      const { kind: _kind, ...input } = command
      const result = await backend.ask(input)
      bus.publish(result.events)
      const r = result.clarification
      out.markdown(
        result.idempotent
          ? `Already asked: **${r.id}** (issue #${r.issueNumber}).\n\n`
          : `Asked **${r.id}** on issue #${r.issueNumber}: ${escapeMarkdown(r.from)} waits on ${escapeMarkdown(r.to)}${r.blocking ? ' (blocking)' : ''}.\n\n`,
      )
      out.markdown(backend.render({ view: 'thread', clarification: r }))
      appendReport(result.monitor, backend, out)
      return { command: 'ask', issue: r.issueNumber, records: [summary(r)] }
    }
  }
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
    case 'resolve':
    case 'escalate':
    case 'ask':
      for (const r of records) add(`show ${r.id}`, `Show the thread of ${r.id}`)
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

/** Registers `@agentx` with its `/clarify` command. */
export function registerParticipant(deps: Deps, extensionUri: vscode.Uri): vscode.ChatParticipant {
  const handler: vscode.ChatRequestHandler = async (request, _context, stream) => {
    const metadata = await runClarify(request.prompt, deps, stream)
    return { metadata }
  }
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler)
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'agentx.svg')
  participant.followupProvider = {
    provideFollowups: (result) => followUps(result.metadata as ClarifyMetadata | undefined),
  }
  return participant
}
