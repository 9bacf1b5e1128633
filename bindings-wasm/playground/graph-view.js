// The graph view: per issue shown, the core's wait-for graph (`waitForGraph` on the state
// shown) drawn by graph.js, with the deadlocks the monitor broke (its report) and the cycles
// still there (the core's cycles; the record the next run would escalate from a dry run),
// and a sentence saying what the picture means.
import { S, clockNow, shownSnapshot, shownReport, shownQuery, records, ledgersOf, statusesOf, config } from './session.js'
import { esc, emptyState } from './dom.js'
import { hms } from './format.js'
import { renderGraph, deadlocksOf } from './graph.js'

const ids = (list) => list.map((x) => `<code>${esc(x)}</code>`).join(', ')
const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x))

/** The core's wait-for graphs of the state shown, by issue (none when it cannot read them). */
function graphsByIssue() {
  const r = shownQuery('waitForGraph')
  return new Map((r.ok ? r.graphs : []).map((g) => [g.issueNumber, g]))
}

export function graphView(issues) {
  const snap = shownSnapshot()
  const recs = records(snap)
  if (!recs.length || !issues.length) {
    return emptyState('No clarifications yet', 'Ask a question with the form on the left, or load the <b>Three-agent deadlock</b> example to watch the monitor break a wait cycle.')
  }
  const shown = shownReport()
  // Which record the next monitor run would escalate: a dry run now (only for the latest state).
  const preview = S.ui.step === null ? S.rt.workspace.preview(clockNow()) : null
  const graphs = graphsByIssue()
  const statuses = statusesOf(snap)
  const priority = config()?.priority ?? []
  let html = ''
  for (const issue of issues) {
    const rs = recs.filter((r) => r.issueNumber === issue)
    const broken = deadlocksOf(shown?.report, issue)
    const core = graphs.get(issue) ?? { edges: [], cycles: [] }
    const victims = deadlocksOf(preview?.report, issue)
    const cycles = core.cycles.map((c) => ({ ...c, escalated: victims.find((d) => sameSet(d.cycle, c.ids))?.escalated }))
    const graph = { edges: core.edges, cycles }
    const svg = renderGraph({ issue, records: rs, graph, statuses, priority, report: shown?.report, selectedId: S.ui.selectedId })
    let note = ''
    for (const d of broken) {
      note += `<p class="narrative broken">Deadlock broken by the monitor at ${esc(hms(shown.now))}: ${ids(d.cycle)} between ${d.agents.map(esc).join(', ')}. <b><code>${esc(d.escalated)}</code> was escalated</b> — its requester yields to a human; the others continue.</p>`
    }
    for (const c of cycles) {
      const next = c.escalated
        ? `The next monitor run escalates <code>${esc(c.escalated)}</code> (its requester ranks lowest in <code>priority</code>).`
        : 'The next monitor run escalates one of them (the requester ranked lowest in <code>priority</code> yields).'
      note += `<p class="narrative live">⚠ Wait cycle: ${ids(c.ids)} between ${c.agents.map(esc).join(', ')}. ${next} Advance the clock or press <b>Run monitor</b>.</p>`
    }
    if (!broken.length && !cycles.length) {
      const n = core.edges.length
      note += n
        ? `<p class="narrative">${n} blocking record${n > 1 ? 's' : ''} waiting; no cycle.</p>`
        : '<p class="narrative">Nobody waits on anyone: the wait-for graph has an edge only for a <b>blocking</b> record that is <b>pending</b> or <b>stale</b>.</p>'
    }
    const wf = ledgersOf(snap).find((l) => l.issueNumber === issue)?.workflow
    html += `<figure class="graph-card" data-issue="${issue}"><figcaption><b>Issue #${issue}</b>${wf ? ` <span class="muted">· workflow ${esc(wf)}</span>` : ''}</figcaption><div class="graph-wrap">${svg}</div>${note}</figure>`
  }
  html += `<div class="legend" aria-label="Legend">
      <span><i class="sw pending"></i> pending wait</span><span><i class="sw stale"></i> stale wait</span>
      <span><i class="sw cycle"></i> deadlock cycle</span><span><i class="sw escalated"></i> escalated by the monitor</span>
      <span class="muted">Edges: requester → target, labelled with the record id. Hover for details.</span></div>`
  return html
}
