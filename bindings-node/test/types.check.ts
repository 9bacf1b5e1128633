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

async function store(ws: c.Workspace): Promise<string> {
  const asked = await ws.ask({ issueNumber: 1, from: 'a', to: 'b', topic: 't', question: 'q' })
  const report: c.MonitorReport = asked.monitor
  const warnings: string[] = asked.warnings
  const unread: c.FileError[] = (await ws.list()).errors
  const migrated = await ws.migrate({ dryRun: true })
  const changed: string[] = migrated.migrated.flatMap((m) => m.changes.map((ch) => ch.message))
  return asked.clarification.topic + report.stale.join() + warnings.join() + unread.length + changed.join()
}

function onError(e: unknown): c.ErrorCode | undefined {
  return (e as c.ClarifyError).code
}

// @ts-expect-error a status that does not exist
const wrong: c.Status = 'done'
// @ts-expect-error `now` must be a number
c.answer({ ledger: r.ledger, id, from: 'x', body: 'y', now: 'later' })

export { status, firstEntry, when, waiting, cycle, rate, store, onError, wrong }
