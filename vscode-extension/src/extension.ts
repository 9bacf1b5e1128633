// Wires the extension together: finds the workspace root, loads the backend (native addon,
// else the read-only wasm fallback), and connects the event bus, the file watcher, the trees,
// the status bar, the commands and the chat participant. Everything re-wires when the
// `agentx.root` setting or the workspace folders change.
import * as vscode from 'vscode'
import { defaultLoadOptions, loadBackend, type Backend, type LoadOptions } from './backend'
import { registerParticipant } from './chat/participant'
import { DOC_SCHEME, MarkdownDocs, registerCommands } from './commands'
import { EventBus, watchState } from './events'
import { cliPath, registerMcp } from './lm/mcp'
import { registerTools } from './lm/tools'
import { discoverRoot, resolveRoot } from './root'
import { ClarifyStatusBar } from './statusBar'
import { AgentsTree } from './trees/agents'
import { ReadyTree } from './trees/ready'

/** What `activate` returns: handles for tests and for other extensions. */
export interface ClarifyApi {
  bus: EventBus
  backend(): Backend | undefined
  /** Why there is no backend, when there is none. */
  problem(): string | undefined
  agents: AgentsTree
  ready: ReadyTree
  statusBar: ClarifyStatusBar
  docs: MarkdownDocs
  /** Re-reads the settings and reloads the backend. */
  reload(): void
  /** Resolves once the monitor-on-change run triggered by the latest change is done. */
  idle(): Promise<void>
}

/** How often the views ask the store's change feed (a look costs a few `stat`s, or nothing
 * until PostgreSQL signals a write). */
const FEED_EVERY_MS = 1000

export function activate(context: vscode.ExtensionContext, loadOptions?: LoadOptions): ClarifyApi {
  const bus = new EventBus()
  const log = vscode.window.createOutputChannel('AgentX Clarify', { log: true })
  let backend: Backend | undefined
  let problem: string | undefined
  let watcher: vscode.Disposable | undefined

  const reload = () => {
    watcher?.dispose()
    watcher = undefined
    const config = vscode.workspace.getConfiguration('agentx')
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath)
    const root = resolveRoot(config.get<string>('root'), folders)
    backend = undefined
    problem = undefined
    if (!root) {
      problem = 'open a folder (or set `agentx.root`) to use AgentX Clarify'
      log.info(problem)
    } else {
      try {
        const defaults = defaultLoadOptions(context.extensionPath)
        backend = loadBackend(root, { ...defaults, ...loadOptions })
        log.info(`workspace ${root}: ${backend.kind} backend, core ${backend.version()}`)
        if (backend.fallbackReason) log.warn(`read-only: ${backend.fallbackReason}`)
      } catch (e) {
        problem = e instanceof Error ? e.message : String(e)
        log.error(problem)
      }
      watcher = watchState(root, bus)
    }
    void vscode.commands.executeCommand('setContext', 'agentx.readOnly', backend ? !backend.canEdit : false)
    bus.refresh()
  }

  const current = () => backend
  const unavailable = () => problem
  // The store's change feed (docs/protocol.md §21), for what the file watcher cannot see: a
  // state in PostgreSQL, written from another machine.
  const feedTimer = setInterval(() => {
    if (backend?.changed()) bus.refresh()
  }, FEED_EVERY_MS)
  feedTimer.unref?.()
  const docs = new MarkdownDocs()
  const agents = new AgentsTree(current, bus)
  const ready = new ReadyTree(current, bus)
  const statusBar = new ClarifyStatusBar(current, bus)
  const readyView = vscode.window.createTreeView('agentx.ready', { treeDataProvider: ready, showCollapseAll: true })
  ready.onDidLoad((issues) => {
    log.debug(`ready queue: ${issues.map((i) => `#${i.issueNumber}${i.blocked.length ? ' blocked' : ' ready'}`).join(', ')}`)
    const blocked = issues.filter((i) => i.blocked.length > 0).length
    readyView.badge = blocked > 0 ? { value: blocked, tooltip: `${blocked} blocked issue${blocked === 1 ? '' : 's'}` } : undefined
  })

  // docs/protocol.md §7: the monitor runs on ledger changes. Its own writes trigger one more (empty) run,
  // and a second run on its result writes nothing, so this settles.
  let monitorRun: Promise<void> = Promise.resolve()
  let monitorTimer: NodeJS.Timeout | undefined
  const scheduleMonitor = () => {
    if (monitorTimer) clearTimeout(monitorTimer)
    monitorTimer = setTimeout(() => {
      monitorTimer = undefined
      const b = backend
      if (!b || !b.canEdit || !vscode.workspace.getConfiguration('agentx').get<boolean>('monitorOnChange', true)) return
      monitorRun = monitorRun.then(async () => {
        try {
          const { events } = await b.monitor()
          log.debug(`monitor after a change: ${events.length} events`)
          if (events.length > 0) bus.publish(events)
        } catch (e) {
          // a lock timeout or a corrupt ledger: the next change retries; `/clarify stale` shows it
          log.warn(`monitor after a change: ${e instanceof Error ? e.message : String(e)}`)
        }
      })
    }, 250)
  }

  context.subscriptions.push(
    log,
    bus.onEvents((events) => {
      for (const e of events) log.info(`event ${e.type} ${e.clarificationId} by ${e.actor}${e.reason ? `: ${e.reason}` : ''}`)
    }),
    bus.onDidChange((change) => {
      if (change.source === 'files') log.debug(`changed on disk: ${change.files.join(', ')}`)
    }),
    bus,
    docs,
    agents,
    ready,
    statusBar,
    readyView,
    vscode.window.registerTreeDataProvider('agentx.agents', agents),
    vscode.window.registerFileDecorationProvider(ready),
    vscode.workspace.registerTextDocumentContentProvider(DOC_SCHEME, docs),
    ...registerCommands({ backend: current, bus, docs, unavailable }),
    registerParticipant({ backend: current, bus, unavailable }, context.extensionUri),
    ...registerTools({ backend: current, bus, unavailable }),
    ...registerMcp(cliPath(context.extensionPath), mcpRoots, extensionVersion(context), log),
    bus.onDidChange((change) => {
      if (change.source === 'files') scheduleMonitor()
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentx.root')) reload()
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => reload()),
    { dispose: () => watcher?.dispose() },
    { dispose: () => monitorTimer && clearTimeout(monitorTimer) },
    { dispose: () => clearInterval(feedTimer) },
  )

  reload()
  return {
    bus,
    backend: current,
    problem: unavailable,
    agents,
    ready,
    statusBar,
    docs,
    reload,
    idle: async () => {
      while (monitorTimer) await new Promise((r) => setTimeout(r, 20))
      await monitorRun
    },
  }
}

/** One `agentx mcp` per workspace root: the configured root, else each folder's discovered one. */
function mcpRoots(): string[] {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath)
  const configured = vscode.workspace.getConfiguration('agentx').get<string>('root')
  if (configured?.trim()) {
    const root = resolveRoot(configured, folders)
    return root ? [root] : []
  }
  return folders.map((folder) => discoverRoot(folder) ?? folder)
}

function extensionVersion(context: vscode.ExtensionContext): string {
  return String((context.extension?.packageJSON as { version?: unknown } | undefined)?.version ?? '0.0.0')
}

export function deactivate(): void {
  // everything is in context.subscriptions
}
