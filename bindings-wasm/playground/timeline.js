// The timeline: every step of the scenario with its events or refusal, the queue of an
// example's upcoming steps, and time travel (click a step to see the state after it).
import { S, OP_LABEL, clockNow, issueOf, undo } from './session.js'
import { $, esc, refusalHtml } from './dom.js'
import { fmtDur, fmtClock, whenHtml, EVENT_WORD } from './format.js'
import { renderIssueSelect, renderView } from './views.js'

function opSummary(step, prevNow) {
  const a = step.args ?? {}
  const who = (x, dflt) => (x ? esc(x) : `<span class="muted">${dflt}</span>`)
  switch (step.op) {
    case 'request':
      return `${who(a.from, '?')} → ${who(a.to, '?')}: <q>${esc(a.topic ?? '')}</q>${a.blocking === false ? ' <span class="tag">non-blocking</span>' : ''}${a.issueNumber !== undefined ? ` <span class="muted">#${esc(a.issueNumber)}</span>` : ''}`
    case 'answer': return `${who(a.from, '?')} answers <code>${esc(a.id)}</code>`
    case 'followUp': return `${who(a.from, '?')} follows up <code>${esc(a.id)}</code>`
    case 'resolve': return `${who(a.from, 'default actor')} resolves <code>${esc(a.id)}</code>`
    case 'escalate': return `${who(a.from, 'human')} escalates <code>${esc(a.id)}</code>`
    case 'abandon': return `${who(a.from, 'requester')} abandons <code>${esc(a.id)}</code>`
    case 'monitor': {
      const d = prevNow === null ? 0 : step.now - prevNow
      return `monitor run${d > 0 ? ` <span class="muted">(clock +${fmtDur(d)})</span>` : ''}${a.dryRun ? ' <span class="tag">dry run</span>' : ''}`
    }
    case 'hook': return `hook ${esc(a.event)} <b>${esc(a.agent)}</b>${a.issue !== undefined && a.issue !== null ? ` <span class="muted">#${esc(a.issue)}</span>` : ''}`
    case 'state': return `state <b>${esc(a.agent)}</b> → ${esc(a.status)}${a.issue !== undefined && a.issue !== null ? ` <span class="muted">#${esc(a.issue)}</span>` : ''}`
    case 'workflows': return `workflows applied <span class="muted">(${Object.keys(a.workflows ?? {}).map(esc).join(', ')}${a.config ? ', config.toml' : ''})</span>`
    default: return esc(step.op)
  }
}

/** A result's events and monitor findings as chips. */
export function chips(result) {
  const out = []
  const report = result.report ?? result.monitor
  for (const e of result.events ?? []) {
    const word = EVENT_WORD[e.type] ?? e.type
    const title = `${e.type} · ${e.fromAgent} → ${e.toAgent} · actor ${e.actor}${e.reason ? ` · ${e.reason}` : ''}`
    out.push(`<span class="chip ev-${word}" title="${esc(title)}">${word} <code>${esc(e.clarificationId)}</code></span>`)
  }
  for (const id of report?.retried ?? []) out.push(`<span class="chip ev-retry" title="retried by the monitor: the SLA restarts">retry <code>${esc(id)}</code></span>`)
  for (const d of report?.deadlocks ?? []) out.push(`<span class="chip ev-deadlock" title="${esc(`cycle ${d.cycle.join(', ')} between ${d.agents.join(', ')}`)}">deadlock → <code>${esc(d.escalated)}</code></span>`)
  for (const id of report?.stuck ?? []) out.push(`<span class="chip ev-stuck" title="circular: repeated questions, answers or a direction flip">stuck <code>${esc(id)}</code></span>`)
  for (const e of report?.errors ?? []) out.push(`<span class="chip ev-error" title="${esc(e.message)}">${esc(e.code)} ${esc(e.file)}</span>`)
  return out.join(' ')
}

function timelineItem(entry, i, prevNow) {
  const { ui, rt } = S
  const { step, result, warning } = entry
  const refused = result.ok === false
  const quiet = step.op === 'monitor' && !refused && !(result.events?.length) && !(result.report?.retried?.length)
  const cls = ['step', `op-${step.op}`, refused ? 'refused' : 'ok', quiet ? 'quiet' : '', ui.step === i ? 'selected' : '', ui.step === null && i === rt.results.length - 1 ? 'current' : ''].filter(Boolean).join(' ')
  const when = whenHtml(step.now, prevNow)
  let body = ''
  if (refused) body += refusalHtml(result.error, !!result.clarification)
  const ch = chips(result)
  if (ch) body += `<div class="chips">${ch}</div>`
  else if (quiet) body += '<div class="muted small">nothing due</div>'
  if (warning) body += `<div class="muted small">warning: ${esc(warning)}</div>`
  return `<li class="${cls}" data-step="${i}" tabindex="0" aria-current="${ui.step === i ? 'step' : 'false'}">
    <div class="when">${when}</div>
    <div class="body"><div class="what"><span class="op-badge">${OP_LABEL[step.op] ?? esc(step.op)}</span> ${opSummary(step, prevNow)}</div>
    ${step.name ? `<div class="case-name">${esc(step.name)}</div>` : ''}${body}</div></li>`
}

export function renderTimeline() {
  const { scenario, ui, rt } = S
  $('#scenario-title').innerHTML = `<b>${esc(scenario.title ?? 'Scenario')}</b>${scenario.description ? ` — ${esc(scenario.description)}` : ''}`
  const list = $('#timeline')
  const setupBits = []
  const s = scenario.setup ?? {}
  if (s.ledgers) setupBits.push(`${Object.keys(s.ledgers).length} ledger file(s)`)
  if (s.statuses) setupBits.push('agent statuses')
  if (s.workflows) setupBits.push(`workflows: ${Object.keys(s.workflows).join(', ')}`)
  if (s.config) setupBits.push('config.toml')
  let html = `<li class="step start ${ui.step === -1 ? 'selected' : ''}" data-step="-1" tabindex="0"><div class="when">${whenHtml(scenario.start, null)}</div><div class="body"><div class="what"><span class="op-badge">start</span> ${setupBits.length ? esc(setupBits.join(' · ')) : 'empty workspace, default workflows'}</div></div></li>`
  let prev = scenario.start
  rt.results.forEach((entry, i) => {
    html += timelineItem(entry, i, prev)
    prev = entry.step.now
  })
  list.innerHTML = html
  if (!rt.results.length) list.insertAdjacentHTML('beforeend', '<li class="empty">No steps yet. Use the forms on the left, advance the clock, or load an example.</li>')
  const cur = list.querySelector('.selected, .current')
  if (cur && ui.step === null) cur.scrollIntoView({ block: 'nearest' })
  $('#undo').disabled = rt.results.length === 0

  const box = $('#queue-box')
  box.hidden = scenario.queue.length === 0
  $('#queue-count').textContent = scenario.queue.length ? `(${scenario.queue.length})` : ''
  let q = ''
  let qprev = clockNow()
  scenario.queue.forEach((step, i) => {
    q += `<li class="step upcoming ${i === 0 ? 'next' : ''}" data-queue="${i}"><div class="when">${whenHtml(step.now, qprev)}</div><div class="body"><div class="what"><span class="op-badge">${OP_LABEL[step.op] ?? esc(step.op)}</span> ${opSummary(step, qprev)}</div>${step.name ? `<div class="case-name">${esc(step.name)}</div>` : ''}</div></li>`
    qprev = Math.max(qprev, step.now)
  })
  $('#queue').innerHTML = q
}

export function renderTravel() {
  const { ui, rt } = S
  const box = $('#travel')
  if (ui.step === null) {
    box.hidden = true
    return
  }
  const label = ui.step === -1 ? 'the start of the scenario' : `step ${ui.step + 1} of ${rt.results.length} (${fmtClock(rt.results[ui.step].step.now)})`
  box.innerHTML = `Viewing the state after ${esc(label)}. <button type="button" id="travel-back">Back to now</button>`
  box.hidden = false
}

function showTravel() {
  renderIssueSelect()
  renderTravel()
  renderView()
  renderTimeline()
}

/** Time travel: a click (or Enter, arrows) on a step shows the state after it; undo. */
export function wireTimeline() {
  $('#undo').addEventListener('click', undo)
  const pickStep = (li) => {
    const { ui, rt } = S
    const i = Number(li.dataset.step)
    ui.step = i === rt.results.length - 1 ? null : i
    const r = i >= 0 ? rt.results[i].result : null
    if (r?.clarification?.id) {
      ui.selectedId = r.clarification.id
      ui.issue = issueOf(r.clarification.id)
    }
    showTravel()
  }
  $('#timeline').addEventListener('click', (e) => {
    const li = e.target.closest('li[data-step]')
    if (li) pickStep(li)
  })
  $('#timeline').addEventListener('keydown', (e) => {
    const li = e.target.closest('li[data-step]')
    if (!li) return
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault()
      pickStep(li)
      $(`#timeline li[data-step="${li.dataset.step}"]`)?.focus()
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      const sib = e.key === 'ArrowDown' ? li.nextElementSibling : li.previousElementSibling
      if (sib?.dataset.step !== undefined) {
        pickStep(sib)
        $(`#timeline li[data-step="${sib.dataset.step}"]`)?.focus()
      }
    }
  })
  document.addEventListener('click', (e) => {
    if (e.target.id === 'travel-back') {
      S.ui.step = null
      showTravel()
    }
  })
}
