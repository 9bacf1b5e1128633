// The "Team" view: seed 003's delegation metrics (§12) and gap scores per capability (§8) of
// the state shown, from the core's pure `delegationMetrics` over the workspace's ledgers,
// delegation ledgers and capability manifests — and the suggestion record the core writes
// when a capability scores ≥ 0.55 (the team lacks an agent for it).
import { S, shownSnapshot } from './session.js'
import { ledgerTexts } from './engine.js'
import { esc, emptyState, refusalHtml } from './dom.js'

const DELEGATIONS_DIR = '.agentx/state/delegations/'
const AGENTS_DIR = '.agentx/agents/'

/** The metrics' input from a snapshot: ledger files, delegation ledgers and manifests. */
export function metricsInput(snapshot) {
  const delegations = []
  const manifests = {}
  for (const [path, text] of Object.entries(snapshot)) {
    if (path.startsWith(DELEGATIONS_DIR) && path.endsWith('.json')) delegations.push(text)
    else if (path.startsWith(AGENTS_DIR) && path.endsWith('.toml')) manifests[path.slice(AGENTS_DIR.length, -'.toml'.length)] = text
  }
  return { files: ledgerTexts(snapshot), delegations, manifests }
}

const pct = (x) => (x === null || x === undefined ? '<span class="muted">—</span>' : `${(x * 100).toFixed(0)}%`)
const num = (x, digits = 2) => (x === null || x === undefined ? '<span class="muted">—</span>' : esc(Number(x).toFixed(digits)))

export function teamView() {
  let m
  try {
    m = S.c.delegationMetrics(metricsInput(shownSnapshot())).delegations
  } catch (e) {
    return refusalHtml({ code: e.code ?? 'ERROR', message: e.message })
  }
  if (!m.total) {
    return emptyState('No delegations yet', 'Agents hand work to each other with delegation envelopes (<code>agentx delegate request</code>, seed 003). Their outcomes, latencies and the clarification rounds on their issues score each capability: a score ≥ 0.55 means the team lacks an agent. Load the <b>Team gap</b> example to see one.')
  }
  // A gap is what the core suggested an agent for (it applies the 0.55 threshold).
  const suggested = new Set(m.suggestions.flatMap((s) => s.capabilities))
  const statuses = Object.entries(m.byStatus).filter(([, n]) => n > 0)
  let html = `<section class="team-summary"><h3>Delegations <span class="muted small">(seed 003 §12)</span></h3>
    <dl class="metrics">
      <div><dt>total</dt><dd data-metric="total">${m.total}</dd></div>
      <div><dt>success rate</dt><dd data-metric="delegationSuccessRate">${pct(m.delegationSuccessRate)}</dd></div>
      <div><dt>average round trip</dt><dd data-metric="avgRoundTripSec">${m.avgRoundTripSec === null ? '<span class="muted">—</span>' : `${num(m.avgRoundTripSec, 0)} s`}</dd></div>
      <div><dt>clarification rework</dt><dd data-metric="clarificationReworkRatio">${num(m.clarificationReworkRatio)}</dd></div>
      <div><dt>unresolved carry-over</dt><dd data-metric="unresolvedCarryover">${num(m.unresolvedCarryover)}</dd></div>
    </dl>
    <p class="chips">${statuses.map(([s, n]) => `<span class="chip" data-status="${esc(s)}">${esc(s)} ${n}</span>`).join(' ')}</p></section>`
  html += `<section class="team-gaps"><h3>Gap score per capability <span class="muted small">(§8: 0.4·rejection + 0.3·latency + 0.3·cycles, each clamped to [0, 1])</span></h3>
    <table class="data gaps"><thead><tr><th>capability</th><th>score</th><th>delegations</th><th title="REJECTED_CAPABILITY">rejected</th><th title="rejection rate">rejection</th><th title="latency penalty ratio">latency</th><th title="clarification cycles ratio">cycles</th></tr></thead><tbody>
    ${m.gaps.map((g) => `<tr data-capability="${esc(g.capability)}" class="${suggested.has(g.capability) ? 'gap' : ''}"><td><code>${esc(g.capability)}</code></td>
      <td data-score="${g.score}"><b>${num(g.score)}</b>${suggested.has(g.capability) ? ' <span class="badge st-escalated">gap</span>' : ''}</td>
      <td>${g.delegations}</td><td>${g.rejectedCapability}</td><td>${num(g.rejectionRate)}</td><td>${num(g.latencyPenaltyRatio)}</td><td>${num(g.clarificationCyclesRatio)}</td></tr>`).join('')}
    </tbody></table></section>`
  if (m.suggestions.length) {
    html += `<section class="team-suggestions"><h3>Suggested agents <span class="muted small">(§8.3's suggestion record)</span></h3>
      ${m.suggestions.map((s) => `<div class="suggestion" data-suggestion="${esc(s.suggestion_id)}"><p>Propose <b>${esc(s.proposed_agent)}</b> for ${s.capabilities.map((c) => `<code>${esc(c)}</code>`).join(', ')}: ${esc(s.impact_expectation)}</p>
        <pre class="json">${esc(JSON.stringify(s, null, 2))}</pre></div>`).join('')}</section>`
  } else {
    html += '<p class="muted">No capability scores ≥ 0.55: no agent to suggest.</p>'
  }
  return html
}
