'use strict'
// Real workspaces on disk, written through the Node binding's store (the CLI's locks and
// formats), and the paths of the packages under test.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ext = path.resolve(__dirname, '..', '..')
const repo = path.resolve(ext, '..')
const NATIVE = process.env.AGENTX_TEST_NATIVE ?? path.join(repo, 'bindings-node', 'clarify.js')
const WASM = process.env.AGENTX_TEST_WASM ?? path.join(repo, 'bindings-wasm', 'pkg', 'node', 'clarify.cjs')
const CLI = process.env.AGENTX_BIN ?? path.join(repo, 'target', 'debug', 'agentx')
const native = require(NATIVE)

const made = []
/** A fresh directory, removed when the test process exits. */
function tempDir(prefix = 'agentx-vscode-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}
process.on('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * #42: CLR-42-001 answered (engineer -> architect), CLR-42-002 pending (engineer -> product-manager)
 * #43: CLR-43-001 pending (architect -> product-manager)
 * #44: CLR-44-001 escalated by a human (engineer -> architect)
 * agents: every docs/protocol.md §5 status once.
 */
async function makeWorkspace() {
  const root = tempDir()
  const ws = new native.Workspace(root)
  await ws.init()
  await ws.ask({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache layer', question: 'Redis or in-process?' })
  await ws.answer({ id: 'CLR-42-001', from: 'architect', body: 'Redis, see ADR-7.' })
  await ws.ask({ issueNumber: 42, from: 'engineer', to: 'product-manager', topic: 'Retention', question: 'How long do we keep sessions?' })
  await ws.ask({ issueNumber: 43, from: 'architect', to: 'product-manager', topic: 'Export scope', question: 'Is CSV export in scope?' })
  await ws.ask({ issueNumber: 44, from: 'engineer', to: 'architect', topic: 'Final schema', question: 'Which schema wins?' })
  await ws.escalate({ id: 'CLR-44-001', message: 'needs a human decision' })
  await ws.state({ agent: 'reviewer', status: 'idle' })
  await ws.state({ agent: 'tester', status: 'working', issue: 42 })
  await ws.state({ agent: 'devops', status: 'done', issue: 41 })
  await ws.state({ agent: 'ux-designer', status: 'stuck', issue: 45 })
  return { root, ws }
}

function readLedger(root, issue) {
  return JSON.parse(fs.readFileSync(path.join(root, '.agentx', 'state', 'clarifications', `issue-${issue}.json`), 'utf8'))
}

function snapshot(root) {
  const dir = path.join(root, '.agentx', 'state')
  const out = {}
  const walk = (d) => {
    for (const name of fs.readdirSync(d)) {
      const full = path.join(d, name)
      if (fs.statSync(full).isDirectory()) walk(full)
      else out[path.relative(dir, full)] = fs.readFileSync(full, 'utf8')
    }
  }
  walk(dir)
  return out
}

/** Polls `check` until it returns a truthy value, or fails after `ms`. */
async function waitFor(check, ms = 10000, what = 'condition') {
  const start = Date.now()
  let last
  for (;;) {
    try {
      last = await check()
      if (last) return last
    } catch (e) {
      last = e
    }
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last})`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

module.exports = { ext, repo, NATIVE, WASM, CLI, native, tempDir, makeWorkspace, readLedger, snapshot, waitFor }
