// Small DOM and HTML helpers the page's modules share: element lookup, the banner, and the
// fragments every view draws the same way (an empty state, a refusal, a status badge).
import { escapeHtml as esc } from './markdown.js'

export { esc }
export const $ = (sel, root = document) => root.querySelector(sel)
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)]

let flashTimer
/** Shows a message in the banner for a few seconds (errors a little longer). */
export function flash(html, kind = 'info') {
  const b = $('#banner')
  b.className = `banner ${kind}`
  b.innerHTML = html
  b.hidden = false
  clearTimeout(flashTimer)
  flashTimer = setTimeout(() => (b.hidden = true), kind === 'error' ? 8000 : 3500)
}

export function emptyState(title, text) {
  return `<div class="empty-state"><div class="empty-icon" aria-hidden="true">⟲</div><h3>${title}</h3><p>${text}</p></div>`
}

/** A refusal: its code and message; `written` when the core wrote an escalation anyway. */
export function refusalHtml(error, written) {
  return `<div class="refusal" role="alert"><code class="code">${esc(error.code)}</code> <span class="msg">${esc(error.message)}</span>${written ? '<div class="note">The core wrote the escalation before refusing: see the record.</div>' : ''}</div>`
}

const STATUS_WORD = { pending: 'pending', answered: 'answered', stale: 'stale', escalated: 'escalated', resolved: 'resolved', abandoned: 'abandoned' }
export const badge = (status) => `<span class="badge st-${esc(status)}">${esc(STATUS_WORD[status] ?? status)}</span>`
