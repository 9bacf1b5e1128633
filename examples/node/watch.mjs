#!/usr/bin/env node
// Watches a workspace and prints what the monitor finds as it happens: stale questions,
// retries, escalations, deadlocks, abandonments. Usage:
//   node examples/node/watch.mjs [workspace-dir] [--interval-ms N]
// It re-runs the monitor whenever a ledger changes, and every interval so SLAs expire on time.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { Workspace, renderText } = require('../../bindings-node/clarify.js')

const args = process.argv.slice(2)
const intervalAt = args.indexOf('--interval-ms')
const intervalMs = intervalAt >= 0 ? Number(args.splice(intervalAt, 2)[1]) : 60_000
const ws = args[0] ? new Workspace(args[0]) : Workspace.discover()
const dir = path.join(ws.root, '.agentx/state/clarifications')
fs.mkdirSync(dir, { recursive: true })

let running = false
let again = false
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
    if (again) { again = false; check('changes while checking') }
  }
}

console.log(`watching ${dir} (monitor every ${intervalMs} ms and on every ledger change; Ctrl-C stops)`)
fs.watch(dir, (event, file) => {
  if (file && /^issue-\d+\.json$/.test(file)) check(`${file} changed`)
})
setInterval(() => check('interval'), intervalMs).unref()
await check('start')
setInterval(() => {}, 1 << 30) // keep running until interrupted
