// Compiled with `tsc --noEmit --strict` by `npm run typecheck`: the declarations spell out
// every shape (a misuse below the `@ts-expect-error` lines must fail to compile).
import * as c from '../clarify'

const r = c.request({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 't', question: 'q', now: 0 })
const id: string = r.clarification.id
const status: c.Status = r.clarification.status
const firstEntry: c.EntryType = r.clarification.thread[0].type
const when: number = r.events[0].timestamp
const waiting: string | null = r.statuses['engineer'].waitingOn
const m = c.monitor({ ledgers: [r.ledger], now: 1 })
const cycle: string[] = m.report.deadlocks.length > 0 ? m.report.deadlocks[0].cycle : []
const rate: number | null = c.stats({ ledgers: [r.ledger] }).stats.escalationRate
const checked = c.verify({ ledgers: [r.ledger], publicKeys: { engineer: 'ed25519:…' }, requireSignatures: true })
const signatureProblem: c.ErrorCode | undefined = checked.problems[0]?.code
const audited = c.audit({ ledger: r.ledger, id, publicKeys: {} })
const verified: boolean = audited.verified && audited.chain.every((round) => round.ask_signature === null || round.resolved)
// @ts-expect-error audit needs a ledger
c.audit({ id })

async function store(ws: c.Workspace): Promise<string> {
  const asked = await ws.ask({ issueNumber: 1, from: 'a', to: 'b', topic: 't', question: 'q' })
  const report: c.MonitorReport = asked.monitor
  const warnings: string[] = asked.warnings
  const unread: c.FileError[] = (await ws.list()).errors
  const migrated = await ws.migrate({ dryRun: true })
  const changed: string[] = migrated.migrated.flatMap((m) => m.changes.map((ch) => ch.message))
  return asked.clarification.topic + report.stale.join() + warnings.join() + unread.length + changed.join()
}

async function layer4(ws: c.Workspace): Promise<string> {
  const plan: c.Plan = { gaps: [{ id: 'gap-001', field: 'storage.cache', severity: 'BLOCK', question: 'Redis?', blocked_operations: ['deploy'] }] }
  const checked = await ws.check({ issue: 42, from: 'engineer', to: 'architect', plan })
  const ready: boolean = checked.status === 'ready_to_proceed'
  const firstGap: string | null = checked.gaps[0].clarificationId
  const open: c.OpenGap[] = (await ws.gate({ issue: 42, operation: 'deploy' })).open
  const audited: c.AuditRecord = await ws.audit({ id: 'CLR-42-001' })
  const keys: c.KeyInfo[] = (await ws.keysList()).keys
  // @ts-expect-error a severity that does not exist
  const bad: c.PlanGap = { id: 'g', field: 'f', severity: 'CRITICAL', question: 'q' }
  return `${ready}${firstGap}${open.length}${audited.verified}${keys.length}${bad.id}`
}

function onError(e: unknown): c.ErrorCode | undefined {
  return (e as c.ClarifyError).code
}

// @ts-expect-error a status that does not exist
const wrong: c.Status = 'done'
// @ts-expect-error `now` must be a number
c.answer({ ledger: r.ledger, id, from: 'x', body: 'y', now: 'later' })

export { status, firstEntry, when, waiting, cycle, rate, store, layer4, onError, wrong }
