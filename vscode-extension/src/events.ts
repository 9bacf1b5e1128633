// Decides when the views re-read the workspace. Two sources feed one bus:
//  - the docs/protocol.md §10 events every mutation and monitor run returns (published by whoever ran it:
//    the chat participant, a command, the monitor-on-change loop), and
//  - a file watcher on `.agentx/state/`, for changes made outside this window (the CLI in a
//    terminal, another window, a Node script).
// Subscribers get one `onDidChange` for both; `onEvents` carries the events themselves.
import * as path from 'node:path'
import * as vscode from 'vscode'
import type { ClarifyEvent } from '../../bindings-node/clarify'

export type Change =
  | { source: 'events'; events: ClarifyEvent[] }
  | { source: 'files'; files: string[] }
  | { source: 'refresh' }

export const EVENT_TYPES = [
  'clarification-requested',
  'clarification-answered',
  'clarification-stale',
  'clarification-resolved',
  'clarification-escalated',
  'clarification-abandoned',
] as const

export class EventBus implements vscode.Disposable {
  private readonly events = new vscode.EventEmitter<ClarifyEvent[]>()
  private readonly changes = new vscode.EventEmitter<Change>()
  /** The §10 events of an applied operation or monitor run, in the order written. */
  readonly onEvents = this.events.event
  /** Anything that may have changed the state on disk. */
  readonly onDidChange = this.changes.event

  /** Publishes what an operation returned; an empty list still means "state may differ". */
  publish(events: readonly ClarifyEvent[] | undefined): void {
    const list = [...(events ?? [])]
    if (list.length > 0) this.events.fire(list)
    this.changes.fire({ source: 'events', events: list })
  }

  filesChanged(files: string[]): void {
    this.changes.fire({ source: 'files', files })
  }

  refresh(): void {
    this.changes.fire({ source: 'refresh' })
  }

  dispose(): void {
    this.events.dispose()
    this.changes.dispose()
  }
}

/** Lock files and the store's temp files come and go on every write: not a state change. */
export function isStateFile(file: string): boolean {
  const name = path.basename(file)
  return !name.endsWith('.lock') && !name.startsWith('.agentx-tmp-')
}

/**
 * Watches `<root>/.agentx/state/**` and reports changed files to the bus, coalesced over
 * `debounceMs` (an atomic write is a create, a change and a rename in quick succession).
 */
export function watchState(root: string, bus: EventBus, debounceMs = 75): vscode.Disposable {
  const watcher = vscode.workspace.createFileSystemWatcher(
    new vscode.RelativePattern(vscode.Uri.file(root), '.agentx/state/**'),
  )
  let pending = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  const onFile = (uri: vscode.Uri) => {
    if (!isStateFile(uri.fsPath)) return
    pending.add(uri.fsPath)
    if (timer) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = undefined
      const files = [...pending].sort()
      pending = new Set()
      bus.filesChanged(files)
    }, debounceMs)
  }
  const subscriptions = [
    watcher,
    watcher.onDidCreate(onFile),
    watcher.onDidChange(onFile),
    watcher.onDidDelete(onFile),
  ]
  return new vscode.Disposable(() => {
    if (timer) clearTimeout(timer)
    for (const s of subscriptions) s.dispose()
  })
}
