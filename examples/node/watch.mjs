#!/usr/bin/env node
// Watches a workspace and prints what the monitor finds as it happens: stale questions,
// retries, escalations, deadlocks, abandonments. Usage:
//   node examples/node/watch.mjs [workspace-dir]
// It re-runs the monitor whenever a ledger changes, and sleeps exactly until the next instant
// at which time alone makes the monitor act (the core's `nextWakeup`: an SLA running out),
// re-asked after every run. No polling: with nothing pending it waits for a change.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { Workspace, renderText } = require('../../bindings-node/clarify.js')

const args = process.argv.slice(2)
const ws = args[0] ? new Workspace(args[0]) : Workspace.discover()
const dir = path.join(ws.root, '.agentx/state/clarifications')
fs.mkdirSync(dir, { recursive: true })

// The longest a Node timer can wait (about 24.8 days); a later wake-up is re-asked then.
const MAX_DELAY = 2 ** 31 - 1

let running = false
let again = false
let timer = null
let announced = null

async function check(why) {
  if (running) { again = true; return }
  running = true
  try {
    const { report } = await ws.monitor({})
    const quiet = ['stale', 'retried', 'escalated', 'stuck', 'deadlocks', 'abandoned', 'errors'].every((k) => report[k].length === 0)
    if (!quiet) console.log(`[${new Date().toISOString()}] ${why}\n${renderText({ view: 'report', report }).text}`)
  } catch (err) {
    console.error(`monitor failed: ${err.code ?? ''} ${err.message}`)
  } finally {
    running = false
  }
  if (again) {
    again = false
    return check('changes while checking')
  }
  await sleepUntilDue()
}

/** Sets the one timer: the monitor runs again at the core's next wake-up. */
async function sleepUntilDue() {
  clearTimeout(timer)
  timer = null
  let wakeup
  try {
    ({ wakeup } = await ws.call('nextWakeup', {}))
  } catch (err) {
    console.error(`next wake-up unknown: ${err.code ?? ''} ${err.message}`)
    return
  }
  const next = wakeup === null ? 'none (waiting for a change)' : new Date(wakeup).toISOString()
  if (next !== announced) console.log(`next deadline: ${next}`)
  announced = next
  if (wakeup === null) return
  timer = setTimeout(() => check('deadline'), Math.min(Math.max(wakeup - Date.now(), 0), MAX_DELAY))
}

console.log(`watching ${dir} (the monitor runs on every ledger change and at each deadline; Ctrl-C stops)`)
// The watcher keeps the process alive.
fs.watch(dir, (event, file) => {
  if (file && /^issue-\d+\.json$/.test(file)) check(`${file} changed`)
})
await check('start')
