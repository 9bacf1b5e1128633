// Decides which implementation of the core the extension talks to. The native addon
// (@agentx/clarify-node) mutates ledgers through its locked file store, exactly like the
// `agentx` CLI. When it cannot load (another platform, a missing .node file) the wasm package
// (@agentx/clarify-wasm) still reads and renders: it gets the raw files from here and never
// writes. Both are behind one interface, so the chat participant, the trees and the commands
// never ask which one they have.
import * as fs from 'node:fs'
import * as path from 'node:path'
import type * as T from '../../bindings-node/clarify'

/** Code of the error a mutation throws in read-only (wasm) mode. */
export const READ_ONLY = 'READ_ONLY'

export interface Backend {
  readonly kind: 'native' | 'wasm'
  readonly root: string
  /** Why the native addon did not load (wasm mode only). */
  readonly fallbackReason?: string
  readonly canEdit: boolean
  list(input?: { issue?: number; all?: boolean }): Promise<T.Clarification[]>
  show(input: { id?: string; issue?: number }): Promise<T.ShowResult>
  /**
   * Every ledger's ready line, read-only (no monitor run). Unlike `agentx ready`, an escalated
   * blocking record holds its issue up too: its requester waits on a human.
   */
  ready(): Promise<T.ReadyIssue[]>
  statuses(): Promise<T.Statuses>
  /**
   * Asks the store's change feed whether anything changed since the last look (files or
   * PostgreSQL alike): `true` when the views should re-read. Without a store (wasm) `false`:
   * the file watcher tells.
   */
  changed(): boolean
  /** Runs the monitor; in wasm mode a dry run (nothing written). */
  monitor(): Promise<{ report: T.MonitorReport; events: T.ClarifyEvent[]; dryRun: boolean }>
  ask(input: T.AskInput): Promise<T.StoreMutation>
  resolve(input: T.StoreResolveInput): Promise<T.StoreMutation>
  escalate(input: T.StoreCloseInput): Promise<T.StoreMutation>
  answer(input: T.StoreAnswerInput): Promise<T.StoreMutation>
  /** The runner that answers for `agent` (`undefined`: none configured, NO_RUNNER). */
  runner(agent: string): Promise<unknown | undefined>
  /** Routes `id` through its target's CLI runner (docs/protocol.md §14.2). */
  route(id: string): Promise<T.StoreRoute>
  /** The core's prompt for routing `id` through a chat model held here (no writes). */
  chatPrompt(input: { id: string; persona?: string }): Promise<T.ChatPrompt>
  /** Records the chat model's reply (or its failure) through the core's interpretation. */
  chatReply(input: T.ChatReplyInput): Promise<T.StoreChatRoute>
  /** `agentx signals ingest`: acts on every signal block of an agent's output. */
  ingest(input: { issue: number; agent: string; parent?: string; text: string }): Promise<T.StoreIngest>
  /** Delegations (active ones unless `all`). */
  delegations(input?: { issue?: number; all?: boolean }): Promise<T.Delegation[]>
  render(input: T.RenderInput): string
  /** The core's state machine: which statuses admit each operation, and who may act. */
  transitions(): T.Transitions
  /** The class the core gives an error code (undefined for a code the core does not know). */
  errorClass(code: string): T.ErrorClass | undefined
  version(): string
}

/** The pure API shared by both packages (bindings-node/functions.d.ts). */
type Pure = typeof import('../../bindings-node/functions')
type NativeModule = typeof import('../../bindings-node/clarify')
type NativeWorkspace = InstanceType<NativeModule['Workspace']>

export interface LoadOptions {
  /** Paths tried in order for the native `clarify.js`; the first that loads wins. */
  native?: string[]
  /** Paths tried in order for the wasm `clarify.cjs`. */
  wasm?: string[]
}

/** Where the packaged extension (native/, wasm/) and a repository checkout keep the packages. */
export function defaultLoadOptions(extensionRoot: string): Required<LoadOptions> {
  const fromEnv = (name: string) => {
    const v = process.env[name]
    return v === undefined ? undefined : v === 'off' ? [] : [v]
  }
  return {
    native: fromEnv('AGENTX_CLARIFY_NATIVE') ?? [
      path.join(extensionRoot, 'native', 'clarify.js'),
      path.join(extensionRoot, '..', 'bindings-node', 'clarify.js'),
    ],
    wasm: fromEnv('AGENTX_CLARIFY_WASM') ?? [
      path.join(extensionRoot, 'wasm', 'clarify.cjs'),
      path.join(extensionRoot, '..', 'bindings-wasm', 'pkg', 'node', 'clarify.cjs'),
    ],
  }
}

function firstLoadable<M>(candidates: string[]): { module?: M; errors: string[] } {
  const errors: string[] = []
  for (const file of candidates) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return { module: require(file) as M, errors }
    } catch (e) {
      errors.push(`${file}: ${firstLine(e)}`)
    }
  }
  if (candidates.length === 0) errors.push('disabled')
  return { errors }
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e)
  return text.split('\n')[0]
}

/** Loads the native addon, else the wasm package; throws only when neither loads. */
export function loadBackend(root: string, options: Required<LoadOptions>): Backend {
  const native = firstLoadable<NativeModule>(options.native)
  if (native.module && typeof native.module.Workspace === 'function') {
    return new NativeBackend(root, native.module)
  }
  const wasm = firstLoadable<Pure>(options.wasm)
  if (wasm.module) {
    return new WasmBackend(root, wasm.module, `the native addon did not load (${native.errors.join('; ')})`)
  }
  throw new Error(
    `neither the native addon nor the wasm package loaded: ${[...native.errors, ...wasm.errors].join('; ')}`,
  )
}

const STATE = ['.agentx', 'state']

/**
 * Where the workspace's state is when it is not its files: the database named by
 * `AGENTX_STORE`, or by `[store] url` of `.agentx/config.toml` (the store picker's order,
 * docs/protocol.md §19). The read-only wasm fallback reads only `.agentx/state/`, so under
 * PostgreSQL it must say so rather than show empty views.
 */
export function stateElsewhere(root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env.AGENTX_STORE?.trim()
  if (fromEnv === 'file' || fromEnv === 'files') return undefined
  if (fromEnv && /^postgres(ql)?:\/\//.test(fromEnv)) return 'AGENTX_STORE names a PostgreSQL database'
  const config = readOptional(path.join(root, '.agentx', 'config.toml'))
  if (config === undefined) return undefined
  const table = /^\s*\[store\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(config)?.[1] ?? ''
  const inline = /^\s*store\s*=\s*\{([^}]*)\}/m.exec(config)?.[1] ?? ''
  const url = /(?:^|[\s,])url\s*=\s*["']postgres(ql)?:\/\//m
  return url.test(table) || url.test(inline) ? '[store] url of .agentx/config.toml names a PostgreSQL database' : undefined
}
const LEDGER_FILE = /^issue-(0|[1-9][0-9]*)\.json$/

/** The raw files of a workspace, as the pure functions take them. */
export function readWorkspaceFiles(root: string): {
  files: Record<string, string>
  statuses?: string
  config?: string
} {
  return {
    files: readLedgerFiles(root),
    statuses: readOptional(statusFile(root)),
    config: readOptional(path.join(root, '.agentx', 'config.toml')),
  }
}

function ledgerDir(root: string): string {
  return path.join(root, ...STATE, 'clarifications')
}

/** The ledger files by name (`issue-<n>.json`), as the pure functions take them. */
function readLedgerFiles(root: string, dir = ledgerDir(root), names = ledgerNames(dir)): Record<string, string> {
  const files: Record<string, string> = {}
  for (const name of names) {
    try {
      files[name] = fs.readFileSync(path.join(dir, name), 'utf8')
    } catch {
      // removed between readdir and read
    }
  }
  return files
}

function statusFile(root: string): string {
  return path.join(root, ...STATE, 'agent-status.json')
}

/** The agents' statuses, read straight from their file (no ledger is read for them). */
function readStatuses(root: string): T.Statuses {
  return parseStatuses(readOptional(statusFile(root)))
}

/**
 * The ready queue from the ledger files and the core's pure `ready` (the views never lock).
 * The tree and the status bar both ask on every change, and a mutation in this window is seen
 * twice (its events, then the watcher): while no ledger file's inode, size or mtime differs
 * from the last read (the store replaces a ledger by rename, so a write is a new inode), the
 * last answer stands and no ledger is read or parsed.
 */
export class ReadyReader {
  private key?: string
  private issues: T.ReadyIssue[] = []

  constructor(
    private readonly api: Pure,
    private readonly root: string,
  ) {}

  read(): T.ReadyIssue[] {
    const dir = ledgerDir(this.root)
    const names = ledgerNames(dir)
    const key = names
      .map((name) => {
        try {
          const s = fs.statSync(path.join(dir, name), { bigint: true })
          return `${name}:${s.ino}:${s.size}:${s.mtimeNs}`
        } catch {
          return '' // removed since the listing: the key differs from any complete one
        }
      })
      .join('/')
    if (key !== this.key) {
      this.issues = this.api.ready({ files: readLedgerFiles(this.root, dir, names), includeEscalated: true }).issues
      this.key = key
    }
    return this.issues
  }
}

function ledgerNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => LEDGER_FILE.test(n)).sort()
  } catch {
    return [] // no ledgers yet
  }
}

function readOptional(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

function parseStatuses(text: string | undefined): T.Statuses {
  if (!text) return {}
  try {
    const value = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

class NativeBackend implements Backend {
  readonly kind = 'native'
  readonly canEdit = true
  private readonly ws: NativeWorkspace
  /** What the views last read from the store, kept until its change feed reports a change. */
  private readyAnswer?: Promise<T.ReadyIssue[]>
  private statusesAnswer?: Promise<T.Statuses>

  constructor(
    readonly root: string,
    private readonly api: NativeModule,
  ) {
    this.ws = new api.Workspace(root)
  }

  changed() {
    let changed: T.StoreChanged | null = null
    try {
      changed = this.ws.changes()
    } catch {
      // The feed could not start (a database not there yet): read again next time.
      this.readyAnswer = this.statusesAnswer = undefined
      return true
    }
    if (!changed) return false
    this.readyAnswer = undefined
    if (changed.statuses) this.statusesAnswer = undefined
    return true
  }

  /** Drops a cached answer that failed, so the next look asks again. */
  private keep<V>(answer: Promise<V>, drop: () => void): Promise<V> {
    answer.catch(drop)
    return answer
  }

  async list(input: { issue?: number; all?: boolean } = {}) {
    return (await this.ws.list(input)).clarifications
  }
  async show(input: { id?: string; issue?: number }) {
    const { ok: _ok, ...result } = await this.ws.show(input)
    return result
  }
  async ready() {
    // The store's `ready` without the monitor (nothing written or locked): the views only
    // read, through the store, so a workspace whose state is in PostgreSQL shows too. The
    // tree and the status bar both ask on every change: the answer stands until the store's
    // change feed reports one.
    this.changed()
    this.readyAnswer ??= this.keep(
      this.ws.ready({ monitor: false, includeEscalated: true }).then((r) => r.issues),
      () => (this.readyAnswer = undefined),
    )
    return this.readyAnswer
  }
  async statuses() {
    // `state` without arguments only reads (no lock, nothing created).
    this.changed()
    this.statusesAnswer ??= this.keep(
      this.ws.state({}).then((r) => r.statuses),
      () => (this.statusesAnswer = undefined),
    )
    return this.statusesAnswer
  }
  async monitor() {
    const { report, events } = await this.ws.monitor({})
    return { report, events, dryRun: false }
  }
  async ask(input: T.AskInput) {
    return strip(await this.ws.ask(input))
  }
  async resolve(input: T.StoreResolveInput) {
    return strip(await this.ws.resolve(input))
  }
  async escalate(input: T.StoreCloseInput) {
    return strip(await this.ws.escalate(input))
  }
  async answer(input: T.StoreAnswerInput) {
    return strip(await this.ws.answer(input))
  }
  async runner(agent: string) {
    try {
      return strip(await this.ws.call('routeRunner', { agent }))
    } catch (e) {
      if ((e as { code?: string }).code === 'NO_RUNNER') return undefined
      throw e
    }
  }
  async route(id: string) {
    // One record's route (an `id`, never `all`) answers a StoreRoute, not the union.
    return strip(await this.ws.route({ id })) as T.StoreRoute
  }
  async chatPrompt(input: { id: string; persona?: string }) {
    return strip(await this.ws.routeChatPrompt(input))
  }
  async chatReply(input: T.ChatReplyInput) {
    return strip(await this.ws.routeChatReply(input))
  }
  async ingest(input: { issue: number; agent: string; parent?: string; text: string }) {
    return strip(await this.ws.signalsIngest(input))
  }
  async delegations(input: { issue?: number; all?: boolean } = {}) {
    return (await this.ws.delegateList(input)).delegations
  }
  render(input: T.RenderInput) {
    return this.api.renderMarkdown(input).text
  }
  private table?: T.Transitions
  transitions() {
    // A constant of the core: asked once.
    return (this.table ??= this.api.transitions().transitions)
  }
  private classes?: Map<string, T.ErrorClass>
  errorClass(code: string) {
    return (this.classes ??= errorClasses(this.api)).get(code)
  }
  version() {
    return this.api.version().version
  }
}

/** The core's code → class table (a constant of the core: asked once per backend). */
function errorClasses(api: Pure): Map<string, T.ErrorClass> {
  return new Map(api.errorCodes().codes.map(({ code, class: kind }) => [code, kind]))
}

function strip<R extends { ok: true }>(envelope: R): Omit<R, 'ok'> {
  const { ok: _ok, ...rest } = envelope
  return rest
}

class WasmBackend implements Backend {
  readonly kind = 'wasm'
  readonly canEdit = false
  private readonly readyReader: ReadyReader

  constructor(
    readonly root: string,
    private readonly api: Pure,
    readonly fallbackReason: string,
  ) {
    this.readyReader = new ReadyReader(api, root)
  }

  /** Reading files that do not hold the state would show an empty workspace: refused, saying why. */
  private files(): void {
    const elsewhere = stateElsewhere(this.root)
    if (elsewhere !== undefined) throw stateNotInFiles(elsewhere, this.fallbackReason)
  }

  async list(input: { issue?: number; all?: boolean } = {}) {
    this.files()
    return this.api.list({ files: readLedgerFiles(this.root), ...input }).clarifications
  }
  async show(input: { id?: string; issue?: number }) {
    this.files()
    const { ok: _ok, ...result } = this.api.show({ files: readLedgerFiles(this.root), ...input })
    return result
  }
  async ready() {
    this.files()
    return this.readyReader.read()
  }
  async statuses() {
    this.files()
    return readStatuses(this.root)
  }
  changed() {
    return false
  }
  async monitor() {
    this.files()
    const { files, statuses, config } = readWorkspaceFiles(this.root)
    const result = this.api.monitor({
      files,
      statuses: parseStatuses(statuses),
      ...(config === undefined ? {} : { config }),
      now: Date.now(),
    })
    return { report: result.report, events: result.events, dryRun: true }
  }
  // Every write (and routing, which writes) is refused with the same READ_ONLY error.
  private refuse = <R>(): Promise<R> => Promise.reject(readOnly(this.fallbackReason))
  ask = () => this.refuse<T.StoreMutation>()
  resolve = () => this.refuse<T.StoreMutation>()
  escalate = () => this.refuse<T.StoreMutation>()
  answer = () => this.refuse<T.StoreMutation>()
  runner = () => this.refuse<unknown | undefined>()
  route = () => this.refuse<T.StoreRoute>()
  chatPrompt = () => this.refuse<T.ChatPrompt>()
  chatReply = () => this.refuse<T.StoreChatRoute>()
  ingest = () => this.refuse<T.StoreIngest>()
  async delegations(): Promise<T.Delegation[]> {
    // The wasm package has no delegation store: the Agents tree shows none in read-only mode.
    return []
  }
  render(input: T.RenderInput) {
    return this.api.renderMarkdown(input).text
  }
  private table?: T.Transitions
  transitions() {
    // A constant of the core: asked once.
    return (this.table ??= this.api.transitions().transitions)
  }
  private classes?: Map<string, T.ErrorClass>
  errorClass(code: string) {
    return (this.classes ??= errorClasses(this.api)).get(code)
  }
  version() {
    return this.api.version().version
  }
}

/** Code of the error a read throws in wasm mode when the state is not in the files. */
export const STATE_NOT_IN_FILES = 'STATE_NOT_IN_FILES'

function stateNotInFiles(where: string, reason: string): Error & { code: string } {
  const err = new Error(
    `this workspace's state is not in its files (${where}): the read-only wasm fallback reads only .agentx/state/, and the native addon, which reads PostgreSQL, did not load because ${reason}`,
  ) as Error & { code: string }
  err.name = 'ClarifyError'
  err.code = STATE_NOT_IN_FILES
  return err
}

function readOnly(reason: string): Error & { code: string } {
  const err = new Error(
    `editing needs the native addon: this window runs the read-only wasm fallback because ${reason}`,
  ) as Error & { code: string }
  err.name = 'ClarifyError'
  err.code = READ_ONLY
  return err
}
