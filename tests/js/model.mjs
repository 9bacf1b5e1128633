// A model of the `agentx` CLI built only from a binding's pure functions: the twin of
// tests/src/model.rs. Files are kept as text; every check runs in the CLI's order (settings,
// input, status file, ledger), every mutation is followed by a monitor run at the same `now`,
// and results have the CLI's `--json` shapes.
import { isDeepStrictEqual } from 'node:util'
import { nowMs } from './subset.mjs'

const STATUS_FILE = 'agent-status.json'
const LEDGER = /^issue-(0|[1-9][0-9]*)\.json$/
const ID = /^CLR-(0|[1-9][0-9]*)-[0-9]{3,}$/
const pretty = (v) => JSON.stringify(v, null, 2) + '\n'

/** Turns a thrown ClarifyError into the CLI's failure envelope; rethrows anything else. */
function failure(e) {
  if (!e || typeof e.code !== 'string') throw e
  return { ok: false, error: { code: e.code, message: e.message } }
}

export class Model {
  constructor(c, setup = {}) {
    this.c = c
    this.files = new Map()
    for (const [name, v] of Object.entries(setup.ledgers ?? {})) {
      this.files.set(name, typeof v === 'string' ? v : pretty(v))
    }
    this.statuses = setup.statuses === undefined ? undefined : pretty(setup.statuses)
    this.workflows = setup.workflows ?? c.defaultWorkflows().workflows
    this.config = setup.config
  }

  run(op, args = {}, now) {
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
          const since = args.since === undefined ? undefined : nowMs(args.since)
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
          return { ok: true, issues: this.c.ready({ files: this.ledgerFiles() }).issues, monitor: report }
        }
        case 'file': return this.file(args)
        default: throw new Error(`unknown op ${op}`)
      }
    } catch (e) {
      return failure(e)
    }
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
      statusError = { file: STATUS_FILE, code: e.code, message: e.message.replace(/^/, '') }
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
        if (!isDeepStrictEqual(before, result.statuses)) this.statuses = pretty(result.statuses)
      }
    }
    return { report, events: result.events }
  }

  mutation(op, args, now) {
    const common = { config: this.config, statuses: this.statuses, now }
    let result
    let issue
    try {
      if (op === 'request') {
        issue = String(args.issueNumber ?? '')
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
        issue: args.issue === undefined ? undefined : String(args.issue),
        now,
      })
      this.statuses = pretty(r.statuses)
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
      issue: args.issue === undefined ? undefined : String(args.issue),
      now,
    })
    this.statuses = pretty(r.statuses)
    const { report, events } = this.runMonitor(now, false)
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
}
