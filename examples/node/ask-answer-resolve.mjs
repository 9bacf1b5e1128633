#!/usr/bin/env node
// An agent asks, another answers, the first resolves — on a workspace on disk, with the same
// locks as the `agentx` CLI. Usage: node examples/node/ask-answer-resolve.mjs [workspace-dir]
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { Workspace, renderText } = require('../../bindings-node/clarify.js')

const root = process.argv[2] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-example-'))
const ws = new Workspace(root)
await ws.init()

const asked = await ws.ask({
  issueNumber: 42,
  from: 'engineer',
  to: 'architect',
  topic: 'Session cache',
  question: 'Redis or an in-process LRU for the session cache?',
  suggestions: ['redis', 'in-process LRU'],
})
const id = asked.clarification.id
console.log(`asked ${id}; the engineer is now ${(await ws.state()).statuses.engineer.status}`)

try {
  await ws.answer({ id, from: 'reviewer', body: 'Memcached!' })
} catch (err) {
  console.log(`refused as expected: ${err.code}: ${err.message}`)
}

await ws.answer({ id, from: 'architect', body: 'Redis: sessions must survive a deploy (ADR-7).' })
const done = await ws.resolve({ id, message: 'Redis it is.' })
console.log(renderText({ view: 'thread', clarification: done.clarification }).text)
console.log(`verify: ${(await ws.verify()).problems.length} problems in ${root}`)
