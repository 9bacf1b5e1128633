// Picks the implementation under test: AGENTX_IMPL=node (default) or wasm. Both expose the
// same functions, which return success envelopes and throw Error with `.code`.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export const IMPL = process.env.AGENTX_IMPL ?? 'node'

export function load() {
  switch (IMPL) {
    case 'node':
      return require(path.join(root, 'bindings-node/clarify.js'))
    case 'wasm':
      return require(path.join(root, 'bindings-wasm/pkg/node/clarify.cjs'))
    default:
      throw new Error(`AGENTX_IMPL must be node or wasm, not ${IMPL}`)
  }
}

export const ROOT = root
