// The Node Workspace with its state in PostgreSQL (a real server: AGENTX_TEST_PG_URL, or a
// throwaway cluster started by scripts/pg-cluster for this process): ask, route, ingest and
// delegate go through the database, the CLI reads the same state, and no state file appears.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { c, AGENTX, ROOT, tempWorkspace } from './helpers.mjs'

const run = promisify(execFile)

let cluster
async function serverUrl () {
  if (process.env.AGENTX_TEST_PG_URL) return process.env.AGENTX_TEST_PG_URL
  const dir = path.join(os.tmpdir(), `agentx-pg-node-${process.pid}`)
  cluster = spawn(path.join(ROOT, 'scripts/pg-cluster'), ['supervise', dir], { stdio: ['pipe', 'pipe', 'inherit'] })
  const line = await new Promise((resolve, reject) => {
    let text = ''
    cluster.stdout.on('data', (d) => {
      text += d
      if (text.includes('\n')) resolve(text.split('\n')[0])
    })
    cluster.on('exit', (code) => reject(new Error(`scripts/pg-cluster exited with ${code} (is the postgresql package installed?)`)))
  })
  assert.match(line, /^postgres:\/\//)
  return line
}
after(() => cluster?.stdin.end())

const psql = (url, sql) => execFileSync('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql]).toString().trim()

test('route, ingest and delegate through the Node Workspace against PostgreSQL', async () => {
  const server = await serverUrl()
  const db = `node_${process.pid}`
  psql(server, `CREATE DATABASE ${db}`)
  const url = server.replace(/\/[^/?]*\?/, `/${db}?`)
  const root = tempWorkspace()
  const ws = new c.Workspace(root)
  await ws.init()
  fs.writeFileSync(path.join(root, '.agentx/workflows/routing.toml'),
    '[[steps]]\nid = "build"\nagent = "engineer"\ncan_clarify = ["architect"]\nclarify_max_rounds = 3\nclarify_sla_minutes = 60\n')
  fs.cpSync(path.join(ROOT, 'examples/agents'), path.join(root, 'agents'), { recursive: true })
  fs.writeFileSync(path.join(root, '.agentx/config.toml'),
    `[clarify]\ndefault_workflow = "routing"\n\n[store]\nurl = "${url}"\n\n[agents.architect]\ncommand = ["agents/plain"]\nanswer = "text"\n`)
  await run(AGENTX, ['--root', root, 'store', 'init'])

  const asked = await ws.ask({ issueNumber: 42, from: 'engineer', to: 'architect', topic: 'Cache', question: 'Redis?' })
  const routed = await ws.route({ id: asked.clarification.id })
  assert.equal(routed.outcome, 'answered')
  assert.equal(psql(url, 'SELECT count(*) FROM agentx.leases'), '0')

  await ws.delegateRequest({ issueNumber: 43, from: 'architect', to: 'engineer', capability: 'code.implementation.feature', objective: 'Implement the cache', outputContract: { format: 'pull request' } })
  await ws.delegateAccept({ id: 'DLG-43-001', from: 'engineer' })
  const ingested = await ws.signalsIngest({
    issue: 43,
    agent: 'engineer',
    parent: 'architect',
    text: '[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: "Cache"\nquestions:\n  - "Redis or LRU?"\ncurrent_state: "step 1"\n[/CLARIFICATION_NEEDED]\n'
  })
  assert.equal(ingested.blocks[0].outcome, 'created')

  // The CLI reads what Node wrote, from the database.
  const shown = JSON.parse((await run(AGENTX, ['--root', root, '--json', 'clarify', 'show', asked.clarification.id])).stdout)
  assert.deepEqual(shown, await ws.show({ id: asked.clarification.id }))
  assert.equal(shown.clarification.thread.at(-1).type, 'answer')
  assert.deepEqual(psql(url, "SELECT kind || '/' || name FROM agentx.documents WHERE kind <> 'state' ORDER BY 1").split('\n'),
    ['clarifications/issue-42.json', 'clarifications/issue-43.json', 'delegations/issue-43.json'])
  for (const dir of ['clarifications', 'delegations']) {
    const p = path.join(root, '.agentx/state', dir)
    assert.deepEqual(fs.existsSync(p) ? fs.readdirSync(p) : [], [], dir)
  }
})
