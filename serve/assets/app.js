// The inbox's one script (no inline script: the CSP forbids it). It posts the action forms to
// /api/v1/call with the page's CSRF token, and follows /events to refresh the page's main part
// when anything changes — no reload, and never while a person is typing in a form. The pages
// are complete without it except for the forms (the server renders everything, ledger text
// as text).
const csrf = document.querySelector('meta[name="csrf"]')?.content ?? ''
const live = document.getElementById('live')

function say(text) {
  if (live) live.textContent = text
}

// One time format on every page: 2026-11-22 10:00 UTC (as the server writes them).
function utc(date) {
  return date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
}

function typing() {
  const main = document.getElementById('main')
  if (!main) return false
  const active = document.activeElement
  if (active && main.contains(active) && /^(TEXTAREA|INPUT|SELECT)$/.test(active.tagName)) return true
  // A chosen option is work in progress too: a live refresh would replace the form and drop it.
  if (main.querySelector('form.act [name="value"]:checked')) return true
  return [...main.querySelectorAll('form.act textarea')].some((t) => t.value.trim() !== '')
}

let pending = false
async function refresh(force) {
  if (!force && typing()) {
    pending = true
    say('Something changed: it will show when you leave the form.')
    return
  }
  pending = false
  const response = await fetch(location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
  if (response.redirected || !response.ok) return
  const doc = new DOMParser().parseFromString(await response.text(), 'text/html')
  const fresh = doc.getElementById('main')
  const main = document.getElementById('main')
  if (!fresh || !main) return
  main.replaceChildren(...fresh.childNodes)
  if (doc.title) document.title = doc.title
  bindForms(main)
  say(force ? '' : 'Updated ' + utc(new Date()))
}

// What the decision form holds, as `decide`'s input; or why it is not a decision yet (the
// server applies the same rule whatever is sent: AnswerSpec::decision).
function decision(form, input) {
  const kind = form.dataset.kind
  const checked = [...form.querySelectorAll('[name="value"]:checked')]
  const other = form.querySelector('[name="other"]')?.value.trim() ?? ''
  const note = form.querySelector('[name="message"]')?.value.trim() ?? ''
  if (kind === 'text') {
    if (note === '') return 'Write your decision first.'
    input.message = note
    return null
  }
  if (other !== '') {
    if (checked.length > 0) return 'Choose an option or write your own answer, not both.'
    input.message = note === '' ? other : `${other}\n\n${note}`
    return null
  }
  if (kind === 'multi_choice') {
    const [min, max] = [Number(form.dataset.min), Number(form.dataset.max)]
    if (checked.length < min || checked.length > max) {
      return min === max ? `Choose ${min} of the options.` : `Choose ${min} to ${max} of the options.`
    }
    input.value = checked.map((c) => c.value)
  } else if (checked.length === 0) {
    return form.dataset.other === 'true'
      ? 'Choose an option, or write your own answer instead.'
      : `Choose ${kind === 'confirm' ? 'yes or no' : 'one of the options'}: a note alone is not a decision here.`
  } else {
    input.value = kind === 'confirm' ? checked[0].value === 'true' : checked[0].value
  }
  if (note !== '') input.message = note
  return null
}

// multi_choice: once `max` are chosen the others wait (the server checks min/max anyway).
function bounds(form) {
  if (form.dataset.kind !== 'multi_choice') return
  const boxes = [...form.querySelectorAll('input[type="checkbox"][name="value"]')]
  const update = () => {
    const full = boxes.filter((b) => b.checked).length >= Number(form.dataset.max)
    for (const b of boxes) b.disabled = full && !b.checked
  }
  for (const b of boxes) b.addEventListener('change', update)
  update()
}

function bindForms(root) {
  for (const form of root.querySelectorAll('form[data-op]')) {
    form.noValidate = true
    bounds(form)
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      const input = { id: form.dataset.id }
      const problem = form.querySelector('.problem')
      if (form.dataset.op === 'decide') {
        const why = decision(form, input)
        if (problem) {
          problem.hidden = why === null
          problem.textContent = why ?? ''
        }
        if (why !== null) return
      } else {
        const message = form.querySelector('[name="message"]')?.value.trim()
        if (message) input.message = message
        const to = form.querySelector('[name="to"]')?.value.trim()
        if (to) input.to = to
      }
      const button = form.querySelector('button[type="submit"]')
      if (button) button.disabled = true
      const result = document.getElementById('result')
      try {
        const response = await fetch('/api/v1/call', {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
          body: JSON.stringify({ op: form.dataset.op, input }),
        })
        const envelope = await response.json()
        const done = { decide: 'Decided', escalate: 'Escalated', abandon: 'Abandoned', route: 'Routed', claim: 'Taken', handoff: 'Handed over' }[form.dataset.op] ?? 'Done'
        // Where several must agree, a decision is an approval: say where the record stands.
        const approvals = envelope.clarification?.approvals?.summary
        const text = envelope.ok
          ? (approvals ? `Approved: ${input.id}, ${approvals}` : `${done}: ${input.id} is ${envelope.clarification?.status ?? 'updated'}`)
          : `Not recorded (${envelope.error?.code}): ${envelope.error?.message}`
        if (envelope.ok) {
          for (const t of form.querySelectorAll('textarea')) t.value = ''
          for (const c of form.querySelectorAll('[name="value"]:checked')) c.checked = false
          await refresh(true)
        } else if (problem) {
          problem.hidden = false
          problem.textContent = text
        }
        // Outside <main>, apart from the live line: it survives the refresh (a closed record
        // has no forms) and the change events that follow the write.
        const outcome = document.getElementById('outcome')
        if (outcome) outcome.textContent = text
        const fresh = document.getElementById('result')
        if (fresh) fresh.textContent = text
      } catch (e) {
        if (result) result.textContent = 'The server did not answer: ' + e
      } finally {
        if (button) button.disabled = false
      }
    })
  }
}

// The sign-in page with a place to return to: a link followed from another site arrives
// without the (SameSite=Strict) session cookie, so look whether this browser is signed in
// after all, from this page (same-site now), and go on if it is.
const login = document.querySelector('form.login[data-next]')
if (login) {
  const next = login.dataset.next
  fetch(next, { credentials: 'same-origin', redirect: 'manual' })
    .then((r) => { if (r.ok && r.type !== 'opaqueredirect') location.replace(next) })
    .catch(() => {})
}

bindForms(document)

if (document.getElementById('main') && csrf !== '' && 'EventSource' in window) {
  const events = new EventSource('/events')
  events.addEventListener('ready', () => document.body.classList.add('live-on'))
  events.addEventListener('change', () => refresh(false))
  events.addEventListener('error', () => document.body.classList.remove('live-on'))
  document.addEventListener('focusout', () => {
    setTimeout(() => { if (pending && !typing()) refresh(false) }, 0)
  })
}
