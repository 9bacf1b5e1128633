// Plays every conformance vector through a binding (AGENTX_IMPL=node|wasm): each case must
// match its `expect`, and every result must deep-equal what the Rust core runner produced
// (target/vector-results/, written by `cargo test -p agentx-clarify-tests --test vectors`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { load, IMPL, ROOT } from './impl.mjs'
import { Model } from './model.mjs'
import { subsetMatch, nowMs } from './subset.mjs'

const c = load()
const VECTORS = path.join(ROOT, 'tests/vectors')
const RESULTS = path.join(ROOT, 'target/vector-results')

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return files(p)
    return e.name.endsWith('.json') ? [p] : []
  }).sort()
}

test(`conformance vectors through ${IMPL}`, () => {
  const all = files(VECTORS)
  assert.ok(all.length > 0, 'no vectors')
  const failures = []
  let cases = 0
  let compared = 0
  for (const file of all) {
    const rel = path.relative(VECTORS, file)
    const vector = JSON.parse(fs.readFileSync(file, 'utf8'))
    const model = new Model(c, vector.setup ?? {})
    const rustPath = path.join(RESULTS, rel)
    const rust = fs.existsSync(rustPath) ? JSON.parse(fs.readFileSync(rustPath, 'utf8')) : null
    if (!rust) failures.push(`${rel}: no Rust results at ${rustPath} (run the Rust vector runner first)`)
    vector.cases.forEach((kase, i) => {
      cases++
      const actual = model.run(kase.op, kase.args ?? {}, nowMs(kase.now))
      const why = subsetMatch(kase.expect, actual)
      if (why) failures.push(`${rel} / ${kase.name}: ${why}`)
      if (rust) {
        compared++
        if (!isDeepStrictEqual(actual, rust[i])) {
          failures.push(`${rel} / ${kase.name}: differs from Rust\n  js:   ${JSON.stringify(actual).slice(0, 600)}\n  rust: ${JSON.stringify(rust[i]).slice(0, 600)}`)
        }
      }
    })
  }
  console.log(`${IMPL}: ${all.length} vector files, ${cases} cases, ${compared} compared with Rust, ${failures.length} failures`)
  assert.equal(failures.length, 0, failures.join('\n'))
})
