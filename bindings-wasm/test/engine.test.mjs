// The playground's workspace (playground/engine.js) must do what the CLI does: every
// conformance vector, played through it on the wasm package, meets its expectations.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Workspace, replay, toMs } from '../playground/engine.js'
import { subsetMatch } from '../../tests/js/subset.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const VECTORS = path.join(ROOT, 'tests/vectors')
const PKG = path.join(ROOT, 'bindings-wasm/pkg/node/clarify.cjs')

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return files(p)
    return e.name.endsWith('.json') ? [p] : []
  }).sort()
}

test('every conformance vector through the playground workspace', { skip: !fs.existsSync(PKG) && 'run scripts/build-wasm first' }, () => {
  const c = createRequire(import.meta.url)(PKG)
  const failures = []
  let cases = 0
  for (const file of files(VECTORS)) {
    const rel = path.relative(VECTORS, file)
    const vector = JSON.parse(fs.readFileSync(file, 'utf8'))
    const ws = new Workspace(c, vector.setup ?? {})
    for (const kase of vector.cases) {
      cases++
      const why = subsetMatch(kase.expect, ws.run(kase.op, kase.args ?? {}, toMs(kase.now)))
      if (why) failures.push(`${rel} / ${kase.name}: ${why}`)
    }
  }
  console.log(`playground workspace: ${cases} cases, ${failures.length} failures`)
  assert.equal(failures.length, 0, failures.join('\n'))
})

test('replay keeps one snapshot per step and workflow edits take effect from their step on', { skip: !fs.existsSync(PKG) && 'run scripts/build-wasm first' }, () => {
  const c = createRequire(import.meta.url)(PKG)
  const t0 = Date.parse('2026-11-22T10:00:00.000Z')
  const { workflows } = c.defaultWorkflows()
  const ask = { issueNumber: 1, from: 'engineer', to: 'reviewer', topic: 'Review', question: 'Ready?' }
  const open = workflows.feature.replace('can_clarify = ["architect", "product-manager"]', 'can_clarify = ["architect", "product-manager", "reviewer"]')
  const r = replay(c, {
    steps: [
      { op: 'request', args: ask, now: t0 },
      { op: 'workflows', args: { workflows: { ...workflows, feature: open } }, now: t0 },
      { op: 'request', args: ask, now: t0 + 60000 },
      { op: 'workflows', args: { workflows: { feature: '[[steps]]\nid = 1\n' } }, now: t0 },
    ],
  })
  assert.equal(r.results[0].result.error.code, 'SCOPE_VIOLATION')
  assert.deepEqual(Object.keys(r.results[0].snapshot.files), [])
  assert.equal(r.results[1].result.ok, true)
  assert.equal(r.results[2].result.clarification.id, 'CLR-1-001')
  assert.deepEqual(Object.keys(r.results[2].snapshot.files), ['issue-1.json'])
  assert.equal(r.results[3].result.error.code, 'CONFIG_INVALID')
  assert.equal(r.workspace.workflows.feature, open)
})
