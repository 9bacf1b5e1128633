'use strict'
// The views under PostgreSQL (docs/protocol.md §21): with `AGENTX_STORE` naming a database, the
// Ready tree, the Agents tree and the status bar's queue come from the store — records written
// by the `agentx` CLI in another process show, although no state file exists — and a later
// write reaches them through the store's change feed (LISTEN/NOTIFY), not a file watcher.
// A real server: AGENTX_TEST_PG_URL, or a throwaway cluster from scripts/pg-cluster.
require('./support/register')
const test = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { NATIVE, WASM, CLI, tempDir, waitFor } = require('./support/fixtures')
const { loadBackend } = require('../out/backend')
const { EventBus } = require('../out/events')
const { AgentsTree } = require('../out/trees/agents')
const { ReadyTree } = require('../out/trees/ready')

const repo = path.resolve(__dirname, '..', '..')
let cluster
async function serverUrl() {
  if (process.env.AGENTX_TEST_PG_URL) return process.env.AGENTX_TEST_PG_URL
  const dir = path.join(os.tmpdir(), `agentx-pg-vscode-${process.pid}`)
  cluster = spawn(path.join(repo, 'scripts/pg-cluster'), ['supervise', dir], { stdio: ['pipe', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let text = ''
    cluster.stdout.on('data', (d) => {
      text += d
      if (text.includes('\n')) resolve(text.split('\n')[0])
    })
    cluster.on('exit', (code) => reject(new Error(`scripts/pg-cluster exited with ${code} (is the postgresql package installed?)`)))
  })
}
test.after(() => cluster?.stdin.end())

const psql = (url, sql) => execFileSync('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql]).toString().trim()

test('under PostgreSQL the Ready and Agents trees show what the CLI wrote, and its next write', async () => {
  const server = await serverUrl()
  assert.match(server, /^postgres:\/\//)
  const db = `vscode_${process.pid}`
  psql(server, `CREATE DATABASE ${db}`)
  const url = server.replace(/\/[^/?]*\?/, `/${db}?`)
  const root = tempDir()
  const env = { ...process.env, AGENTX_STORE: url }
  const agentx = (...args) => JSON.parse(execFileSync(CLI, [`--root=${root}`, '--json', ...args], { env }).toString())
  assert.equal(agentx('init').ok, true)
  assert.equal(agentx('store', 'init').ok, true)
  const ask = (issue, to, topic) =>
    agentx('clarify', 'ask', `--issue=${issue}`, '--from=engineer', `--to=${to}`, `--topic=${topic}`, `--question=${topic}?`)
  assert.equal(ask(7, 'architect', 'Cache').clarification.id, 'CLR-7-001')
  // The state is in the database only.
  assert.equal(fs.existsSync(path.join(root, '.agentx', 'state', 'clarifications', 'issue-7.json')), false)

  // The extension's backend opens the workspace's store as the CLI does (AGENTX_STORE).
  process.env.AGENTX_STORE = url
  try {
    const backend = loadBackend(root, { native: [NATIVE], wasm: [WASM] })
    assert.equal(backend.kind, 'native')
    const bus = new EventBus()
    const ready = new ReadyTree(() => backend, bus)
    const agents = new AgentsTree(() => backend, bus)
    const issues = await ready.getChildren()
    assert.deepEqual(issues.map((i) => [i.label, i.description]), [['#7', 'BLOCKED: CLR-7-001 waiting on architect']])
    const agentItems = await agents.getChildren()
    assert.ok(agentItems.some((a) => a.label === 'engineer'), JSON.stringify(agentItems.map((a) => a.label)))
    // Asked again with nothing changed: the answer stands (no store read needed).
    assert.equal(backend.changed(), false)

    // Another process writes; the store's change feed tells the views (no file to watch).
    assert.equal(ask(8, 'product-manager', 'Retention').clarification.id, 'CLR-8-001')
    const started = Date.now()
    await waitFor(() => backend.changed(), 5000, 'the change feed to report the CLI write')
    assert.ok(Date.now() - started < 1000, `reported after ${Date.now() - started} ms`)
    const after = await ready.getChildren()
    assert.deepEqual(after.map((i) => [i.label, i.description]), [
      ['#7', 'BLOCKED: CLR-7-001 waiting on architect'],
      ['#8', 'BLOCKED: CLR-8-001 waiting on product-manager'],
    ])
    assert.equal(fs.existsSync(path.join(root, '.agentx', 'state', 'clarifications', 'issue-8.json')), false, 'no state file written')
    ready.dispose()
    agents.dispose()
  } finally {
    delete process.env.AGENTX_STORE
  }
})
