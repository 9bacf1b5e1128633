// The action forms: ask (its pickers, step list, limits and expected refusal come from the
// core's scope preview), answer / follow-up / resolve / escalate / abandon (records the
// operation applies to first, from the core's state machine), and agent statuses. Submitting
// a form runs one step; its outcome (or refusal) is shown under the form.
import { S, OP_LABEL, statusesFor, clockNow, latest, runStep, records, knownAgents } from './session.js'
import { $, $$, esc, refusalHtml, badge } from './dom.js'
import { chips } from './timeline.js'
import { renderView } from './views.js'

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
const RECORD_OPS = ['answer', 'followUp', 'resolve', 'escalate', 'abandon']

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

export function renderForms() {
  renderAskForm()
  for (const op of RECORD_OPS) renderRecordForm(op)
  renderStatusForm()
}

/** The core's scope preview for a request with these fields, on the latest state. */
function scopePreview(fields) {
  const args = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== ''))
  const r = S.rt.workspace.run('scopePreview', args, clockNow())
  return r.ok ? r.preview : null
}

const EMPTY_PREVIEW = { workflow: '?', workflows: [], requesters: [], steps: [], targets: [], governing: null, refusal: null }

function renderAskForm(changed) {
  const form = $('#form-request')
  const n = Number(form.issueNumber.value)
  // An issue number the core would refuse is no issue yet: the preview shows the default.
  const issueNumber = form.issueNumber.value !== '' && Number.isInteger(n) && n >= 0 ? n : undefined
  const base = scopePreview({ issueNumber }) ?? EMPTY_PREVIEW
  setSelectOptions(form.workflow, `<option value="">auto: ${esc(base.workflow)}</option>` + base.workflows.map((t) => `<option value="${esc(t)}">${esc(t)}</option>`).join(''))
  const route = { issueNumber, workflow: form.workflow.value }
  const scope = scopePreview(route) ?? EMPTY_PREVIEW
  const type = scope.workflow
  const fromP = picker(form, 'from')
  const toP = picker(form, 'to')
  const agents = scope.requesters
  const first = !fromP.sel.options.length
  fromP.set(agents.map((a) => ({ value: a })), first ? agents[agents.length - 1] : undefined)
  route.from = fromP.get()
  const mine = (scopePreview(route) ?? EMPTY_PREVIEW).steps
  setSelectOptions(form.step, '<option value="">any of its steps</option>' + mine.map((s) => `<option value="${esc(s)}">${esc(s)}</option>`).join(''))
  route.step = form.step.value
  const targets = (scopePreview(route) ?? EMPTY_PREVIEW).targets
  toP.set(targets.map((a) => ({ value: a })))
  route.to = toP.get()
  let verdict = scopePreview({ ...route, blocking: form.blocking.checked }) ?? EMPTY_PREVIEW
  if (changed === 'route' && verdict.governing && form.blocking.checked !== verdict.governing.blockingAllowed) {
    form.blocking.checked = verdict.governing.blockingAllowed
    verdict = scopePreview({ ...route, blocking: form.blocking.checked }) ?? EMPTY_PREVIEW
  }
  const { governing, refusal } = verdict
  const from = route.from
  const to = route.to
  const hint = form.querySelector('[data-hint="request"]')
  if (!scope.workflows.includes(type)) {
    hint.innerHTML = `Workflow <b>${esc(type)}</b> does not exist: the request will be refused (<code>INVALID_WORKFLOW</code>).`
    hint.className = 'scope-hint warn'
  } else if (!agents.length) {
    hint.innerHTML = `Workflow <b>${esc(type)}</b> has no steps: nobody may ask anyone.`
    hint.className = 'scope-hint warn'
  } else if (governing) {
    const rounds = governing.maxRounds
    hint.innerHTML = `Governing step <b>${esc(governing.step)}</b> of <b>${esc(type)}</b>: at most ${rounds} round${rounds > 1 ? 's' : ''}, SLA ${governing.slaMinutes} min, blocking ${governing.blockingAllowed ? 'allowed' : '<b>not allowed</b>'}.`
    hint.className = refusal ? 'scope-hint warn' : 'scope-hint'
    if (refusal) hint.innerHTML += ` A ${form.blocking.checked ? 'blocking ' : ''}request will be refused (<code>${esc(refusal.code)}</code>).`
  } else if (from && !mine.length) {
    hint.innerHTML = `<b>${esc(from)}</b> has no step in <b>${esc(type)}</b>: expect <code>${esc(refusal?.code ?? 'SCOPE_VIOLATION')}</code>.`
    hint.className = 'scope-hint warn'
  } else if (from && !targets.length) {
    hint.innerHTML = `<b>${esc(from)}</b>'s steps may not ask anyone (<code>can_clarify = []</code>).`
    hint.className = 'scope-hint warn'
  } else {
    hint.innerHTML = to ? `<b>${esc(from ?? '?')}</b> may not ask <b>${esc(to)}</b> in <b>${esc(type)}</b>: expect ${refusal ? `<code>${esc(refusal.code)}</code>` : 'a refusal'}.` : ''
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
  const selected = S.ui.selectedId
  const prefer = ok.some((r) => r.id === selected) ? selected : ok.length ? (form.elements.record.value && ok.some((r) => r.id === form.elements.record.value) ? form.elements.record.value : ok[ok.length - 1].id) : undefined
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
  renderChoices(form, r)
}

/**
 * A typed question's form (docs/protocol.md §22): yes/no or one option as radio buttons, several as
 * checkboxes; nothing for a text question. The chosen value goes to the core, which checks it.
 */
function renderChoices(form, r) {
  const box = form.querySelector('[data-choices]')
  if (!box) return
  const kind = r?.answerKind ?? 'text'
  if (kind === 'text') {
    box.hidden = true
    box.innerHTML = ''
    return
  }
  const options = kind === 'confirm'
    ? [{ value: 'true', label: 'yes' }, { value: 'false', label: 'no' }]
    : (r.options ?? []).map((o) => ({ value: o.value, label: o.label ?? o.value, description: o.description }))
  const type = kind === 'multi_choice' ? 'checkbox' : 'radio'
  const other = kind !== 'confirm' && r.allowOther !== false
  const range = kind === 'multi_choice' ? ` ${r.minSelect ?? 1}–${r.maxSelect ?? options.length}` : ''
  box.innerHTML = `<legend>${esc(kind)}${esc(range)}${other ? ' <small>(or free text below)</small>' : ' <small>(only these)</small>'}</legend>` +
    options.map((o) => `<label class="check"><input type="${type}" name="choice" value="${esc(o.value)}"> ${esc(o.label)} <code>${esc(o.value)}</code>${o.description ? ` <small>${esc(o.description)}</small>` : ''}</label>`).join('')
  box.dataset.kind = kind
  box.hidden = false
}

/** The value the choices of a form say, or undefined when none is chosen. */
function chosenValue(form) {
  const box = form.querySelector('[data-choices]')
  if (!box || box.hidden) return undefined
  const picked = [...box.querySelectorAll('input[name="choice"]:checked')].map((i) => i.value)
  if (!picked.length) return undefined
  if (box.dataset.kind === 'confirm') return picked[0] === 'true'
  return box.dataset.kind === 'multi_choice' ? picked : picked[0]
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
    const verb = { request: result.idempotent ? 'replayed (idempotent: nothing written)' : result.reused ? 'asked before: the record that holds the question (nothing new asked)' : 'requested', answer: 'answered', followUp: `round ${r.round} asked`, resolve: 'resolved', escalate: 'escalated', abandon: 'abandoned' }[step.op]
    text = `✓ <code>${esc(r.id)}</code> ${esc(verb)} — now ${badge(r.status)}`
  } else if (step.op === 'hook') text = `✓ ${esc(step.args.agent)} is ${esc(result.agent?.status ?? '')}`
  else if (step.op === 'state') text = `✓ ${esc(step.args.agent)} is ${esc(step.args.status)}`
  else text = '✓ done'
  const ch = chips({ events: (result.events ?? []).filter((e) => e.actor === 'monitor'), monitor: result.monitor })
  if (ch) text += `<div class="chips">monitor: ${ch}</div>`
  if (warning) text += `<div class="muted small">warning: ${esc(warning)}</div>`
  return text
}

/** The step a form describes. */
function stepOf(form) {
  const op = form.dataset.op
  const now = clockNow()
  const text = (name) => form[name].value
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
    // Answer kinds (docs/protocol.md §22): the core validates the options and reports INVALID_INPUT.
    if (form.answerKind.value !== 'text') args.answerKind = form.answerKind.value
    const options = text('options').split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const at = l.indexOf('=')
      return at < 0 ? { value: l } : { value: l.slice(0, at).trim(), label: l.slice(at + 1).trim() }
    })
    if (options.length) args.options = options
    if (form.noOther.checked) args.allowOther = false
    if (form.minSelect.value !== '') args.minSelect = Number(form.minSelect.value)
    if (form.maxSelect.value !== '') args.maxSelect = Number(form.maxSelect.value)
    if (form.askAgain.checked) args.askAgain = true
    return { op, args, now }
  }
  if (op === 'status') {
    const [kind, value] = form.kind.value.split(':')
    const agent = picker(form, 'agent').get() ?? ''
    const issue = form.issue.value === '' ? undefined : Number(form.issue.value)
    return kind === 'hook' ? { op: 'hook', args: { event: value, agent, issue }, now } : { op: 'state', args: { agent, status: value, issue }, now }
  }
  const args = { id: form.elements.record.value }
  const from = picker(form, 'from').get()
  if (from !== undefined) args.from = from
  const value = op === 'answer' || op === 'resolve' ? chosenValue(form) : undefined
  if (value !== undefined) args.value = value
  if (op === 'answer') {
    // With a chosen option the body may be left out: the core renders it from the value.
    if (value === undefined || text('body').trim()) args.body = text('body')
  } else if (op === 'followUp') args.question = text('question')
  else if (text('message').trim()) args.message = text('message')
  return { op, args, now }
}

function submitForm(form) {
  const op = form.dataset.op
  const step = stepOf(form)
  const result = runStep(step)
  showOutcome(form, outcomeText(step, result, S.rt.results.at(-1)?.warning), result.ok === false ? 'error' : 'ok')
  if (result.ok === false) return
  // A fresh sample for the next click.
  if (op === 'request') {
    const [topic, question] = nextSample('ask')
    form.topic.value = topic
    form.question.value = question
    form.field.value = ''
    form.suggestions.value = ''
    form.idempotencyKey.value = ''
    form.options.value = ''
    form.answerKind.value = 'text'
    form.noOther.checked = false
    form.askAgain.checked = false
    form.minSelect.value = ''
    form.maxSelect.value = ''
  } else if (op === 'answer') form.body.value = nextSample('answer')
  else if (op === 'followUp') form.question.value = nextSample('followUp')
  else if (form.message) form.message.value = ''
}

export function wireForms() {
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
  for (const op of RECORD_OPS) {
    $(`#form-${op}`).elements.record.addEventListener('change', () => {
      S.ui.selectedId = $(`#form-${op}`).elements.record.value
      renderRecordPicker(op, true)
      renderView()
    })
  }
}
