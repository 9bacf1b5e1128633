// The playground's workspace (playground/engine.js) runs the command layer of the wasm
// package, like every other surface: every conformance vector, played through it, meets its
// expectations; its own step (workflows) and its snapshots work.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Workspace, replay, toMs, ledgerTexts, statusText, workflowTexts } from '../playground/engine.js'
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
  assert.deepEqual(Object.keys(ledgerTexts(r.results[0].snapshot)), [])
  assert.equal(r.results[1].result.ok, true)
  assert.equal(workflowTexts(r.results[1].snapshot).feature, open)
  assert.equal(workflowTexts(r.results[0].snapshot).feature, workflows.feature)
  assert.equal(r.results[2].result.clarification.id, 'CLR-1-001')
  assert.deepEqual(Object.keys(ledgerTexts(r.results[2].snapshot)), ['issue-1.json'])
  assert.equal(r.results[3].result.error.code, 'CONFIG_INVALID')
  assert.equal(r.workspace.workflows.feature, open)
})

test('snapshots restore (undo), queries read any snapshot, warnings and written failures survive', { skip: !fs.existsSync(PKG) && 'run scripts/build-wasm first' }, () => {
  const c = createRequire(import.meta.url)(PKG)
  const t0 = Date.parse('2026-11-22T10:00:00.000Z')
  const ws = new Workspace(c, {})
  const empty = ws.snapshot()
  const asked = ws.run('request', { issueNumber: 3, from: 'engineer', to: 'architect', topic: 'Cache', question: 'Redis?' }, t0)
  assert.equal(asked.ok, true)
  const after = ws.snapshot()
  assert.ok(statusText(after).includes('blocked-clarification'))
  // The wake-up and the graph of the snapshot after the request, asked while the live
  // workspace is back at the start.
  ws.restore(empty)
  assert.deepEqual(Object.keys(ledgerTexts(ws.snapshot())), [])
  assert.equal(ws.run('nextWakeup', {}, t0).wakeup, null)
  assert.equal(ws.query(after, 'nextWakeup', {}, t0).wakeup, Date.parse(asked.clarification.staleAfter) + 1)
  assert.deepEqual(ws.query(after, 'waitForGraph', { issue: 3 }).graphs[0].edges.map((e) => e.id), ['CLR-3-001'])
  assert.equal(ws.query(after, 'waitForGraph', { issue: 'x' }).error.code, 'INVALID_ISSUE')
  // A status-table warning is the result's `warning`.
  assert.equal(ws.run('state', { agent: 'engineer', status: 'working' }, t0).warning, undefined)
  const odd = ws.run('state', { agent: 'qa', status: 'done' }, t0)
  assert.equal(odd.ok, true)
  assert.match(odd.warning, /went from idle to done, which the status table does not allow/)
  // MAX_ROUNDS_EXCEEDED keeps what it wrote: the escalated record comes with the failure.
  const limited = new Workspace(c, { workflows: { feature: '[[steps]]\nid = "i"\nagent = "engineer"\ncan_clarify = ["architect"]\nclarify_max_rounds = 1\n' } })
  limited.run('request', { issueNumber: 1, from: 'engineer', to: 'architect', topic: 't', question: 'q?' }, t0)
  limited.run('answer', { id: 'CLR-1-001', from: 'architect', body: 'a' }, t0 + 1000)
  const over = limited.run('followUp', { id: 'CLR-1-001', from: 'engineer', question: 'q2?' }, t0 + 2000)
  assert.equal(over.ok, false)
  assert.equal(over.error.code, 'MAX_ROUNDS_EXCEEDED')
  assert.equal(over.clarification.status, 'escalated')
})
