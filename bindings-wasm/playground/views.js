// The centre views of the state shown: the wait-for graph (graph-view.js), the threads
// rendered by the core, the monitor report (and a dry run "if it ran now"), the files as JSON,
// the agent statuses, the team's delegation metrics (team-view.js) and the offline audit of
// a ledger (audit-view.js).
import { S, OP_LABEL, clockNow, latest, shownSnapshot, shownNow, shownReport, issueNumbers, records, statusesOf, config } from './session.js'
import { ledgerTexts, statusText, STATUS_FILE } from './engine.js'
import { $, esc, flash, emptyState, refusalHtml, badge } from './dom.js'
import { hms, fmtClock, fmtDur, EVENT_WORD } from './format.js'
import { markdownToHtml } from './markdown.js'
import { orderAgents } from './graph.js'
import { graphView } from './graph-view.js'
import { auditView } from './audit-view.js'
import { teamView } from './team-view.js'

export function renderIssueSelect() {
  const { ui } = S
  const sel = $('#issue-select')
  const issues = issueNumbers(shownSnapshot())
  const latestIssues = issueNumbers(latest())
  const all = [...new Set([...issues, ...latestIssues])].sort((a, b) => a - b)
  if (ui.issue !== 'all' && !all.includes(ui.issue)) ui.issue = all.length ? all[all.length - 1] : null
  sel.innerHTML = all.map((n) => `<option value="${n}">#${n}</option>`).join('') + (all.length > 1 ? '<option value="all">All</option>' : '')
  if (!all.length) sel.innerHTML = '<option value="">—</option>'
  sel.value = ui.issue === null ? '' : String(ui.issue)
  sel.disabled = all.length === 0
}

export function renderView() {
  for (const v of ['graph', 'threads', 'report', 'ledger', 'agents', 'team', 'audit']) {
    if (v !== S.ui.view) continue
    $(`#view-${v}`).innerHTML = VIEWS[v]()
  }
}

/** The issues the views show: the one picked, or all. */
export function issuesShown() {
  const all = issueNumbers(shownSnapshot())
  if (S.ui.issue === 'all') return all
  return all.includes(S.ui.issue) ? [S.ui.issue] : []
}

const VIEWS = {
  graph: () => graphView(issuesShown()),
  team: teamView,
  audit: auditView,

  threads() {
    const { ui } = S
    const issues = issuesShown()
    const recs = records(shownSnapshot()).filter((r) => issues.includes(r.issueNumber))
    if (!recs.length) return emptyState('No threads yet', 'Every clarification is a thread: questions, answers and what the monitor did. Ask something to start one.')
    const now = shownNow()
    const open = recs.filter((r) => ['pending', 'stale', 'answered', 'escalated'].includes(r.status))
    let html = `<section class="md-block"><h3>Open clarifications <span class="muted small">(renderMarkdown view "list")</span></h3><div class="md">${md({ view: 'list', clarifications: open })}</div></section>`
    for (const r of [...recs].reverse()) {
      const isOpen = r.id === ui.selectedId || (ui.selectedId === null && r === recs[recs.length - 1])
      let sla = ''
      if (r.status === 'pending' && r.staleAfter) {
        const left = Date.parse(r.staleAfter) - now
        sla = left >= 0 ? `<span class="sla">SLA ${esc(hms(Date.parse(r.staleAfter)))} · ${fmtDur(left)} left</span>` : `<span class="sla late">SLA passed ${fmtDur(-left)} ago · stale at the next monitor run</span>`
      } else if (r.status === 'stale') sla = '<span class="sla late">stale</span>'
      html += `<details class="thread st-${esc(r.status)}" data-record="${esc(r.id)}" ${isOpen ? 'open' : ''}>
        <summary><code>${esc(r.id)}</code> ${badge(r.status)} <span class="agents">${esc(r.from)} → ${esc(r.to)}</span> <span class="topic">${esc(r.topic)}</span>
        <span class="meta">round ${esc(r.round)}/${esc(r.maxRounds)} · ${r.blocking ? 'blocking' : 'non-blocking'}${r.retries ? ` · ${r.retries} retr${r.retries > 1 ? 'ies' : 'y'}` : ''}</span> ${sla}</summary>
        <div class="md">${md({ view: 'thread', clarification: r })}</div>
        ${r.status === 'escalated' ? `<div class="md escalation">${md({ view: 'escalation', clarification: r })}</div>` : ''}
      </details>`
    }
    return html
  },

  report() {
    const shown = shownReport()
    let html = ''
    if (!shown) {
      html += emptyState('The monitor has not run yet', 'It runs after every successful command and whenever you advance the clock. It finds stale, stuck, deadlocked and abandoned clarifications.')
    } else {
      const { report, index, now } = shown
      const step = S.rt.results[index]
      html += `<section class="report-card" data-step="${index}"><h3>Monitor report <span class="muted small">after step ${index + 1} (${esc(OP_LABEL[step.step.op])}) at ${esc(fmtClock(now))}</span></h3>${reportSummary(report)}
        <div class="md">${md({ view: 'report', report })}</div></section>`
      const events = step.result.events ?? []
      if (events.length) {
        html += `<section class="events"><h3>Events of that step</h3><table class="data"><thead><tr><th>type</th><th>id</th><th>from → to</th><th>actor</th><th>time</th><th>reason</th></tr></thead><tbody>${events.map((e) => `<tr><td><span class="chip ev-${EVENT_WORD[e.type] ?? ''}">${esc(e.type)}</span></td><td><code>${esc(e.clarificationId)}</code></td><td>${esc(e.fromAgent)} → ${esc(e.toAgent)}</td><td>${esc(e.actor)}</td><td>${esc(hms(e.timestamp))}</td><td>${esc(e.reason ?? '')}</td></tr>`).join('')}</tbody></table></section>`
      }
    }
    if (S.ui.step === null) {
      const p = S.rt.workspace.preview(clockNow())
      if (p) {
        const busy = !isQuiet(p.report)
        html += `<section class="preview ${busy ? 'due' : ''}"><h3>If the monitor ran now <span class="muted small">(dry run at ${esc(hms(clockNow()))})</span></h3>${busy ? reportSummary(p.report, 'preview') : '<p class="muted">Nothing is due. Advance the clock past an SLA deadline to see stale → retry → escalation.</p>'}</section>`
      }
    }
    return html
  },

  ledger() {
    const { ui } = S
    const snap = shownSnapshot()
    const files = ledgerTexts(snap)
    const names = Object.keys(files)
    const statuses = statusText(snap)
    if (statuses !== undefined) names.push(STATUS_FILE)
    if (!names.length) return emptyState('No files yet', 'The CLI keeps one ledger per issue in <code>.agentx/state/clarifications/issue-&lt;n&gt;.json</code>, and agent statuses in <code>agent-status.json</code>.')
    const wanted = ui.ledgerFile && names.includes(ui.ledgerFile) ? ui.ledgerFile : ui.issue !== null && ui.issue !== 'all' && names.includes(`issue-${ui.issue}.json`) ? `issue-${ui.issue}.json` : names[0]
    const text = wanted === STATUS_FILE ? statuses : files[wanted]
    let body
    try {
      body = highlightJson(JSON.stringify(JSON.parse(text), null, 2))
    } catch {
      body = `<span class="j-bad">${esc(text)}</span>`
    }
    const dir = wanted === STATUS_FILE ? '.agentx/state/' : '.agentx/state/clarifications/'
    return `<div class="file-list" role="tablist" aria-label="Files">${names.map((n) => `<button type="button" role="tab" data-file="${esc(n)}" aria-selected="${n === wanted}">${esc(n)}</button>`).join('')}</div>
      <div class="file-path"><code>${esc(dir + wanted)}</code> <button type="button" id="copy-json">Copy</button></div>
      <pre class="json" data-file="${esc(wanted)}">${body}</pre>`
  },

  agents() {
    const st = statusesOf(shownSnapshot())
    const names = orderAgents(Object.keys(st), config()?.priority ?? [])
    if (!names.length) return emptyState('No agent statuses yet', 'Operations update <code>agent-status.json</code>: a blocking request sets the requester <em>blocked-clarification</em> and the target <em>clarifying</em>; an answer sets them back to <em>working</em>.')
    const cell = (v) => (v === null || v === undefined ? '<span class="muted">—</span>' : esc(v))
    return `<table class="data agents"><thead><tr><th>agent</th><th>status</th><th>issue</th><th>waiting on</th><th>responding to</th><th>clarification</th><th>last activity</th></tr></thead><tbody>
      ${names.map((a) => { const s = st[a]; return `<tr data-agent="${esc(a)}"><td><b>${esc(a)}</b></td><td><span class="badge ag-${esc(s.status)}">${esc(s.status)}</span></td><td>${cell(s.issue)}</td><td>${cell(s.waitingOn)}</td><td>${cell(s.respondingTo)}</td><td>${s.clarificationId ? `<code>${esc(s.clarificationId)}</code>` : cell(null)}</td><td>${s.lastActivity ? esc(s.lastActivity.replace('T', ' ').replace(/\.000Z$|Z$/, '')) : cell(null)}</td></tr>` }).join('')}
      </tbody></table>
      <p class="help">A status is a fact the agent's hooks report; clarification operations update it (docs/protocol.md §5). The monitor abandons the open requests of a requester that is <em>done</em>, or <em>working</em> on another issue.</p>`
  },
}

const isQuiet = (r) => !r.stale.length && !r.retried.length && !r.escalated.length && !r.stuck.length && !r.deadlocks.length && !r.abandoned.length && !r.errors.length

function reportSummary(report, kind = 'report') {
  const item = (cat, id, extra = '') => `<li class="chip ev-${cat}" data-${kind}="${cat}" data-id="${esc(id)}">${cat} <code>${esc(id)}</code>${extra}</li>`
  let html = `<ul class="report-items" data-kind="${kind}">`
  report.stale.forEach((id) => (html += item('stale', id)))
  report.retried.forEach((id) => (html += item('retry', id)))
  report.escalated.forEach((e) => (html += item('escalated', e.id, ` <span class="reason">${esc(e.reason)}</span>`)))
  report.stuck.forEach((id) => (html += item('stuck', id)))
  report.deadlocks.forEach((d) => (html += `<li class="chip ev-deadlock" data-${kind}="deadlock" data-id="${esc(d.escalated)}">deadlock ${d.cycle.map((x) => `<code>${esc(x)}</code>`).join(' ')} <span class="reason">between ${d.agents.map(esc).join(', ')} → escalates <code>${esc(d.escalated)}</code></span></li>`))
  report.abandoned.forEach((id) => (html += item('abandoned', id)))
  report.errors.forEach((e) => (html += `<li class="chip ev-error" data-${kind}="error">${esc(e.code)} ${esc(e.file)} <span class="reason">${esc(e.message)}</span></li>`))
  if (isQuiet(report)) html += '<li class="muted">quiet: nothing stale, stuck, deadlocked or abandoned</li>'
  return html + '</ul>'
}

/** A view rendered by the core's markdown renderer. */
function md(input) {
  try {
    return markdownToHtml(S.c.renderMarkdown(input).text)
  } catch (e) {
    return refusalHtml({ code: e.code ?? 'ERROR', message: e.message })
  }
}

function highlightJson(json) {
  return esc(json).replace(/(&quot;(?:[^&\\]|\\.|&(?!quot;))*?&quot;)(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g, (m, str, colon, lit, num) => {
    if (str) return colon ? `<span class="j-key">${str}</span>${colon}` : `<span class="j-str">${str}</span>`
    if (lit) return `<span class="j-lit">${lit}</span>`
    return `<span class="j-num">${num}</span>`
  })
}

/** The issue picker, record selection (threads, graph edges) and the ledger's file tabs. */
export function wireViews() {
  const { ui } = S
  $('#issue-select').addEventListener('change', (e) => {
    ui.issue = e.target.value === 'all' ? 'all' : Number(e.target.value)
    ui.ledgerFile = null
    renderView()
  })
  const views = $('.panel.center')
  views.addEventListener('click', (e) => {
    const edge = e.target.closest('[data-edge]')
    if (edge) {
      ui.selectedId = edge.dataset.edge
      renderView()
      return
    }
    const file = e.target.closest('[data-file][role="tab"]')
    if (file) {
      ui.ledgerFile = file.dataset.file
      renderView()
      return
    }
    if (e.target.id === 'copy-json') {
      const pre = $('pre.json')
      navigator.clipboard?.writeText(pre.textContent).then(() => flash('JSON copied.'), () => flash('Copy failed: select the text instead.', 'error'))
    }
  })
  views.addEventListener('toggle', (e) => {
    const d = e.target
    if (d.matches?.('details.thread') && d.open) ui.selectedId = d.dataset.record
  }, true)
}
