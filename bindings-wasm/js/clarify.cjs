'use strict'
// @agentx/clarify-wasm for Node (CommonJS) — the same API as @agentx/clarify-node's pure
// functions. The wasm exports return the core's envelope; a failure becomes a thrown Error
// with `.code`, and a trap (a bug caught by the panic hook) becomes code INTERNAL.
const wasm = require('./agentx_clarify_wasm.js')
const { wrap } = require('./wrap.cjs')

module.exports = wrap(wasm)
