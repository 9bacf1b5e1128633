// The vector matching rules of tests/vectors/README.md (the Rust runner's twin).
export function subsetMatch(expect, actual, at = '$') {
  if (expect && typeof expect === 'object' && !Array.isArray(expect) && '$len' in expect) {
    if (Array.isArray(actual) && actual.length === expect.$len) return null
    return `${at}: expected an array of length ${expect.$len}, found ${short(actual)}`
  }
  if (Array.isArray(expect)) {
    if (!Array.isArray(actual) || actual.length !== expect.length) {
      return `${at}: expected ${expect.length} items, found ${short(actual)}`
    }
    for (let i = 0; i < expect.length; i++) {
      const why = subsetMatch(expect[i], actual[i], `${at}[${i}]`)
      if (why) return why
    }
    return null
  }
  if (expect && typeof expect === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return `${at}: expected an object, found ${short(actual)}`
    for (const [k, ev] of Object.entries(expect)) {
      const p = `${at}.${k}`
      const absent = ev && typeof ev === 'object' && ev.$absent === true
      if (!(k in actual)) {
        if (absent) continue
        return `${p}: missing`
      }
      if (absent) return `${p}: expected absent, found ${short(actual[k])}`
      const why = subsetMatch(ev, actual[k], p)
      if (why) return why
    }
    return null
  }
  if (typeof expect === 'number' && typeof actual === 'number') {
    return Math.abs(expect - actual) < 1e-9 ? null : `${at}: expected ${expect}, found ${actual}`
  }
  return expect === actual ? null : `${at}: expected ${short(expect)}, found ${short(actual)}`
}

function short(v) {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > 300 ? s.slice(0, 300) + '…' : s
}

/** A case's `now`: RFC 3339 text or epoch ms. */
export function nowMs(v) {
  if (typeof v === 'number') return v
  const ms = Date.parse(v)
  if (Number.isNaN(ms)) throw new Error(`bad now ${v}`)
  return ms
}
