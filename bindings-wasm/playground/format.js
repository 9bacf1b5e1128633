// How the page writes times, durations and events (the simulated clock is UTC).
import { escapeHtml as esc } from './markdown.js'

const DAY_FMT = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' })
const SHORT_DAY = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' })

/** HH:MM, with seconds and milliseconds only when they are not zero (or `always`). */
export function hms(ms, always = false) {
  const iso = new Date(ms).toISOString()
  const hm = iso.slice(11, 16)
  const s = iso.slice(17, 19)
  const milli = iso.slice(20, 23)
  if (milli !== '000') return `${hm}:${s}.${milli}`
  if (s !== '00' || always) return `${hm}:${s}`
  return hm
}
export const fmtClock = (ms) => `${DAY_FMT.format(new Date(ms))} · ${hms(ms)}`
const sameDay = (a, b) => new Date(a).toISOString().slice(0, 10) === new Date(b).toISOString().slice(0, 10)

export function fmtDur(ms) {
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

/** The timeline's time column: HH:MM, then seconds/ms and the date when they matter. */
export function whenHtml(now, prevNow) {
  const iso = new Date(now).toISOString()
  let html = esc(iso.slice(11, 16))
  const rest = iso.slice(16, 23)
  if (rest !== ':00.000') html += `<small>${esc(rest.endsWith('.000') ? rest.slice(0, 3) : rest)}</small>`
  if (prevNow !== null && !sameDay(prevNow, now)) html = `<small>${esc(SHORT_DAY.format(new Date(now)))}</small>${html}`
  return html
}

/** An event's type as one word (chips, tables). */
export const EVENT_WORD = {
  'clarification-requested': 'requested',
  'clarification-answered': 'answered',
  'clarification-stale': 'stale',
  'clarification-resolved': 'resolved',
  'clarification-escalated': 'escalated',
  'clarification-abandoned': 'abandoned',
}
