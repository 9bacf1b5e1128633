// The playground's workspace: what the `agentx` CLI would do, built only from the core's pure
// functions (the wasm package in the page, or any binding with the same API). It is the twin of
// tests/js/model.mjs: files are kept as text, checks run in the CLI's order, every successful
// mutation (also an idempotent replay and MAX_ROUNDS_EXCEEDED) is followed by a monitor run at
// the same `now`, and results have the CLI's `--json` shapes. No DOM, no clock: it runs in the
// page and under `node --test` (bindings-wasm/test/engine.test.mjs plays every vector through it).

export const STATUS_FILE = 'agent-status.json'
const LEDGER = /^issue-(0|[1-9][0-9]*)\.json$/
const ID = /^CLR-(0|[1-9][0-9]*)-[0-9]{3,}$/
const pretty = (v) => JSON.stringify(v, null, 2) + '\n'

/** The mutations of SPEC §4, in the order the playground offers them. */
export const MUTATIONS = ['request', 'answer', 'followUp', 'resolve', 'escalate', 'abandon']

/** `now` of a vector case: an RFC 3339 string or epoch milliseconds. */
export function toMs(now) {
  if (typeof now === 'number') return now
  const ms = Date.parse(now)
  if (Number.isNaN(ms)) throw new Error(`not a time: ${now}`)
  return ms
}

export function deepEqual(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
}

/** Turns a thrown ClarifyError into the CLI's failure envelope; rethrows anything else. */
function failure(e) {
  if (!e || typeof e.code !== 'string') throw e
  return { ok: false, error: { code: e.code, message: e.message } }
}

export class Workspace {
  /**
   * @param c the core API (`request`, `monitor`, … of @agentx/clarify-wasm)
   * @param setup a vector's `setup`: `{workflows?, config?, ledgers?, statuses?}`
   */
  constructor(c, setup = {}) {
    this.c = c
    this.files = new Map()
    for (const [name, v] of Object.entries(setup.ledgers ?? {})) {
      this.files.set(name, typeof v === 'string' ? v : pretty(v))
    }
    this.statuses = setup.statuses === undefined ? undefined : typeof setup.statuses === 'string' ? setup.statuses : pretty(setup.statuses)
    this.workflows = { ...(setup.workflows ?? c.defaultWorkflows().workflows) }
    this.config = setup.config
  }

  /** Runs one operation of tests/vectors/README.md (plus the playground's `workflows`). */
  /** The CLI's `--json` result of one operation (a transition warning, which the CLI prints on
   * stderr, is kept apart: see `takeWarning`). */
  run(op, args = {}, now) {
    this.warning = null
    try {
      switch (op) {
        case 'request': case 'answer': case 'followUp': case 'resolve': case 'escalate': case 'abandon':
          return this.mutation(op, args, now)
        case 'monitor': {
          this.checkConfig()
          const { report, events } = this.runMonitor(now, args.dryRun === true)
          return { ok: true, report, events }
        }
        case 'verify': return this.verify()
        case 'stats': {
          const since = args.since === undefined ? undefined : toMs(args.since)
          return { ok: true, stats: this.c.stats({ files: this.ledgerFiles(), since }).stats }
        }
        case 'list': {
          const r = this.c.list({
            files: this.ledgerFiles(),
            issue: args.issue === undefined ? undefined : String(args.issue),
            status: args.status,
            all: args.all,
          })
          return { ok: true, clarifications: r.clarifications }
        }
        case 'show': {
          const input = args.id !== undefined ? { id: args.id } : { issue: String(args.issue ?? '') }
          const { ok, ...rest } = this.c.show({ files: this.ledgerFiles(), ...input })
          return { ok, ...rest }
        }
        case 'state': return this.state(args, now)
        case 'hook': return this.hook(args, now)
        case 'ready': {
          this.checkConfig()
          const { report } = this.runMonitor(now, false)
          const { issues } = this.c.ready({ files: this.ledgerFiles(), includeEscalated: args.includeEscalated === true })
          return { ok: true, issues, monitor: report }
        }
        case 'file': return this.file(args)
        case 'workflows': return this.setWorkflows(args)
        case 'scopePreview': case 'nextWakeup': case 'waitForGraph':
          // Read-only answers of the command layer, asked of a wasm workspace holding these files.
          return this.layer().run(op, args, now)
        default: throw new Error(`unknown op ${op}`)
      }
    } catch (e) {
      return failure(e)
    }
  }

  /** The command layer (the wasm `Workspace`) over a copy of these files. */
  layer() {
    const files = {}
    for (const [name, text] of Object.entries(this.workflows)) files[`.agentx/workflows/${name}.toml`] = text
    if (this.config !== undefined) files['.agentx/config.toml'] = this.config
    if (this.statuses !== undefined) files['.agentx/state/agent-status.json'] = this.statuses
    for (const [name, text] of this.files) files[`.agentx/state/clarifications/${name}`] = text
    const ws = new this.c.Workspace()
    ws.restore(files)
    return ws
  }

  /** The status-table warning of the last `state`/`hook`, if any (the CLI's stderr line). */
  takeWarning() {
    const w = this.warning ?? null
    this.warning = null
    return w
  }

  checkConfig() {
    if (this.config !== undefined) this.c.parseConfig({ text: this.config, file: 'config.toml' })
  }

  ledgerFiles() {
    const out = {}
    for (const [name, text] of this.files) if (LEDGER.test(name)) out[name] = text
    return out
  }

  /** The statuses as the core reads them (normalised), or throws LEDGER_CORRUPT. */
  readStatuses(now) {
    if (this.statuses === undefined) return {}
    return this.c.monitor({ statuses: this.statuses, now }).statuses
  }

  runMonitor(now, dryRun) {
    const base = { files: this.ledgerFiles(), config: this.config, now }
    let result
    let statusError
    try {
      result = this.c.monitor({ ...base, statuses: this.statuses })
    } catch (e) {
      if (e.code !== 'LEDGER_CORRUPT' || this.statuses === undefined) throw e
      // A corrupt status file only disables abandonment; it is reported, never rewritten.
      statusError = { file: STATUS_FILE, code: e.code, message: e.message }
      result = this.c.monitor(base)
    }
    const report = result.report
    if (statusError) {
      report.errors.push(statusError)
      report.errors.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    }
    if (!dryRun) {
      for (const ledger of result.ledgers) {
        if (result.changed.includes(ledger.issueNumber)) this.files.set(`issue-${ledger.issueNumber}.json`, pretty(ledger))
      }
      if (!statusError) {
        const before = this.readStatuses(now)
        if (!deepEqual(before, result.statuses)) this.statuses = pretty(result.statuses)
      }
    }
    return { report, events: result.events }
  }

  /** What the monitor would do at `now`, without writing anything (null when it cannot run). */
  preview(now) {
    try {
      this.checkConfig()
      return this.runMonitor(now, true)
    } catch {
      return null
    }
  }

  mutation(op, args, now) {
    const common = { config: this.config, statuses: this.statuses, now }
    let result
    try {
      if (op === 'request') {
        const issue = String(args.issueNumber ?? '')
        result = this.c.request({
          ...common,
          ledger: this.files.get(`issue-${issue}.json`),
          issueNumber: issue,
          from: args.from ?? '',
          to: args.to ?? '',
          topic: args.topic ?? '',
          question: args.question ?? '',
          blocking: args.blocking ?? true,
          workflow: args.workflow,
          step: args.step,
          field: args.field,
          suggestions: args.suggestions,
          idempotencyKey: args.idempotencyKey,
          workflows: this.workflows,
        })
      } else {
        const id = args.id ?? ''
        const m = ID.exec(id)
        const input = { ...common, id, ledger: m ? this.files.get(`issue-${m[1]}.json`) : undefined }
        if (op === 'answer') Object.assign(input, { from: args.from ?? '', body: args.body ?? '' })
        else if (op === 'followUp') Object.assign(input, { from: args.from ?? '', question: args.question ?? '' })
        else Object.assign(input, { from: args.from, message: args.message })
        result = this.c[op](input)
      }
    } catch (e) {
      if (e.code !== 'MAX_ROUNDS_EXCEEDED' || !e.ledger) return failure(e)
      result = { error: { code: e.code, message: e.message }, ledger: e.ledger, clarification: e.clarification, events: e.events, statuses: e.statuses }
    }
    const issueNumber = result.ledger.issueNumber
    if (!result.idempotent) this.files.set(`issue-${issueNumber}.json`, pretty(result.ledger))
    if (result.events.length > 0) this.statuses = pretty(result.statuses)
    const { report, events } = this.runMonitor(now, false)
    const clarification = this.c.show({ files: this.ledgerFiles(), id: result.clarification.id }).clarification
    const out = result.error ? { ok: false, error: result.error } : { ok: true }
    out.clarification = clarification
    out.events = [...result.events, ...events]
    if (!result.error) out.idempotent = result.idempotent
    out.monitor = report
    return out
  }

  verify() {
    const files = this.ledgerFiles()
    const problems = this.c.verify({ files }).problems
    if (problems.length === 0) return { ok: true, problems: [] }
    const n = Object.keys(files).length
    return {
      ok: false,
      error: { code: 'LEDGER_INCONSISTENT', message: `verify found ${problems.length} problem(s) in ${n} ledger file(s)` },
      problems,
    }
  }

  state(args, now) {
    if (args.agent !== undefined && args.status !== undefined) {
      const r = this.c.setStatus({
        statuses: this.statuses,
        agent: args.agent,
        status: args.status,
        issue: args.issue === undefined || args.issue === null ? undefined : String(args.issue),
        now,
      })
      this.statuses = pretty(r.statuses)
      this.warning = r.warning ?? null
      return { ok: true, statuses: r.statuses }
    }
    return { ok: true, statuses: this.readStatuses(now) }
  }

  hook(args, now) {
    this.checkConfig()
    const status = { start: 'working', finish: 'done' }[args.event]
    if (!status) throw new Error(`hook event must be start or finish, not ${args.event}`)
    const r = this.c.setStatus({
      statuses: this.statuses,
      agent: args.agent ?? '',
      status,
      issue: args.issue === undefined || args.issue === null ? undefined : String(args.issue),
      now,
    })
    this.statuses = pretty(r.statuses)
    const { report, events } = this.runMonitor(now, false)
    this.warning = r.warning ?? null
    return { ok: true, agent: r.agent, monitor: report, events }
  }

  file(args) {
    const text = args.name === STATUS_FILE ? this.statuses : this.files.get(args.name)
    if (text === undefined) return { ok: true, content: null }
    try {
      return { ok: true, content: JSON.parse(text) }
    } catch {
      return { ok: true, content: text }
    }
  }

  /** The playground's own step: replace the workflow files and config.toml (validated first). */
  setWorkflows(args) {
    const workflows = args.workflows ?? {}
    for (const [type, text] of Object.entries(workflows)) {
      this.c.parseWorkflow({ text, file: `workflows/${type}.toml` })
    }
    if (args.config !== undefined && args.config !== null) this.c.parseConfig({ text: args.config, file: 'config.toml' })
    this.workflows = { ...workflows }
    this.config = args.config ?? undefined
    return { ok: true }
  }

  /** A copy of everything a view needs, cheap enough to keep one per step. */
  snapshot() {
    return {
      files: Object.fromEntries([...this.files].filter(([name]) => LEDGER.test(name)).sort(byIssue)),
      statuses: this.statuses,
      workflows: { ...this.workflows },
      config: this.config,
    }
  }
}

function byIssue([a], [b]) {
  const na = Number(LEDGER.exec(a)?.[1] ?? Infinity)
  const nb = Number(LEDGER.exec(b)?.[1] ?? Infinity)
  return na - nb || (a < b ? -1 : a > b ? 1 : 0)
}

/** Parses a snapshot's files: `{ledgers: [ledger…], corrupt: [{file, text}]}` by issue. */
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
  for (const step of scenario.steps ?? []) {
    const result = ws.run(step.op, step.args ?? {}, step.now)
    results.push({ step, result, warning: ws.takeWarning(), snapshot: ws.snapshot() })
  }
  return { workspace: ws, initial, results }
}
