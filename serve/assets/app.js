// The inbox's one script (no inline script: the CSP forbids it). It renders the core's
// markdown threads with the playground's escaping converter, posts the action forms to
// /api/v1/call with the page's CSRF token, and follows /events to refresh the page's main
// part when anything changes — no reload, and never while a person is typing in a form.
import { markdownToHtml } from '/assets/markdown.js'

const csrf = document.querySelector('meta[name="csrf"]')?.content ?? ''
const live = document.getElementById('live')

function renderMarkdown(root) {
  for (const el of root.querySelectorAll('[data-md]')) {
    // textContent is the markdown as text; the converter escapes everything it emits.
    el.innerHTML = markdownToHtml(el.textContent)
    el.removeAttribute('data-md')
    el.classList.add('rendered')
  }
}

function say(text) {
  if (live) live.textContent = text
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
  renderMarkdown(main)
  bindForms(main)
  say(force ? '' : 'Updated ' + new Date().toLocaleTimeString())
}

function bindForms(root) {
  for (const form of root.querySelectorAll('form[data-op]')) {
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      const input = { id: form.dataset.id }
      const message = form.querySelector('[name="message"]')?.value.trim()
      if (message) input.message = message
      // A typed decision (the record's answer kind): yes/no, one option, or several.
      const checked = [...form.querySelectorAll('[name="value"]:checked')]
      if (checked.length > 0) {
        const kind = form.dataset.kind
        if (kind === 'multi_choice') input.value = checked.map((c) => c.value)
        else if (kind === 'confirm') input.value = checked[0].value === 'true'
        else input.value = checked[0].value
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
        const text = envelope.ok
          ? `Done: ${form.dataset.op} ${input.id} (${envelope.clarification?.status ?? 'ok'})`
          : `Refused: ${envelope.error?.code}: ${envelope.error?.message}`
        for (const t of form.querySelectorAll('textarea')) t.value = ''
        for (const c of form.querySelectorAll('[name="value"]:checked')) c.checked = false
        if (envelope.ok) await refresh(true)
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

renderMarkdown(document)
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
