// One Node writer of the mixed CLI/Node concurrency test.
import { parentPort, workerData } from 'node:worker_threads'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const c = require('../clarify.js')
const { root, w, n } = workerData
const ws = new c.Workspace(root)
for (let i = 0; i < n; i++) {
  await ws.ask({ issueNumber: 9, from: 'engineer', to: 'architect', topic: `node ${w} ${i}`, question: `node question ${w}/${i}?`, blocking: false })
}
parentPort.postMessage('done')
