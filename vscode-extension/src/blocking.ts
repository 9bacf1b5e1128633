// Decides which clarifications hold an issue up, for the Ready queue's badges and the status
// bar's count: a blocking record while its requester still waits — pending or stale (on its
// target) or escalated (on a human). An answered record has released its requester (SPEC §5),
// and resolved or abandoned ones are closed. (`agentx ready` itself, SPEC §11.1, lists only
// pending and stale records; the editor also shows who waits on a human.)
import type { Clarification, ReadyIssue } from '../../bindings-node/clarify'

export function holdsUp(r: Pick<Clarification, 'blocking' | 'status'>): boolean {
  return r.blocking && (r.status === 'pending' || r.status === 'stale' || r.status === 'escalated')
}

/** Who the requester waits on. */
export function awaited(r: Pick<Clarification, 'status' | 'to'>): string {
  return r.status === 'escalated' ? 'a human' : r.to
}

/** One row per issue that has a ledger, ascending; its blockers oldest first. */
export function readyQueue(records: readonly Clarification[]): ReadyIssue[] {
  const byIssue = new Map<number, Clarification[]>()
  for (const r of records) {
    const list = byIssue.get(r.issueNumber) ?? []
    list.push(r)
    byIssue.set(r.issueNumber, list)
  }
  return [...byIssue.keys()]
    .sort((a, b) => a - b)
    .map((issueNumber) => ({
      issueNumber,
      blocked: (byIssue.get(issueNumber) ?? [])
        .filter(holdsUp)
        .sort((a, b) => (a.created ?? '').localeCompare(b.created ?? '') || a.id.localeCompare(b.id, 'en', { numeric: true }))
        .map((r) => ({ id: r.id, waitingOn: awaited(r) })),
    }))
}
