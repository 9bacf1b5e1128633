// Decides what the palette and view commands do: the same actions as the chat participant
// (show, run the monitor, resolve, escalate), with quick picks and input boxes instead of
// arguments, and the core's markdown shown in a read-only preview document.
import * as vscode from 'vscode'
import type { Clarification, Status } from '../../bindings-node/clarify'
import type { Backend } from './backend'
import { errorMarkdown } from './chat/participant'
import type { EventBus } from './events'

export const DOC_SCHEME = 'agentx-clarify'

/** Read-only markdown documents (`agentx-clarify:/<name>.md`) whose content the commands set. */
export class MarkdownDocs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>()
  private readonly changed = new vscode.EventEmitter<vscode.Uri>()
  readonly onDidChange = this.changed.event

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? ''
  }

  /** Sets the document's content and opens its preview. */
  async show(name: string, markdown: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.from({ scheme: DOC_SCHEME, path: `/${name}.md` })
    this.contents.set(uri.path, markdown)
    this.changed.fire(uri)
    try {
      await vscode.commands.executeCommand('markdown.showPreview', uri)
    } catch {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true })
    }
    return uri
  }

  get(name: string): string | undefined {
    return this.contents.get(`/${name}.md`)
  }

  dispose(): void {
    this.changed.dispose()
  }
}

export interface CommandDeps {
  backend: () => Backend | undefined
  bus: EventBus
  docs: MarkdownDocs
  unavailable?: () => string | undefined
}

/** A command argument: an id, a tree item carrying a record or an agent's clarification. */
function idOf(arg: unknown): string | undefined {
  if (typeof arg === 'string' && arg.trim() !== '') return arg.trim()
  if (arg && typeof arg === 'object') {
    const o = arg as { record?: Clarification; status?: { clarificationId?: string | null } }
    if (o.record?.id) return o.record.id
    if (o.status?.clarificationId) return o.status.clarificationId
  }
  return undefined
}

function plain(e: unknown, backend: Backend | undefined): string {
  // The chat's markdown error, without markdown: for notifications.
  return errorMarkdown(e, backend).replace(/\*\*/g, '').replace(/`/g, '').replace(/\\(.)/g, '$1').replace(/\n\n/g, ' ')
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const need = (): Backend | undefined => {
    const backend = deps.backend()
    if (!backend) void vscode.window.showErrorMessage(`AgentX Clarify: ${deps.unavailable?.() ?? 'no workspace is open'}`)
    return backend
  }

  const pick = async (backend: Backend, statuses: Status[], placeHolder: string): Promise<string | undefined> => {
    const records = (await backend.list({ all: true })).filter((r) => statuses.includes(r.status))
    if (records.length === 0) {
      void vscode.window.showInformationMessage(`AgentX Clarify: no clarification is ${statuses.join(' or ')}.`)
      return undefined
    }
    const chosen = await vscode.window.showQuickPick(
      records.map((r) => ({
        label: r.id,
        description: `${r.from} -> ${r.to} · ${r.status}`,
        detail: r.topic,
      })),
      { placeHolder, matchOnDescription: true, matchOnDetail: true },
    )
    return chosen?.label
  }

  const guarded =
    (fn: (...args: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]) => {
      try {
        return await fn(...args)
      } catch (e) {
        const err = e as { events?: unknown }
        if (Array.isArray(err.events)) deps.bus.publish(err.events)
        void vscode.window.showErrorMessage(`AgentX Clarify: ${plain(e, deps.backend())}`)
        return undefined
      }
    }

  const close = (kind: 'resolve' | 'escalate') =>
    guarded(async (arg?: unknown) => {
      const backend = need()
      if (!backend) return undefined
      const id =
        idOf(arg) ??
        (await pick(
          backend,
          Object.keys(backend.transitions()[kind]) as Status[],
          kind === 'resolve' ? 'Resolve which clarification?' : 'Escalate which clarification?',
        ))
      if (!id) return undefined
      const message = await vscode.window.showInputBox({
        title: `${kind === 'resolve' ? 'Resolve' : 'Escalate'} ${id}`,
        prompt: kind === 'resolve' ? 'The decision (optional)' : 'The reason (optional)',
      })
      if (message === undefined) return undefined
      const input = { id, ...(message.trim() ? { message: message.trim() } : {}) }
      const result = kind === 'resolve' ? await backend.resolve(input) : await backend.escalate(input)
      deps.bus.publish(result.events)
      void vscode.window.showInformationMessage(
        `AgentX Clarify: ${result.clarification.id} is ${result.clarification.status}.`,
      )
      return result
    })

  return [
    vscode.commands.registerCommand(
      'agentx.showClarifications',
      guarded(async () => {
        const backend = need()
        if (!backend) return undefined
        const records = await backend.list({})
        return deps.docs.show('clarifications', backend.render({ view: 'list', clarifications: records }))
      }),
    ),
    vscode.commands.registerCommand(
      'agentx.showClarification',
      guarded(async (arg?: unknown) => {
        const backend = need()
        if (!backend) return undefined
        const id = idOf(arg) ?? (await pick(backend, ['pending', 'stale', 'answered', 'escalated', 'resolved', 'abandoned'], 'Show which clarification?'))
        if (!id) return undefined
        const { clarification } = await backend.show({ id })
        if (!clarification) return undefined
        return deps.docs.show(id, backend.render({ view: 'thread', clarification }))
      }),
    ),
    vscode.commands.registerCommand(
      'agentx.runMonitor',
      guarded(async () => {
        const backend = need()
        if (!backend) return undefined
        const { report, events, dryRun } = await backend.monitor()
        deps.bus.publish(events)
        const text = backend.render({ view: 'report', report })
        return deps.docs.show('monitor', (dryRun ? '_Dry run: the read-only fallback writes nothing._\n\n' : '') + text)
      }),
    ),
    vscode.commands.registerCommand('agentx.resolveClarification', close('resolve')),
    vscode.commands.registerCommand('agentx.escalateClarification', close('escalate')),
    vscode.commands.registerCommand('agentx.refresh', () => deps.bus.refresh()),
  ]
}
