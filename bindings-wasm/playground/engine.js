// The playground's workspace: the command layer of the wasm package (its `Workspace`: every
// command of the CLI over files held in memory, with the CLI's `--json` shapes) plus what only
// the page needs — its own step that replaces the workflow files, a snapshot of the files
// after every step (undo, time travel, the views) and the replay of a scenario's steps. No
// protocol decision is made here. No DOM, no clock: it runs in the page and under
// `node --test` (bindings-wasm/test/engine.test.mjs plays every vector through it).

export const STATUS_FILE = 'agent-status.json'
const STATE_DIR = '.agentx/state/'
const LEDGER_DIR = '.agentx/state/clarifications/'
const WORKFLOW_DIR = '.agentx/workflows/'
const CONFIG = '.agentx/config.toml'
const LEDGER = /^issue-(0|[1-9][0-9]*)\.json$/

/** The mutations of docs/protocol.md §4, in the order the playground offers them. */
export const MUTATIONS = ['request', 'answer', 'followUp', 'resolve', 'escalate', 'abandon']

/** `now` of a vector case: an RFC 3339 string or epoch milliseconds. */
export function toMs(now) {
  if (typeof now === 'number') return now
  const ms = Date.parse(now)
  if (Number.isNaN(ms)) throw new Error(`not a time: ${now}`)
  return ms
}

/** Turns a thrown ClarifyError back into the failure envelope; rethrows anything else. */
function failure(e) {
  if (!e || typeof e.code !== 'string') throw e
  // What was written anyway (MAX_ROUNDS_EXCEEDED) travels as the error's own properties.
  const { name: _name, code, ...written } = e
  return { ok: false, error: { code, message: e.message }, ...written }
}

export class Workspace {
  /**
   * @param c the wasm package (`Workspace`, `parseWorkflow`, … of @agentx/clarify-wasm)
   * @param setup a vector's `setup`: `{workflows?, config?, ledgers?, statuses?}`
   */
  constructor(c, setup = {}) {
    this.c = c
    this.ws = new c.Workspace(setup)
  }

  /**
   * Runs one operation of tests/vectors/README.md (plus the playground's `workflows`) at `now`
   * (epoch ms) and returns its `--json` document. A status-table warning (which the CLI also
   * prints on stderr) is the result's `warning`.
   */
  run(op, args = {}, now) {
    try {
      return op === 'workflows' ? this.setWorkflows(args) : this.ws.run(op, args, now)
    } catch (e) {
      return failure(e)
    }
  }

  /** A read-only command (`scopePreview`, `nextWakeup`, `waitForGraph`, …) on any snapshot. */
  query(snapshot, op, args = {}, now = 0) {
    this.scratch ??= new this.c.Workspace()
    this.scratch.restore(snapshot)
    try {
      return this.scratch.run(op, args, now)
    } catch (e) {
      return failure(e)
    }
  }

  /** What the monitor would do at `now`, without writing anything (null when it cannot run). */
  preview(now) {
    const r = this.run('monitor', { dryRun: true }, now)
    return r.ok ? r : null
  }

  /** The playground's own step: replace the workflow files and config.toml (validated first). */
  setWorkflows(args) {
    const workflows = args.workflows ?? {}
    for (const [type, text] of Object.entries(workflows)) {
      this.c.parseWorkflow({ text, file: `${WORKFLOW_DIR}${type}.toml` })
    }
    const config = args.config ?? undefined
    if (config !== undefined) this.c.parseConfig({ text: config, file: CONFIG })
    const files = this.ws.files()
    for (const path of Object.keys(files)) {
      if (path.startsWith(WORKFLOW_DIR) || path === CONFIG) delete files[path]
    }
    for (const [type, text] of Object.entries(workflows)) files[`${WORKFLOW_DIR}${type}.toml`] = text
    if (config !== undefined) files[CONFIG] = config
    this.ws.restore(files)
    return { ok: true }
  }

  /** Every file (workspace path → text): the state after a step, cheap enough to keep. */
  snapshot() {
    return this.ws.files()
  }

  /** Goes back to a snapshot (undo). */
  restore(snapshot) {
    this.ws.restore(snapshot)
  }

  /** The workflow files' texts by type. */
  get workflows() {
    return workflowTexts(this.snapshot())
  }

  /** config.toml's text, or undefined when there is none (the defaults apply). */
  get config() {
    return this.snapshot()[CONFIG]
  }
}

/** A snapshot's ledger files (`issue-<n>.json` → text), ascending by issue. */
export function ledgerTexts(snapshot) {
  const out = []
  for (const [path, text] of Object.entries(snapshot)) {
    if (!path.startsWith(LEDGER_DIR)) continue
    const m = LEDGER.exec(path.slice(LEDGER_DIR.length))
    if (m) out.push([Number(m[1]), m[0], text])
  }
  out.sort((a, b) => a[0] - b[0])
  return Object.fromEntries(out.map(([, name, text]) => [name, text]))
}

/** A snapshot's agent-status.json text, or undefined. */
export const statusText = (snapshot) => snapshot[STATE_DIR + STATUS_FILE]

/** A snapshot's workflow files: type → TOML text. */
export function workflowTexts(snapshot) {
  const out = {}
  for (const [path, text] of Object.entries(snapshot)) {
    if (path.startsWith(WORKFLOW_DIR) && path.endsWith('.toml')) out[path.slice(WORKFLOW_DIR.length, -5)] = text
  }
  return out
}

/** Parses ledger files: `{ledgers: [ledger…], corrupt: [{file, text}]}` by issue. */
export function parseFiles(files) {
  const ledgers = []
  const corrupt = []
  for (const [file, text] of Object.entries(files)) {
    try {
      const l = JSON.parse(text)
      if (l && typeof l === 'object' && Array.isArray(l.clarifications)) ledgers.push(l)
      else corrupt.push({ file, text })
    } catch {
      corrupt.push({ file, text })
    }
  }
  ledgers.sort((a, b) => a.issueNumber - b.issueNumber)
  return { ledgers, corrupt }
}

export function parseStatuses(text) {
  if (text === undefined) return {}
  try {
    const v = JSON.parse(text)
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {}
  } catch {
    return {}
  }
}

/**
 * Replays a scenario: `{setup, steps: [{op, args, now}]}` → the workspace after every step.
 * Returns `{workspace, initial: snapshot, results: [{step, result, warning, snapshot}]}`.
 */
export function replay(c, scenario) {
  const ws = new Workspace(c, scenario.setup ?? {})
  const initial = ws.snapshot()
  const results = []
  for (const step of scenario.steps ?? []) results.push(play(ws, step))
  return { workspace: ws, initial, results }
}

/** Runs one step and keeps what the timeline shows of it. */
export function play(ws, step) {
  const result = ws.run(step.op, step.args ?? {}, step.now)
  return { step, result, warning: result.warning ?? null, snapshot: ws.snapshot() }
}
