// The examples in examples/node/ keep working.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import path from 'node:path'
import { ROOT, AGENTX, tempWorkspace } from './helpers.mjs'

const run = promisify(execFile)
const example = (name) => path.join(ROOT, 'examples/node', name)

test('ask-answer-resolve plays the story', async () => {
  const root = tempWorkspace()
  const { stdout } = await run(process.execPath, [example('ask-answer-resolve.mjs'), root])
  assert.match(stdout, /asked CLR-42-001; the engineer is now blocked-clarification/)
  assert.match(stdout, /refused as expected: NOT_PARTICIPANT/)
  assert.match(stdout, /resolved/)
  assert.match(stdout, /verify: 0 problems/)
})

test('watch prints monitor findings as they appear', async () => {
  const root = tempWorkspace()
  await run(AGENTX, ['--root', root, 'init'])
  // A question asked two hours ago is past its 60-minute SLA.
  const past = new Date(Date.now() - 2 * 3600_000).toISOString()
  const child = spawn(process.execPath, [example('watch.mjs'), root, '--interval-ms', '200'])
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  try {
    await new Promise((r) => setTimeout(r, 500))
    await run(AGENTX, ['--root', root, '--now', past, 'clarify', 'ask', '--issue', '7', '--from', 'engineer', '--to', 'architect', '--topic', 'Export', '--question', 'CSV?'])
    const deadline = Date.now() + 10_000
    while (!/retried\s+CLR-7-001/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    assert.match(out, /stale\s+CLR-7-001/)
    assert.match(out, /retried\s+CLR-7-001/)
  } finally {
    child.kill()
  }
})
