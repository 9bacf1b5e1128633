import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
export const here = path.dirname(fileURLToPath(import.meta.url))
export const c = require('../clarify.js')
export const native = require('../index.js')
export const ROOT = path.resolve(here, '../..')
/** The agentx binary built by cargo (scripts/test builds it first). */
export const AGENTX = process.env.AGENTX_BIN ?? path.join(ROOT, 'target/debug/agentx')
export const T0 = Date.parse('2026-11-22T10:00:00.000Z')

export function tempWorkspace() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-node-'))
}

export function ledgerPath(root, issue) {
  return path.join(root, '.agentx/state/clarifications', `issue-${issue}.json`)
}

/** Runs `fn` and returns the error it throws (fails if it does not throw). */
export async function caught(fn) {
  try {
    await fn()
  } catch (e) {
    return e
  }
  throw new Error('expected an error')
}
