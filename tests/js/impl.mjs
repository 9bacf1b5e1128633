// Picks the implementation under test: AGENTX_IMPL=node (default), wasm, or node-store. Each
// exposes the core's pure functions (which return success envelopes and throw Error with
// `.code`) and a workspace factory whose `run(op, args, now)` plays a vector case through the
// one command layer — over a MemStore in Node (`MemoryWorkspace`) and in wasm (`Workspace`),
// over the file store (`Workspace` on a temporary directory) for node-store.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export const IMPL = process.env.AGENTX_IMPL ?? 'node'

export function load() {
  switch (IMPL) {
    case 'node':
    case 'node-store':
      return require(path.join(root, 'bindings-node/clarify.js'))
    case 'wasm':
      return require(path.join(root, 'bindings-wasm/pkg/node/clarify.cjs'))
    default:
      throw new Error(`AGENTX_IMPL must be node, wasm or node-store, not ${IMPL}`)
  }
}

/** Envelopes of failures come back as thrown ClarifyErrors: turn them into the envelope. */
function envelope(e) {
  if (!e || typeof e.code !== 'string') throw e
  const { code, message, name, stack, ...written } = e
  return { ok: false, error: { code, message }, ...written }
}

/** A vector's `file` case over a directory. */
function fileCase(dir, name) {
  // `agent-status.json` and names with a directory (`delegations/issue-42.json`) are under .agentx/state/.
  const p = name === 'agent-status.json' || name.includes('/') ? path.join(dir, '.agentx/state', name) : path.join(dir, '.agentx/state/clarifications', name)
  if (!fs.existsSync(p)) return { ok: true, content: null }
  const text = fs.readFileSync(p, 'utf8')
  try { return { ok: true, content: JSON.parse(text) } } catch { return { ok: true, content: text } }
}

/** A workspace for one vector file; `run` may return a promise (node-store). */
export function workspace(c, setup) {
  if (IMPL === 'node-store') {
    // The same files a MemStore holds, written to a fresh directory.
    const files = new c.MemoryWorkspace(setup).files()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-vector-'))
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
      // A private key file is owner-only, as `agentx keys new` writes it (docs/protocol.md §16).
      fs.writeFileSync(path.join(dir, rel), text, { mode: rel.endsWith('.key') ? 0o600 : 0o666 })
    }
    fs.mkdirSync(path.join(dir, '.agentx/state/clarifications'), { recursive: true })
    const ws = new c.Workspace(dir)
    return {
      async run(op, args, now) {
        if (op === 'file') return fileCase(dir, args.name)
        try { return await ws.call(op, { ...args, now }) } catch (e) { return envelope(e) }
      },
      close() { fs.rmSync(dir, { recursive: true, force: true }) },
    }
  }
  const ws = IMPL === 'wasm' ? new c.Workspace(setup) : new c.MemoryWorkspace(setup)
  return {
    run(op, args, now) {
      try { return ws.run(op, args, now) } catch (e) { return envelope(e) }
    },
    close() {},
  }
}

export const ROOT = root
