// The playground page: forms → steps → the wasm core (through engine.js) → views.
// A scenario is {setup, steps, queue, start}; the page's state is the replay of its steps, so
// the URL hash or localStorage reproduce it exactly. Nothing here decides protocol behaviour:
// every ledger, status, report and refusal comes from the core.
import init, * as core from './pkg/clarify.mjs'
import { Workspace, replay, parseFiles, parseStatuses, MUTATIONS } from './engine.js'
import { markdownToHtml, escapeHtml as esc } from './markdown.js'
import { renderGraph, deadlocksOf, orderAgents } from './graph.js'
import { EXAMPLES, loadExample } from './examples.js'
import { encode, decode, hashState, saveLocal, loadLocal } from './state.js'

const $ = (sel, root = document) => root.querySelector(sel)
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)]

let c // the core API
let DEFAULTS // {workflows: {type: text}, config: text}
let scenario
let rt // replay(scenario): {workspace, initial, results}
const ui = {
  step: null, // index of the step whose state is shown; null = the latest
  issue: null, // issue number shown, or 'all'
  selectedId: null, // the record the views focus on
  view: 'graph',
  drafts: null, // the workflow editor's texts: {type: text, '@config': text}
  activeFile: 'feature',
  ledgerFile: null,
}

// The statuses that admit each operation: the core's state machine, asked once after init.
let transitions
const statusesFor = (op) => Object.keys((transitions ??= core.transitions().transitions)[op])
const OP_LABEL = { request: 'ask', answer: 'answer', followUp: 'follow-up', resolve: 'resolve', escalate: 'escalate', abandon: 'abandon', monitor: 'monitor', hook: 'hook', state: 'state', workflows: 'workflows' }

// Sample texts so a click on a button always does something meaningful.
const SAMPLES = {
  ask: [
    ['Cache layer', 'Should sessions live in Redis or in an in-process cache?'],
    ['Export scope', 'Is CSV export in scope for this release, or XLSX too?'],
    ['Rate limits', 'What rate limit applies to the public API, per key or per IP?'],
    ['Error copy', 'Which wording do we show when the upload fails?'],
    ['Tenancy', 'Is data separated per organisation or per workspace?'],
  ],
  answer: ['Redis — we run several instances behind the load balancer. See ADR-7.', 'CSV only for now; XLSX is planned for the next release.', 'Per API key, 100 requests a minute.', 'Use the short one: "Upload failed — try again."', 'Per organisation.'],
  followUp: ['Which TTL should the keys get?', 'Does that include the admin exports?', 'And for anonymous requests?', 'Title case or sentence case?'],
}
const sampleIndex = { ask: 0, answer: 0, followUp: 0 }
const nextSample = (kind) => SAMPLES[kind][sampleIndex[kind]++ % SAMPLES[kind].length]

// ---------------------------------------------------------------------------------------------
// Time formatting

const DAY_FMT = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' })
const SHORT_DAY = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' })

function hms(ms, always = false) {
  const iso = new Date(ms).toISOString()
  const hm = iso.slice(11, 16)
  const s = iso.slice(17, 19)
  const milli = iso.slice(20, 23)
  if (milli !== '000') return `${hm}:${s}.${milli}`
  if (s !== '00' || always) return `${hm}:${s}`
  return hm
}
const fmtClock = (ms) => `${DAY_FMT.format(new Date(ms))} · ${hms(ms)}`
const sameDay = (a, b) => new Date(a).toISOString().slice(0, 10) === new Date(b).toISOString().slice(0, 10)

function fmtDur(ms) {
  const neg = ms < 0
  ms = Math.abs(ms)
  let out
  if (ms < 1000) out = `${ms} ms`
  else if (ms < 60000) out = `${Math.round(ms / 1000)} s`
  else if (ms < 3600000) out = `${Math.floor(ms / 60000)} min${ms % 60000 >= 1000 ? ` ${Math.round((ms % 60000) / 1000)} s` : ''}`
  else if (ms < 86400000) out = `${Math.floor(ms / 3600000)} h${ms % 3600000 >= 60000 ? ` ${Math.floor((ms % 3600000) / 60000)} min` : ''}`
  else out = `${Math.floor(ms / 86400000)} d${ms % 86400000 >= 3600000 ? ` ${Math.floor((ms % 86400000) / 3600000)} h` : ''}`
  return neg ? `-${out}` : out
}

// ---------------------------------------------------------------------------------------------
// Scenario state

function emptyScenario() {
  const hour = 3600000
  return { v: 1, title: 'Your scenario', example: null, description: '', setup: {}, start: Math.floor(Date.now() / hour) * hour, steps: [], queue: [] }
}

const clockNow = () => scenario.steps.reduce((t, s) => Math.max(t, s.now), scenario.start)
const latest = () => (rt.results.length ? rt.results[rt.results.length - 1].snapshot : rt.initial)
const shownIndex = () => (ui.step === null ? rt.results.length - 1 : ui.step)
const shownSnapshot = () => (shownIndex() < 0 ? rt.initial : rt.results[shownIndex()].snapshot)

/** The monitor report of the shown step, or of the last step before it that ran the monitor. */
function shownReport() {
  for (let i = shownIndex(); i >= 0; i--) {
    const r = rt.results[i].result
    const report = r.report ?? r.monitor
    if (report) return { report, index: i, now: rt.results[i].step.now }
  }
  return null
}

function setScenario(next, { push = false } = {}) {
  scenario = next
  rt = replay(c, scenario)
  ui.step = null
  ui.drafts = null
  ui.ledgerFile = null
  const issues = issueNumbers(latest())
  ui.issue = issues.length ? issues[issues.length - 1] : null
  ui.selectedId = null
  persist(push)
  renderAll()
}

function runStep(step) {
  scenario.steps.push(step)
  const result = rt.workspace.run(step.op, step.args ?? {}, step.now)
  const warning = rt.workspace.takeWarning()
  rt.results.push({ step, result, warning, snapshot: rt.workspace.snapshot() })
  ui.step = null
  const id = result.clarification?.id
  if (id) {
    ui.selectedId = id
    ui.issue = issueOf(id)
  } else if (step.op === 'request' && ui.issue !== 'all') {
    const n = Number(step.args.issueNumber)
    if (Number.isInteger(n) && issueNumbers(latest()).includes(n)) ui.issue = n
  }
  persist(false)
  renderAll()
  return result
}

let persistTimer = null
let persistSeq = 0
function persist(push) {
  const seq = ++persistSeq
  clearTimeout(persistTimer)
  const write = async () => {
    const encoded = await encode(scenario)
    if (seq !== persistSeq) return
    const url = `${location.pathname}${location.search}#s=${encoded}`
    if (push) history.pushState(null, '', url)
    else history.replaceState(null, '', url)
    saveLocal(encoded)
  }
  // Coalesce bursts (Play all) into one write; a push (new scenario) is written at once.
  if (push) write()
  else persistTimer = setTimeout(write, 60)
}

// ---------------------------------------------------------------------------------------------
// Derived data

const issueOf = (id) => Number(/^CLR-(\d+)-/.exec(id)?.[1])
const issueNumbers = (snap) => parseFiles(snap.files).ledgers.map((l) => l.issueNumber)

function records(snap) {
  const { ledgers } = parseFiles(snap.files)
  return ledgers.flatMap((l) => l.clarifications.map((r) => ({ ...r, issueNumber: l.issueNumber })))
}

const parseCache = new Map()
function parsed(kind, text) {
  const key = `${kind}\u0000${text}`
  if (!parseCache.has(key)) {
    let v
    try {
      v = kind === 'workflow' ? { value: c.parseWorkflow({ text }).workflow } : { value: c.parseConfig({ text }).config }
    } catch (e) {
      v = { error: { code: e.code ?? 'ERROR', message: e.message } }
    }
    if (parseCache.size > 200) parseCache.clear()
    parseCache.set(key, v)
  }
  return parseCache.get(key)
}

function configOf(ws) {
  return parsed('config', ws.config ?? '').value ?? parsed('config', '').value
}

/** The workflow a request on this issue would run under (SPEC §6.4 step 3). */
function effectiveWorkflow(issue, explicit) {
  if (explicit) return explicit
  const ledger = parseFiles(latest().files).ledgers.find((l) => l.issueNumber === issue)
  if (ledger?.workflow) return ledger.workflow
  return configOf(rt.workspace)?.defaultWorkflow ?? 'feature'
}

function workflowSteps(type) {
  const text = rt.workspace.workflows[type]
  if (text === undefined) return null
  return parsed('workflow', typeof text === 'string' ? text : '').value?.steps ?? null
}

function knownAgents() {
  const set = new Set()
  for (const text of Object.values(rt.workspace.workflows)) {
    for (const s of parsed('workflow', String(text)).value?.steps ?? []) {
      set.add(s.agent)
      s.canClarify.forEach((a) => set.add(a))
    }
  }
  for (const r of records(latest())) {
    set.add(r.from)
    set.add(r.to)
  }
  Object.keys(parseStatuses(latest().statuses)).forEach((a) => set.add(a))
  return orderAgents([...set], configOf(rt.workspace)?.priority ?? [])
}

// ---------------------------------------------------------------------------------------------
// Rendering: header, clock, timeline

function renderAll() {
  renderClock()
  renderForms()
  renderIssueSelect()
  renderTravel()
  renderView()
  renderTimeline()
  renderEditor()
}

function renderClock() {
  const now = clockNow()
  const t = $('#clock-time')
  t.textContent = fmtClock(now)
  t.dateTime = new Date(now).toISOString()
  const due = nextDeadline()
  const btn = $('#next-deadline')
  btn.disabled = due === null
  btn.title = due === null ? 'No pending record has an SLA deadline' : `Jump to ${fmtClock(due)} (${fmtDur(due - now)} from now), just past the earliest SLA deadline, then run the monitor`
  const at = $('#custom-at')
  if (document.activeElement !== at) at.value = new Date(now).toISOString().slice(0, 19)
}

function nextDeadline() {
  const now = clockNow()
  let best = null
  for (const r of records(latest())) {
    if (r.status !== 'pending' || !r.staleAfter) continue
    const t = Date.parse(r.staleAfter) + 1
    if (Number.isNaN(t)) continue
    const at = Math.max(t, now)
    if (best === null || at < best) best = at
  }
  return best
}

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

const EVENT_WORD = {
  'clarification-requested': 'requested',
  'clarification-answered': 'answered',
  'clarification-stale': 'stale',
  'clarification-resolved': 'resolved',
  'clarification-escalated': 'escalated',
  'clarification-abandoned': 'abandoned',
}

function chips(result) {
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

function refusalHtml(error, written) {
  return `<div class="refusal" role="alert"><code class="code">${esc(error.code)}</code> <span class="msg">${esc(error.message)}</span>${written ? '<div class="note">The core wrote the escalation before refusing: see the record.</div>' : ''}</div>`
}

/** The timeline's time column: HH:MM, then seconds/ms and the date when they matter. */
function whenHtml(now, prevNow) {
  const iso = new Date(now).toISOString()
  let html = esc(iso.slice(11, 16))
  const rest = iso.slice(16, 23)
  if (rest !== ':00.000') html += `<small>${esc(rest.endsWith('.000') ? rest.slice(0, 3) : rest)}</small>`
  if (prevNow !== null && !sameDay(prevNow, now)) html = `<small>${esc(SHORT_DAY.format(new Date(now)))}</small>${html}`
  return html
}

function timelineItem(entry, i, prevNow) {
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

function renderTimeline() {
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

function renderTravel() {
  const box = $('#travel')
  if (ui.step === null) {
    box.hidden = true
    return
  }
  const label = ui.step === -1 ? 'the start of the scenario' : `step ${ui.step + 1} of ${rt.results.length} (${fmtClock(rt.results[ui.step].step.now)})`
  box.innerHTML = `Viewing the state after ${esc(label)}. <button type="button" id="travel-back">Back to now</button>`
  box.hidden = false
}

// ---------------------------------------------------------------------------------------------
// Views

function renderIssueSelect() {
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

function renderView() {
  for (const v of ['graph', 'threads', 'report', 'ledger', 'agents']) {
    const el = $(`#view-${v}`)
    if (v !== ui.view) continue
    el.innerHTML = VIEWS[v]()
  }
}

const STATUS_WORD = { pending: 'pending', answered: 'answered', stale: 'stale', escalated: 'escalated', resolved: 'resolved', abandoned: 'abandoned' }
const badge = (status) => `<span class="badge st-${esc(status)}">${esc(STATUS_WORD[status] ?? status)}</span>`

function issuesShown() {
  const snap = shownSnapshot()
  const all = issueNumbers(snap)
  if (ui.issue === 'all') return all
  return all.includes(ui.issue) ? [ui.issue] : []
}

function emptyState(title, text) {
  return `<div class="empty-state"><div class="empty-icon" aria-hidden="true">⟲</div><h3>${title}</h3><p>${text}</p></div>`
}

const VIEWS = {
  graph() {
    const snap = shownSnapshot()
    const recs = records(snap)
    const issues = issuesShown()
    if (!recs.length || !issues.length) {
      return emptyState('No clarifications yet', 'Ask a question with the form on the left, or load the <b>Three-agent deadlock</b> example to watch the monitor break a wait cycle.')
    }
    const shown = shownReport()
    const preview = ui.step === null ? rt.workspace.preview(clockNow()) : null
    const statuses = parseStatuses(snap.statuses)
    const priority = configOf(rt.workspace)?.priority ?? []
    let html = ''
    for (const issue of issues) {
      const rs = recs.filter((r) => r.issueNumber === issue)
      const broken = deadlocksOf(shown?.report, issue)
      const live = deadlocksOf(preview?.report, issue)
      const waits = rs.filter((r) => r.blocking && (r.status === 'pending' || r.status === 'stale'))
      const svg = renderGraph({ issue, records: rs, statuses, priority, report: shown?.report, preview: preview?.report, selectedId: ui.selectedId })
      let note = ''
      for (const d of broken) {
        note += `<p class="narrative broken">Deadlock broken by the monitor at ${esc(hms(shown.now))}: ${d.cycle.map((x) => `<code>${esc(x)}</code>`).join(', ')} between ${d.agents.map(esc).join(', ')}. <b><code>${esc(d.escalated)}</code> was escalated</b> — its requester yields to a human; the others continue.</p>`
      }
      for (const d of live) {
        note += `<p class="narrative live">⚠ Wait cycle: ${d.cycle.map((x) => `<code>${esc(x)}</code>`).join(', ')} between ${d.agents.map(esc).join(', ')}. The next monitor run escalates <code>${esc(d.escalated)}</code> (its requester ranks lowest in <code>priority</code>). Advance the clock or press <b>Run monitor</b>.</p>`
      }
      if (!broken.length && !live.length) {
        note += waits.length
          ? `<p class="narrative">${waits.length} blocking record${waits.length > 1 ? 's' : ''} waiting; no cycle.</p>`
          : '<p class="narrative">Nobody waits on anyone: the wait-for graph has an edge only for a <b>blocking</b> record that is <b>pending</b> or <b>stale</b>.</p>'
      }
      const wf = parseFiles(snap.files).ledgers.find((l) => l.issueNumber === issue)?.workflow
      html += `<figure class="graph-card" data-issue="${issue}"><figcaption><b>Issue #${issue}</b>${wf ? ` <span class="muted">· workflow ${esc(wf)}</span>` : ''}</figcaption><div class="graph-wrap">${svg}</div>${note}</figure>`
    }
    html += `<div class="legend" aria-label="Legend">
      <span><i class="sw pending"></i> pending wait</span><span><i class="sw stale"></i> stale wait</span>
      <span><i class="sw cycle"></i> deadlock cycle</span><span><i class="sw escalated"></i> escalated by the monitor</span>
      <span class="muted">Edges: requester → target, labelled with the record id. Hover for details.</span></div>`
    return html
  },

  threads() {
    const snap = shownSnapshot()
    const issues = issuesShown()
    const recs = records(snap).filter((r) => issues.includes(r.issueNumber))
    if (!recs.length) return emptyState('No threads yet', 'Every clarification is a thread: questions, answers and what the monitor did. Ask something to start one.')
    const now = ui.step === null ? clockNow() : ui.step === -1 ? scenario.start : rt.results[ui.step].step.now
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
      const step = rt.results[index]
      html += `<section class="report-card" data-step="${index}"><h3>Monitor report <span class="muted small">after step ${index + 1} (${esc(OP_LABEL[step.step.op])}) at ${esc(fmtClock(now))}</span></h3>${reportSummary(report)}
        <div class="md">${md({ view: 'report', report })}</div></section>`
      const events = step.result.events ?? []
      if (events.length) {
        html += `<section class="events"><h3>Events of that step</h3><table class="data"><thead><tr><th>type</th><th>id</th><th>from → to</th><th>actor</th><th>time</th><th>reason</th></tr></thead><tbody>${events.map((e) => `<tr><td><span class="chip ev-${EVENT_WORD[e.type] ?? ''}">${esc(e.type)}</span></td><td><code>${esc(e.clarificationId)}</code></td><td>${esc(e.fromAgent)} → ${esc(e.toAgent)}</td><td>${esc(e.actor)}</td><td>${esc(hms(e.timestamp))}</td><td>${esc(e.reason ?? '')}</td></tr>`).join('')}</tbody></table></section>`
      }
    }
    if (ui.step === null) {
      const p = rt.workspace.preview(clockNow())
      if (p) {
        const busy = !isQuiet(p.report)
        html += `<section class="preview ${busy ? 'due' : ''}"><h3>If the monitor ran now <span class="muted small">(dry run at ${esc(hms(clockNow()))})</span></h3>${busy ? reportSummary(p.report, 'preview') : '<p class="muted">Nothing is due. Advance the clock past an SLA deadline to see stale → retry → escalation.</p>'}</section>`
      }
    }
    return html
  },

  ledger() {
    const snap = shownSnapshot()
    const names = Object.keys(snap.files)
    if (snap.statuses !== undefined) names.push('agent-status.json')
    if (!names.length) return emptyState('No files yet', 'The CLI keeps one ledger per issue in <code>.agentx/state/clarifications/issue-&lt;n&gt;.json</code>, and agent statuses in <code>agent-status.json</code>.')
    const wanted = ui.ledgerFile && names.includes(ui.ledgerFile) ? ui.ledgerFile : ui.issue !== null && ui.issue !== 'all' && names.includes(`issue-${ui.issue}.json`) ? `issue-${ui.issue}.json` : names[0]
    const text = wanted === 'agent-status.json' ? snap.statuses : snap.files[wanted]
    let body
    try {
      body = highlightJson(JSON.stringify(JSON.parse(text), null, 2))
    } catch {
      body = `<span class="j-bad">${esc(text)}</span>`
    }
    const dir = wanted === 'agent-status.json' ? '.agentx/state/' : '.agentx/state/clarifications/'
    return `<div class="file-list" role="tablist" aria-label="Files">${names.map((n) => `<button type="button" role="tab" data-file="${esc(n)}" aria-selected="${n === wanted}">${esc(n)}</button>`).join('')}</div>
      <div class="file-path"><code>${esc(dir + wanted)}</code> <button type="button" id="copy-json">Copy</button></div>
      <pre class="json" data-file="${esc(wanted)}">${body}</pre>`
  },

  agents() {
    const snap = shownSnapshot()
    const st = parseStatuses(snap.statuses)
    const names = orderAgents(Object.keys(st), configOf(rt.workspace)?.priority ?? [])
    if (!names.length) return emptyState('No agent statuses yet', 'Operations update <code>agent-status.json</code>: a blocking request sets the requester <em>blocked-clarification</em> and the target <em>clarifying</em>; an answer sets them back to <em>working</em>.')
    const cell = (v) => (v === null || v === undefined ? '<span class="muted">—</span>' : esc(v))
    return `<table class="data agents"><thead><tr><th>agent</th><th>status</th><th>issue</th><th>waiting on</th><th>responding to</th><th>clarification</th><th>last activity</th></tr></thead><tbody>
      ${names.map((a) => { const s = st[a]; return `<tr data-agent="${esc(a)}"><td><b>${esc(a)}</b></td><td><span class="badge ag-${esc(s.status)}">${esc(s.status)}</span></td><td>${cell(s.issue)}</td><td>${cell(s.waitingOn)}</td><td>${cell(s.respondingTo)}</td><td>${s.clarificationId ? `<code>${esc(s.clarificationId)}</code>` : cell(null)}</td><td>${s.lastActivity ? esc(s.lastActivity.replace('T', ' ').replace(/\.000Z$|Z$/, '')) : cell(null)}</td></tr>` }).join('')}
      </tbody></table>
      <p class="help">A status is a fact the agent's hooks report; clarification operations update it (SPEC §5). The monitor abandons the open requests of a requester that is <em>done</em>, or <em>working</em> on another issue.</p>`
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

function md(input) {
  try {
    return markdownToHtml(c.renderMarkdown(input).text)
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

// ---------------------------------------------------------------------------------------------
// Forms

/** An agent picker: a select limited to what scope allows, plus "Other agent…" for experiments. */
function picker(form, key) {
  const host = form.querySelector(`[data-picker="${key}"]`)
  if (!host.firstChild) {
    host.innerHTML = `<select class="picker" aria-label="${key}"></select><input class="picker-other" type="text" placeholder="agent name" autocomplete="off" hidden aria-label="${key} (other)">`
    const sel = host.querySelector('select')
    sel.addEventListener('change', () => {
      const other = host.querySelector('input')
      other.hidden = sel.value !== '__other__'
      if (!other.hidden) other.focus()
    })
  }
  const sel = host.querySelector('select')
  const other = host.querySelector('input')
  return {
    host,
    sel,
    set(options, preferred) {
      const keep = sel.value
      const optional = host.dataset.optional
      let html = optional ? `<option value="">(${esc(optional)})</option>` : options.length ? '' : '<option value="">—</option>'
      html += options.map((o) => `<option value="${esc(o.value)}">${esc(o.label ?? o.value)}</option>`).join('')
      html += '<option value="__other__">Other agent…</option>'
      sel.innerHTML = html
      const values = [...sel.options].map((o) => o.value)
      if (preferred !== undefined && values.includes(preferred)) sel.value = preferred
      else if (values.includes(keep)) sel.value = keep
      else sel.selectedIndex = 0
      other.hidden = sel.value !== '__other__'
    },
    get() {
      if (sel.value === '__other__') return other.value.trim()
      return sel.value === '' ? undefined : sel.value
    },
  }
}

function setSelectOptions(sel, html, preferred) {
  const keep = sel.value
  sel.innerHTML = html
  const values = [...sel.options].map((o) => o.value)
  if (preferred !== undefined && values.includes(preferred)) sel.value = preferred
  else if (values.includes(keep)) sel.value = keep
  else sel.selectedIndex = 0
}

function renderForms() {
  renderAskForm()
  for (const op of ['answer', 'followUp', 'resolve', 'escalate', 'abandon']) renderRecordForm(op)
  renderStatusForm()
}

function renderAskForm(changed) {
  const form = $('#form-request')
  const types = Object.keys(rt.workspace.workflows)
  const issue = Number(form.issueNumber.value)
  const auto = effectiveWorkflow(Number.isInteger(issue) ? issue : -1, '')
  setSelectOptions(form.workflow, `<option value="">auto: ${esc(auto)}</option>` + types.map((t) => `<option value="${esc(t)}">${esc(t)}</option>`).join(''))
  const type = effectiveWorkflow(issue, form.workflow.value)
  const steps = workflowSteps(type) ?? []
  const fromP = picker(form, 'from')
  const toP = picker(form, 'to')
  const agents = [...new Set(steps.map((s) => s.agent))]
  const first = !fromP.sel.options.length
  fromP.set(agents.map((a) => ({ value: a })), first ? agents[agents.length - 1] : undefined)
  const from = fromP.get()
  const mine = steps.filter((s) => s.agent === from)
  setSelectOptions(form.step, '<option value="">any of its steps</option>' + mine.map((s) => `<option value="${esc(s.id)}">${esc(s.id)}</option>`).join(''))
  const narrowed = form.step.value ? mine.filter((s) => s.id === form.step.value) : mine
  const targets = [...new Set(narrowed.flatMap((s) => s.canClarify))]
  toP.set(targets.map((a) => ({ value: a })))
  const to = toP.get()
  const governing = narrowed.find((s) => s.canClarify.includes(to))
  if (changed === 'route' && governing) form.blocking.checked = governing.clarifyBlockingAllowed
  const hint = form.querySelector('[data-hint="request"]')
  if (!workflowSteps(type)) {
    hint.innerHTML = `Workflow <b>${esc(type)}</b> does not exist: the request will be refused (<code>INVALID_WORKFLOW</code>).`
    hint.className = 'scope-hint warn'
  } else if (!agents.length) {
    hint.innerHTML = `Workflow <b>${esc(type)}</b> has no steps: nobody may ask anyone.`
    hint.className = 'scope-hint warn'
  } else if (governing) {
    const rounds = governing.clarifyMaxRounds ?? (form.blocking.checked ? 5 : 6)
    hint.innerHTML = `Governing step <b>${esc(governing.id)}</b> of <b>${esc(type)}</b>: at most ${rounds} round${rounds > 1 ? 's' : ''}, SLA ${governing.clarifySlaMinutes} min, blocking ${governing.clarifyBlockingAllowed ? 'allowed' : '<b>not allowed</b>'}.`
    hint.className = form.blocking.checked && !governing.clarifyBlockingAllowed ? 'scope-hint warn' : 'scope-hint'
    if (form.blocking.checked && !governing.clarifyBlockingAllowed) hint.innerHTML += ' A blocking request will be refused (<code>BLOCKING_NOT_ALLOWED</code>).'
  } else if (from && !mine.length) {
    hint.innerHTML = `<b>${esc(from)}</b> has no step in <b>${esc(type)}</b>: expect <code>SCOPE_VIOLATION</code>.`
    hint.className = 'scope-hint warn'
  } else if (from && !targets.length) {
    hint.innerHTML = `<b>${esc(from)}</b>'s steps may not ask anyone (<code>can_clarify = []</code>).`
    hint.className = 'scope-hint warn'
  } else {
    hint.innerHTML = to ? `<b>${esc(from ?? '?')}</b> may not ask <b>${esc(to)}</b> in <b>${esc(type)}</b>: expect a refusal.` : ''
    hint.className = 'scope-hint warn'
  }
  if (!form.topic.value && !form.question.value) {
    const [topic, question] = nextSample('ask')
    form.topic.value = topic
    form.question.value = question
  }
}

function recordLabel(r) {
  return `${r.id} · ${r.status} · ${r.from} → ${r.to} · ${r.topic.length > 40 ? r.topic.slice(0, 39) + '…' : r.topic}`
}

function renderRecordForm(op) {
  const form = $(`#form-${op}`)
  const recs = records(latest())
  const admitting = statusesFor(op)
  const ok = recs.filter((r) => admitting.includes(r.status))
  const other = recs.filter((r) => !admitting.includes(r.status))
  const opt = (r) => `<option value="${esc(r.id)}">${esc(recordLabel(r))}</option>`
  let html = ''
  if (!recs.length) html = '<option value="">no clarifications yet</option>'
  else {
    if (ok.length) html += `<optgroup label="${ok.length} can be ${esc(OP_LABEL[op] === 'follow-up' ? 'followed up' : OP_LABEL[op] + (OP_LABEL[op].endsWith('e') ? 'd' : 'ed'))} (${esc(admitting.join(', '))})">${ok.map(opt).join('')}</optgroup>`
    if (other.length) html += `<optgroup label="other records (the core will refuse)">${other.map(opt).join('')}</optgroup>`
  }
  const prefer = ok.some((r) => r.id === ui.selectedId) ? ui.selectedId : ok.length ? (form.elements.record.value && ok.some((r) => r.id === form.elements.record.value) ? form.elements.record.value : ok[ok.length - 1].id) : undefined
  setSelectOptions(form.elements.record, html, prefer)
  renderRecordPicker(op)
  form.querySelector('button[type="submit"]').disabled = !recs.length
  const text = form.body ?? form.question
  if (text && !text.value) text.value = nextSample(op === 'answer' ? 'answer' : 'followUp')
}

function renderRecordPicker(op, force = false) {
  const form = $(`#form-${op}`)
  const r = records(latest()).find((x) => x.id === form.elements.record.value)
  // A different record than last time: its default actor, not the previous record's.
  if ((r?.id ?? '') !== (form.dataset.lastRecord ?? '')) force = true
  form.dataset.lastRecord = r?.id ?? ''
  const p = picker(form, 'from')
  if (!r) return p.set([])
  const opts = {
    answer: [[r.to, 'target'], [r.from, 'requester'], ['human']],
    followUp: [[r.from, 'requester'], [r.to, 'target'], ['human']],
    resolve: [[r.from, 'requester'], ['human'], [r.to, 'target']],
    escalate: [['human'], [r.from, 'requester'], [r.to, 'target']],
    abandon: [[r.from, 'requester'], ['monitor'], [r.to, 'target']],
  }[op]
  const seen = new Set()
  const options = opts.filter(([v]) => !seen.has(v) && seen.add(v)).map(([v, role]) => ({ value: v, label: role ? `${v} (${role})` : v }))
  const dflt = op === 'answer' ? r.to : op === 'followUp' ? r.from : ''
  p.set(options, force ? dflt : undefined)
}

function renderStatusForm() {
  const form = $('#form-status')
  picker(form, 'agent').set(knownAgents().map((a) => ({ value: a })))
}

function showOutcome(form, html, kind) {
  const box = form.querySelector('.outcome')
  box.className = `outcome ${kind}`
  box.innerHTML = html
}

function outcomeText(step, result, warning) {
  if (result.ok === false) {
    return refusalHtml(result.error, !!result.clarification) + (result.clarification ? `<div class="chips">${chips(result)}</div>` : '')
  }
  const r = result.clarification
  let text = ''
  if (r) {
    const verb = { request: result.idempotent ? 'replayed (idempotent: nothing written)' : 'requested', answer: 'answered', followUp: `round ${r.round} asked`, resolve: 'resolved', escalate: 'escalated', abandon: 'abandoned' }[step.op]
    text = `✓ <code>${esc(r.id)}</code> ${esc(verb)} — now ${badge(r.status)}`
  } else if (step.op === 'hook') text = `✓ ${esc(step.args.agent)} is ${esc(result.agent?.status ?? '')}`
  else if (step.op === 'state') text = `✓ ${esc(step.args.agent)} is ${esc(step.args.status)}`
  else text = '✓ done'
  const ch = chips({ events: (result.events ?? []).filter((e) => e.actor === 'monitor'), monitor: result.monitor })
  if (ch) text += `<div class="chips">monitor: ${ch}</div>`
  if (warning) text += `<div class="muted small">warning: ${esc(warning)}</div>`
  return text
}

function submitForm(form) {
  const op = form.dataset.op
  const now = clockNow()
  const text = (name) => form[name].value
  let step
  if (op === 'request') {
    const args = {
      issueNumber: Number(form.issueNumber.value),
      from: picker(form, 'from').get() ?? '',
      to: picker(form, 'to').get() ?? '',
      topic: text('topic'),
      question: text('question'),
      blocking: form.blocking.checked,
    }
    if (form.issueNumber.value === '') args.issueNumber = ''
    if (form.workflow.value) args.workflow = form.workflow.value
    if (form.step.value) args.step = form.step.value
    if (text('field').trim()) args.field = text('field')
    const sugg = text('suggestions').split('\n').map((s) => s.trim()).filter(Boolean)
    if (sugg.length) args.suggestions = sugg
    if (text('idempotencyKey').trim()) args.idempotencyKey = text('idempotencyKey')
    step = { op, args, now }
  } else if (op === 'status') {
    const [kind, value] = form.kind.value.split(':')
    const agent = picker(form, 'agent').get() ?? ''
    const issue = form.issue.value === '' ? undefined : Number(form.issue.value)
    step = kind === 'hook' ? { op: 'hook', args: { event: value, agent, issue }, now } : { op: 'state', args: { agent, status: value, issue }, now }
  } else {
    const args = { id: form.elements.record.value }
    const from = picker(form, 'from').get()
    if (from !== undefined) args.from = from
    if (op === 'answer') args.body = text('body')
    else if (op === 'followUp') args.question = text('question')
    else if (text('message').trim()) args.message = text('message')
    step = { op, args, now }
  }
  const result = runStep(step)
  showOutcome(form, outcomeText(step, result, rt.results.at(-1)?.warning), result.ok === false ? 'error' : 'ok')
  if (result.ok !== false) {
    if (op === 'request') {
      const [topic, question] = nextSample('ask')
      form.topic.value = topic
      form.question.value = question
      form.field.value = ''
      form.suggestions.value = ''
      form.idempotencyKey.value = ''
    } else if (op === 'answer') form.body.value = nextSample('answer')
    else if (op === 'followUp') form.question.value = nextSample('followUp')
    else if (form.message) form.message.value = ''
  }
}

// ---------------------------------------------------------------------------------------------
// Workflow editor

const CONFIG = '@config'
const fileName = (key) => (key === CONFIG ? 'config.toml' : `${key}.toml`)

function appliedTexts() {
  const ws = rt.workspace
  const out = {}
  for (const [type, text] of Object.entries(ws.workflows)) out[type] = typeof text === 'string' ? text : JSON.stringify(text)
  out[CONFIG] = ws.config ?? DEFAULTS.config
  return out
}

function renderEditor() {
  const applied = appliedTexts()
  if (!ui.drafts) ui.drafts = { ...applied }
  if (!(ui.activeFile in ui.drafts)) ui.activeFile = Object.keys(ui.drafts)[0]
  const keys = [...Object.keys(ui.drafts).filter((k) => k !== CONFIG), CONFIG]
  $('#file-tabs').innerHTML = keys.map((k) => `<button type="button" role="tab" data-key="${esc(k)}" aria-selected="${k === ui.activeFile}">${esc(fileName(k))}${ui.drafts[k] !== applied[k] ? ' <span class="dirty" title="not applied">●</span>' : ''}</button>`).join('')
  const ta = $('#toml')
  if (ta.value !== ui.drafts[ui.activeFile]) ta.value = ui.drafts[ui.activeFile]
  renderGutter()
  renderTomlStatus()
}

function renderGutter() {
  const ta = $('#toml')
  const n = ta.value.split('\n').length
  const g = $('#gutter')
  if (g.childElementCount !== n) g.innerHTML = Array.from({ length: n }, (_, i) => `<span>${i + 1}</span>`).join('')
  g.scrollTop = ta.scrollTop
}

function renderTomlStatus() {
  const key = ui.activeFile
  const text = ui.drafts[key]
  const box = $('#toml-status')
  const dirty = Object.keys(ui.drafts).some((k) => ui.drafts[k] !== appliedTexts()[k]) || Object.keys(appliedTexts()).some((k) => !(k in ui.drafts))
  $('#toml-apply').disabled = !dirty
  $('#toml-revert').disabled = !dirty
  const table = $('#scope-table')
  if (key === CONFIG) {
    const p = parsed('config', text)
    if (p.error) {
      box.innerHTML = refusalHtml(p.error)
      table.innerHTML = ''
    } else {
      box.innerHTML = `<span class="ok">✓ valid</span> <span class="muted">max_retries ${p.value.maxRetries} · stuck_similarity ${p.value.stuckSimilarity} · default_workflow ${esc(p.value.defaultWorkflow)}</span>`
      table.innerHTML = `<p class="help">Deadlock priority (earlier = keeps waiting; the lowest-ranked requester in a cycle yields): ${p.value.priority.map((a) => `<code>${esc(a)}</code>`).join(' › ')}</p>`
    }
    return
  }
  const p = parsed('workflow', text)
  if (p.error) {
    box.innerHTML = refusalHtml(p.error)
    table.innerHTML = ''
    return
  }
  box.innerHTML = `<span class="ok">✓ valid</span> <span class="muted">${p.value.steps.length} step${p.value.steps.length === 1 ? '' : 's'}</span>`
  table.innerHTML = p.value.steps.length
    ? `<table class="data"><thead><tr><th>step</th><th>agent</th><th>may ask</th><th>rounds</th><th>SLA</th><th>blocking</th></tr></thead><tbody>${p.value.steps.map((s) => `<tr><td>${esc(s.id)}</td><td><b>${esc(s.agent)}</b></td><td>${s.canClarify.length ? s.canClarify.map(esc).join(', ') : '<span class="muted">nobody</span>'}</td><td>${s.clarifyMaxRounds ?? '<span class="muted">5 / 6</span>'}</td><td>${s.clarifySlaMinutes} min</td><td>${s.clarifyBlockingAllowed ? 'yes' : '<b>no</b>'}</td></tr>`).join('')}</tbody></table>`
    : '<p class="muted">No steps: nobody may ask anyone under this workflow.</p>'
}

function applyWorkflows() {
  const workflows = {}
  for (const [k, v] of Object.entries(ui.drafts)) if (k !== CONFIG) workflows[k] = v
  const configText = ui.drafts[CONFIG]
  const config = rt.workspace.config === undefined && configText === DEFAULTS.config ? undefined : configText
  for (const [k, v] of Object.entries(workflows)) {
    const p = parsed('workflow', v)
    if (p.error) return showEditorError(k, p.error)
  }
  const pc = parsed('config', configText)
  if (pc.error) return showEditorError(CONFIG, pc.error)
  const result = runStep({ op: 'workflows', args: config === undefined ? { workflows } : { workflows, config }, now: clockNow() })
  if (result.ok === false) return showEditorError(ui.activeFile, result.error)
  ui.drafts = null
  renderEditor()
  flash(`Workflows applied: ${Object.keys(workflows).join(', ')}${config !== undefined ? ' and config.toml' : ''}.`)
}

function showEditorError(key, error) {
  ui.activeFile = key
  renderEditor()
  $('#toml-status').innerHTML = refusalHtml(error)
}

// ---------------------------------------------------------------------------------------------
// Tabs, events, boot

function selectTab(tab) {
  const list = tab.closest('[role="tablist"]')
  for (const t of list.querySelectorAll('[role="tab"]')) {
    const on = t === tab
    t.setAttribute('aria-selected', String(on))
    t.tabIndex = on ? 0 : -1
    const pane = document.getElementById(t.getAttribute('aria-controls'))
    if (pane) pane.hidden = !on
  }
  if (list.dataset.tabs === 'views') {
    ui.view = tab.id.replace('tab-', '')
    renderView()
  }
}

function wireTabs() {
  for (const list of $$('[role="tablist"][data-tabs]')) {
    const tabs = $$('[role="tab"]', list)
    tabs.forEach((t) => (t.tabIndex = t.getAttribute('aria-selected') === 'true' ? 0 : -1))
    list.addEventListener('click', (e) => {
      const t = e.target.closest('[role="tab"]')
      if (t) selectTab(t)
    })
    list.addEventListener('keydown', (e) => {
      const i = tabs.indexOf(document.activeElement)
      if (i < 0) return
      let j = null
      if (e.key === 'ArrowRight') j = (i + 1) % tabs.length
      else if (e.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length
      else if (e.key === 'Home') j = 0
      else if (e.key === 'End') j = tabs.length - 1
      if (j === null) return
      e.preventDefault()
      tabs[j].focus()
      selectTab(tabs[j])
    })
  }
}

let flashTimer
function flash(html, kind = 'info') {
  const b = $('#banner')
  b.className = `banner ${kind}`
  b.innerHTML = html
  b.hidden = false
  clearTimeout(flashTimer)
  flashTimer = setTimeout(() => (b.hidden = true), kind === 'error' ? 8000 : 3500)
}

/** Moves the clock (a monitor run at the new time); queued monitor runs it passed are dropped. */
function tick(now) {
  const before = scenario.queue.length
  scenario.queue = scenario.queue.filter((s) => !(s.op === 'monitor' && s.now <= now))
  const skipped = before - scenario.queue.length
  runStep({ op: 'monitor', args: {}, now })
  if (skipped) flash(`Skipped ${skipped} queued monitor run${skipped > 1 ? 's' : ''} of the example: the clock has passed ${skipped > 1 ? 'them' : 'it'}.`)
}

function advance(ms) {
  tick(clockNow() + ms)
}

function nextQueued() {
  const step = scenario.queue.shift()
  if (!step) return
  // Each step runs at the time the vector gives it (a vector may go back in time on purpose).
  runStep(step)
}

function wire() {
  wireTabs()
  for (const form of $$('.op-form')) {
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      submitForm(form)
    })
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault()
        form.requestSubmit()
      }
    })
  }
  const ask = $('#form-request')
  ask.addEventListener('change', (e) => {
    const name = e.target.name || e.target.getAttribute('aria-label')
    if (['issueNumber', 'workflow', 'step', 'from', 'to'].includes(name) || e.target.classList.contains('picker')) renderAskForm('route')
    else if (name === 'blocking') renderAskForm()
  })
  ask.issueNumber.addEventListener('input', () => renderAskForm())
  for (const op of ['answer', 'followUp', 'resolve', 'escalate', 'abandon']) {
    $(`#form-${op}`).elements.record.addEventListener('change', () => {
      ui.selectedId = $(`#form-${op}`).elements.record.value
      renderRecordPicker(op, true)
      renderView()
    })
  }

  for (const b of $$('[data-advance]')) b.addEventListener('click', () => advance(Number(b.dataset.advance)))
  $('#run-monitor').addEventListener('click', () => advance(0))
  $('#next-deadline').addEventListener('click', () => {
    const t = nextDeadline()
    if (t !== null) tick(t)
  })
  $('#custom-toggle').addEventListener('click', () => {
    const f = $('#custom-clock')
    f.hidden = !f.hidden
    $('#custom-toggle').setAttribute('aria-expanded', String(!f.hidden))
    if (!f.hidden) $('#custom-amount').focus()
  })
  $('#custom-clock').addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return
    $('#custom-clock').hidden = true
    $('#custom-toggle').setAttribute('aria-expanded', 'false')
    $('#custom-toggle').focus()
  })
  $('#custom-clock').addEventListener('submit', (e) => {
    e.preventDefault()
    const ms = Math.round(Number($('#custom-amount').value) * Number($('#custom-unit').value))
    if (!Number.isFinite(ms) || ms < 0) return flash('Enter a positive amount.', 'error')
    advance(ms)
  })
  $('#custom-set').addEventListener('click', () => {
    const v = $('#custom-at').value
    const t = Date.parse(v.length === 16 ? `${v}:00Z` : `${v}Z`)
    if (Number.isNaN(t)) return flash('Enter a date and time (UTC).', 'error')
    if (t < clockNow()) flash('Going back in time: the core keeps each thread\'s timestamps non-decreasing (clock skew), so new entries take the last entry\'s time.')
    tick(t)
  })

  $('#undo').addEventListener('click', () => {
    if (!scenario.steps.length) return
    scenario.steps.pop()
    rt = replay(c, scenario)
    ui.step = null
    ui.drafts = null
    persist(false)
    renderAll()
  })
  $('#next-step').addEventListener('click', () => nextQueued())
  $('#play-all').addEventListener('click', () => {
    while (scenario.queue.length) nextQueued()
  })
  $('#drop-queue').addEventListener('click', () => {
    scenario.queue = []
    persist(false)
    renderTimeline()
  })

  const pickStep = (li) => {
    const i = Number(li.dataset.step)
    ui.step = i === rt.results.length - 1 ? null : i
    const r = i >= 0 ? rt.results[i].result : null
    if (r?.clarification?.id) {
      ui.selectedId = r.clarification.id
      ui.issue = issueOf(r.clarification.id)
    }
    renderIssueSelect()
    renderTravel()
    renderView()
    renderTimeline()
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
      ui.step = null
      renderIssueSelect()
      renderTravel()
      renderView()
      renderTimeline()
    }
  })

  $('#issue-select').addEventListener('change', (e) => {
    ui.issue = e.target.value === 'all' ? 'all' : Number(e.target.value)
    ui.ledgerFile = null
    renderView()
  })

  // Views: record selection (threads, graph edges) and ledger file tabs.
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

  // Example picker, share, new.
  const sel = $('#example-select')
  sel.insertAdjacentHTML('beforeend', EXAMPLES.map((x) => `<option value="${esc(x.id)}" title="${esc(x.blurb)}">${esc(x.title)}</option>`).join(''))
  sel.addEventListener('change', async () => {
    const id = sel.value
    if (!id) return
    try {
      const next = await loadExample(id)
      setScenario(next, { push: true })
      const ex = EXAMPLES.find((x) => x.id === id)
      flash(`<b>${esc(ex.title)}</b> loaded: ${esc(ex.blurb)} Press <b>▶ Next step</b> to play it, or act yourself.`)
    } catch (e) {
      flash(`Cannot load the example: ${esc(e.message)}`, 'error')
    }
    sel.value = ''
  })
  $('#share').addEventListener('click', async () => {
    const url = `${location.origin}${location.pathname}#s=${await encode(scenario)}`
    try {
      await navigator.clipboard.writeText(url)
      flash('Link copied: it reproduces this scenario step by step.')
    } catch {
      flash(`Copy this link: <input class="share-url" value="${esc(url)}" readonly>`)
    }
  })
  $('#new-scenario').addEventListener('click', () => {
    setScenario(emptyScenario(), { push: true })
    flash('New scenario: the default workflows, an empty workspace.')
  })

  // Editor.
  const ta = $('#toml')
  ta.addEventListener('input', () => {
    ui.drafts[ui.activeFile] = ta.value
    renderGutter()
    clearTimeout(ta.timer)
    ta.timer = setTimeout(() => {
      renderTomlStatus()
      $$('#file-tabs [role="tab"]').forEach((b) => {
        const k = b.dataset.key
        b.innerHTML = `${esc(fileName(k))}${ui.drafts[k] !== appliedTexts()[k] ? ' <span class="dirty" title="not applied">●</span>' : ''}`
      })
    }, 120)
  })
  ta.addEventListener('scroll', () => ($('#gutter').scrollTop = ta.scrollTop))
  ta.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault()
      applyWorkflows()
    }
  })
  $('#file-tabs').addEventListener('click', (e) => {
    const b = e.target.closest('[data-key]')
    if (!b) return
    ui.activeFile = b.dataset.key
    renderEditor()
  })
  $('#toml-apply').addEventListener('click', applyWorkflows)
  $('#toml-revert').addEventListener('click', () => {
    ui.drafts = null
    renderEditor()
  })
  $('#toml-defaults').addEventListener('click', () => {
    const k = ui.activeFile
    const text = k === CONFIG ? DEFAULTS.config : DEFAULTS.workflows[k] ?? `# Workflow "${k}"\n\n[[steps]]\nid = "implement"\nagent = "engineer"\ncan_clarify = ["architect"]\n`
    ui.drafts[k] = text
    renderEditor()
  })
  $('#add-type').addEventListener('click', () => {
    const input = $('#new-type')
    const name = input.value.trim()
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) return flash('A workflow type is lowercase letters, digits, "-" and "_" (e.g. <code>epic</code>).', 'error')
    if (name in ui.drafts) return flash(`${esc(name)}.toml exists already.`, 'error')
    ui.drafts[name] = `# Workflow "${name}": who may ask whom in its steps.\n\n[[steps]]\nid = "design"\nagent = "ux-designer"\ncan_clarify = ["product-manager"]\nclarify_sla_minutes = 30\n\n[[steps]]\nid = "implement"\nagent = "engineer"\ncan_clarify = ["ux-designer", "architect"]\nclarify_max_rounds = 2\n`
    ui.activeFile = name
    input.value = ''
    renderEditor()
  })

  window.addEventListener('popstate', async () => {
    const h = hashState()
    if (!h) return
    try {
      setScenario(await decode(h))
    } catch (e) {
      flash(`Cannot restore that link: ${esc(e.message)}`, 'error')
    }
  })
}

async function restore() {
  for (const [source, text] of [['link', hashState()], ['local storage', loadLocal()]]) {
    if (!text) continue
    try {
      return await decode(text)
    } catch (e) {
      flash(`The scenario in the ${source} could not be restored (${esc(e.message)}); starting fresh.`, 'error')
    }
  }
  return null
}

function registerServiceWorker() {
  const state = $('#offline-state')
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    state.textContent = ''
    return
  }
  navigator.serviceWorker.register('sw.js').then(
    () => navigator.serviceWorker.ready.then(() => {
      state.textContent = '● available offline'
      state.className = 'ok'
      document.body.dataset.offline = 'ready'
    }),
    (e) => {
      // Offline, the update check of an installed worker fails: the cached page still runs.
      if (navigator.serviceWorker.controller) {
        state.textContent = '● running from the offline cache'
        state.className = 'ok'
      } else {
        state.textContent = `offline mode unavailable (${e.message})`
      }
    },
  )
}

async function boot() {
  try {
    await init()
    c = core
    DEFAULTS = c.defaultWorkflows()
    $('#core-version').textContent = `agentx-clarify-core ${c.version().version}`
  } catch (e) {
    document.body.dataset.ready = 'error'
    flash(`The WebAssembly core could not start: ${esc(e.message)}`, 'error')
    return
  }
  wire()
  const restored = await restore()
  scenario = restored ?? emptyScenario()
  rt = replay(c, scenario)
  const issues = issueNumbers(latest())
  ui.issue = issues.length ? issues[issues.length - 1] : null
  renderAll()
  if (!restored) persist(false)
  document.body.dataset.ready = 'true'
  registerServiceWorker()
}

// For tests and the curious: the page's state from the console.
window.playground = {
  get scenario() { return scenario },
  get results() { return rt?.results },
  MUTATIONS,
  Workspace,
}

boot()
