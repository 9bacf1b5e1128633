// Plays the function vectors (tests/function-vectors/) through a binding's pure functions
// (AGENTX_IMPL=node|wasm): each case must match its `expect`, and every result must
// deep-equal the core's (target/function-vector-results/, written by
// `cargo test -p agentx-clarify-tests --test function_vectors`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { load, IMPL, ROOT } from './impl.mjs'
import { subsetMatch } from './subset.mjs'

const c = load()
const DIR = path.join(ROOT, 'tests/function-vectors')
const RESULTS = path.join(ROOT, 'target/function-vector-results')

/** `{"$let": name}` → the file's `let` value of that name. */
function resolve(v, lets) {
  if (Array.isArray(v)) return v.map((x) => resolve(x, lets))
  if (v === null || typeof v !== 'object') return v
  const keys = Object.keys(v)
  if (keys.length === 1 && keys[0] === '$let') {
    assert.ok(Object.hasOwn(lets, v.$let), `no let value named ${v.$let}`)
    return structuredClone(lets[v.$let])
  }
  return Object.fromEntries(keys.map((k) => [k, resolve(v[k], lets)]))
}

/** The envelope a function returned or threw (a ClarifyError carries its code). */
function envelope(fn, input) {
  try {
    return fn(input)
  } catch (e) {
    if (!e || typeof e.code !== 'string') throw e
    const { code, message, name, stack, ...written } = e
    return { ok: false, error: { code, message }, ...written }
  }
}

const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()

test(`function vectors through ${IMPL}`, async (t) => {
  assert.ok(files.length > 0)
  for (const file of files) {
    await t.test(file, () => {
      const vector = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8'))
      const rustPath = path.join(RESULTS, file)
      assert.ok(fs.existsSync(rustPath), `no Rust results at ${rustPath} (run the Rust runner first)`)
      const rust = JSON.parse(fs.readFileSync(rustPath, 'utf8'))
      const failures = []
      for (const [i, kase] of vector.cases.entries()) {
        assert.equal(typeof c[kase.function], 'function', `${kase.function} is not exported`)
        const actual = envelope(c[kase.function], resolve(kase.input, vector.let ?? {}))
        const why = subsetMatch(kase.expect, actual)
        if (why) failures.push(`${kase.name}: ${why}`)
        if (!isDeepStrictEqual(actual, rust[i])) {
          failures.push(`${kase.name}: differs from Rust\n  js:   ${JSON.stringify(actual).slice(0, 600)}\n  rust: ${JSON.stringify(rust[i]).slice(0, 600)}`)
        }
      }
      assert.equal(failures.length, 0, failures.join('\n'))
    })
  }
})
