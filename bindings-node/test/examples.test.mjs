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

test('watch sleeps until the deadline the core names, then acts at it', async () => {
  const root = tempWorkspace()
  await run(AGENTX, ['--root', root, 'init'])
  const child = spawn(process.execPath, [example('watch.mjs'), root])
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const waitFor = async (re) => {
    const deadline = Date.now() + 20_000
    while (!re.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    assert.match(out, re)
  }
  try {
    await waitFor(/next deadline: none \(waiting for a change\)/)
    // Asked 56 minutes ago: its 60-minute SLA runs out 4 s from now, with no further change.
    const asked = new Date(Date.now() - 3600_000 + 4_000).toISOString()
    const { stdout } = await run(AGENTX, ['--root', root, '--json', '--now', asked, 'clarify', 'ask', '--issue', '7', '--from', 'engineer', '--to', 'architect', '--topic', 'Export', '--question', 'CSV?'])
    const due = Date.parse(JSON.parse(stdout).clarification.staleAfter) + 1
    // The ledger change makes it re-ask: the wake-up is 1 ms past the SLA.
    await waitFor(new RegExp(`next deadline: ${new Date(due).toISOString().replace(/[.]/g, '\\.')}`))
    await waitFor(/retried\s+CLR-7-001/)
    // The timer, not a change, ran the monitor that found it stale, and not before the deadline.
    const [, at, why] = /\[([^\]]+)\] (.*)\n[^[]*stale\s+CLR-7-001/.exec(out)
    assert.equal(why, 'deadline')
    assert.ok(Date.parse(at) >= due, `${at} is before the deadline ${new Date(due).toISOString()}`)
    // The retry restarted the SLA: the next deadline is an hour on.
    await waitFor(/retried\s+CLR-7-001[\s\S]*next deadline: \S+/)
    const next = Date.parse([...out.matchAll(/next deadline: (\S+)/g)].at(-1)[1])
    assert.ok(next > due + 3600_000, `next deadline ${new Date(next).toISOString()}`)
  } finally {
    child.kill()
  }
})
