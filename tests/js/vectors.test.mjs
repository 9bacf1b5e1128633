// Plays every conformance vector through a binding (AGENTX_IMPL=node|wasm|node-store; set
// AGENTX_VECTOR to a part of a path to play only those files): each case must match its
// `expect`, and every result must deep-equal what the Rust runner produced over a MemStore
// (target/vector-results/, written by `cargo test -p agentx-clarify-tests --test vectors`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { load, workspace, IMPL, ROOT } from './impl.mjs'
import { subsetMatch, nowMs } from './subset.mjs'

const c = load()
const VECTORS = path.join(ROOT, 'tests/vectors')
const RESULTS = path.join(ROOT, 'target/vector-results')
const ONLY = process.env.AGENTX_VECTOR ?? ''

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return files(p)
    return e.name.endsWith('.json') ? [p] : []
  }).sort()
}

const all = files(VECTORS).filter((f) => f.includes(ONLY))

test(`conformance vectors through ${IMPL}`, async (t) => {
  assert.ok(all.length > 0, `no vectors${ONLY ? ` matching ${ONLY}` : ''}`)
  let cases = 0
  for (const file of all) {
    const rel = path.relative(VECTORS, file)
    await t.test(rel, async () => {
      const vector = JSON.parse(fs.readFileSync(file, 'utf8'))
      const rustPath = path.join(RESULTS, rel)
      assert.ok(fs.existsSync(rustPath), `no Rust results at ${rustPath} (run the Rust vector runner first)`)
      const rust = JSON.parse(fs.readFileSync(rustPath, 'utf8'))
      const ws = workspace(c, vector.setup ?? {})
      const failures = []
      try {
        for (const [i, kase] of vector.cases.entries()) {
          cases++
          const actual = await ws.run(kase.op, kase.args ?? {}, nowMs(kase.now))
          const why = subsetMatch(kase.expect, actual)
          if (why) failures.push(`${kase.name}: ${why}`)
          if (!isDeepStrictEqual(actual, rust[i])) {
            failures.push(`${kase.name}: differs from Rust\n  js:   ${JSON.stringify(actual).slice(0, 600)}\n  rust: ${JSON.stringify(rust[i]).slice(0, 600)}`)
          }
        }
      } finally {
        ws.close()
      }
      assert.equal(failures.length, 0, failures.join('\n'))
    })
  }
  console.log(`${IMPL}: ${all.length} vector files, ${cases} cases`)
})
