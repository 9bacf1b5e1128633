// The simulated clock: it shows the time of the last step, and every move forward is a
// monitor run at the new time (as a cron job would run `agentx clarify monitor`). "Next SLA
// expiry" asks the core when the monitor would next act (`nextWakeup`). An example's queued
// steps play from here too, each at the time its vector gives.
import { S, clockNow, runStep, persist } from './session.js'
import { $, $$, flash } from './dom.js'
import { fmtClock, fmtDur } from './format.js'
import { renderTimeline } from './timeline.js'

/** The earliest instant at which the monitor would act on the latest state, or null. */
function nextWakeup() {
  const r = S.rt.workspace.run('nextWakeup', {}, clockNow())
  return r.ok ? r.wakeup : null
}

export function renderClock() {
  const now = clockNow()
  const t = $('#clock-time')
  t.textContent = fmtClock(now)
  t.dateTime = new Date(now).toISOString()
  const due = nextWakeup()
  const btn = $('#next-deadline')
  btn.disabled = due === null
  btn.title = due === null ? 'No pending record has an SLA deadline' : `Jump to ${fmtClock(due)} (${fmtDur(due - now)} from now), just past the earliest SLA deadline, then run the monitor`
  const at = $('#custom-at')
  if (document.activeElement !== at) at.value = new Date(now).toISOString().slice(0, 19)
}

/** Moves the clock (a monitor run at the new time); queued monitor runs it passed are dropped. */
function tick(now) {
  const { scenario } = S
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
  const step = S.scenario.queue.shift()
  if (!step) return
  // Each step runs at the time the vector gives it (a vector may go back in time on purpose).
  runStep(step)
}

export function wireClock() {
  for (const b of $$('[data-advance]')) b.addEventListener('click', () => advance(Number(b.dataset.advance)))
  $('#run-monitor').addEventListener('click', () => advance(0))
  $('#next-deadline').addEventListener('click', () => {
    const t = nextWakeup()
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

  $('#next-step').addEventListener('click', () => nextQueued())
  $('#play-all').addEventListener('click', () => {
    while (S.scenario.queue.length) nextQueued()
  })
  $('#drop-queue').addEventListener('click', () => {
    S.scenario.queue = []
    persist(false)
    renderTimeline()
  })
}
