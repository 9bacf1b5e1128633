// A scenario survives a reload and can be shared: it is serialised (deflate-raw when the
// browser has CompressionStream, else plain) as base64url into the URL hash (`#s=…`) and into
// localStorage. Restoring either reproduces the same view: the page replays the steps.

const KEY = 'agentx-clarify-playground/v1'

function toBase64Url(bytes) {
  let bin = ''
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)
  const bin = atob(b64)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

async function pipe(bytes, stream) {
  const s = new Blob([bytes]).stream().pipeThrough(stream)
  return new Uint8Array(await new Response(s).arrayBuffer())
}

/** Scenario → `z<base64url>` (deflated) or `j<base64url>` (plain JSON). */
export async function encode(scenario) {
  const bytes = new TextEncoder().encode(JSON.stringify(scenario))
  if (typeof CompressionStream === 'function') {
    try {
      return 'z' + toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')))
    } catch {
      // fall through to plain
    }
  }
  return 'j' + toBase64Url(bytes)
}

export async function decode(text) {
  const kind = text[0]
  const bytes = fromBase64Url(text.slice(1))
  let json
  if (kind === 'z') json = new TextDecoder().decode(await pipe(bytes, new DecompressionStream('deflate-raw')))
  else if (kind === 'j') json = new TextDecoder().decode(bytes)
  else throw new Error('unknown scenario encoding')
  const scenario = JSON.parse(json)
  if (!scenario || scenario.v !== 1 || !Array.isArray(scenario.steps)) throw new Error('not a playground scenario')
  return scenario
}

export function hashState() {
  const m = /^#s=(.+)$/.exec(location.hash)
  return m ? m[1] : null
}

export function saveLocal(encoded) {
  try {
    localStorage.setItem(KEY, encoded)
  } catch {
    // private mode or quota: the URL still carries the state
  }
}

export function loadLocal() {
  try {
    return localStorage.getItem(KEY)
  } catch {
    return null
  }
}
