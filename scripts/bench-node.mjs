#!/usr/bin/env node
// Node binding benchmarks (issue 5), printed as medians:
//  1. the pure request+answer pair through the binding (compare with the Rust criterion
//     bench `api/request+answer`, same calls without the crossing into JS);
//  2. the store's `ask` latency from Node versus `agentx clarify ask` (a process per call).
// Usage: node scripts/bench-node.mjs [pairs=3000] [asks=150]
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const c = require(path.join(root, 'bindings-node/clarify.js'))
const agentx = process.env.AGENTX_BIN ?? path.join(root, 'target/release/agentx')
const pairs = Number(process.argv[2] ?? 3000)
const asks = Number(process.argv[3] ?? 150)
const T0 = Date.parse('2026-11-22T10:00:00.000Z')

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const us = (ms) => (ms * 1000).toFixed(1)

// 1. Pure pair, in batches of 100 so the median is robust to GC pauses.
const batch = 100
const perPair = []
for (let b = 0; b < pairs / batch; b++) {
  const t = performance.now()
  for (let i = 0; i < batch; i++) {
    const asked = c.request({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Session cache', question: 'Redis or an in-process LRU for the session cache?', now: T0 })
    c.answer({ ledger: asked.ledger, statuses: asked.statuses, id: 'CLR-42-001', from: 'architect', body: 'Redis: sessions must survive a deploy.', now: T0 + 60_000 })
  }
  perPair.push((performance.now() - t) / batch)
}
console.log(`node pure request+answer: median ${us(median(perPair))} µs per pair (${pairs} pairs)`)

// 2. Store ask: Node (in-process, locked, atomic) vs the CLI (one process per ask).
const mk = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-bench-')); execFileSync(agentx, ['--root', d, 'init']); return d }
const nodeRoot = mk()
const ws = new c.Workspace(nodeRoot)
const nodeTimes = []
for (let i = 0; i < asks; i++) {
  const t = performance.now()
  await ws.ask({ issueNumber: 1 + (i % 10), from: 'engineer', to: 'architect', topic: `topic ${i}`, question: `question ${i}?`, blocking: false })
  nodeTimes.push(performance.now() - t)
}
const cliRoot = mk()
const cliTimes = []
for (let i = 0; i < asks; i++) {
  const t = performance.now()
  execFileSync(agentx, ['--root', cliRoot, '--json', 'clarify', 'ask', '--issue', String(1 + (i % 10)), '--from', 'engineer', '--to', 'architect', '--topic', `topic ${i}`, '--question', `question ${i}?`, '--non-blocking'])
  cliTimes.push(performance.now() - t)
}
console.log(`store ask: node median ${median(nodeTimes).toFixed(2)} ms, cli median ${median(cliTimes).toFixed(2)} ms (${asks} asks each, 10 ledgers, monitor included)`)
