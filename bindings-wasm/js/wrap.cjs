'use strict'
// Shared by the Node and web builds: envelope → value or thrown ClarifyError.
const FUNCTIONS = [
  'request', 'answer', 'followUp', 'resolve', 'escalate', 'abandon', 'monitor', 'verify',
  'stats', 'list', 'show', 'ready', 'setStatus', 'parseWorkflow', 'parseConfig',
  'defaultWorkflows', 'renderMarkdown', 'renderText', 'transitions', 'version',
]

function unwrap(envelope) {
  if (envelope.ok) return envelope
  const { error, ok, ...written } = envelope
  const err = new Error(error.message)
  err.name = 'ClarifyError'
  err.code = error.code
  Object.assign(err, written)
  throw err
}

function guard(fn) {
  return (input) => {
    let envelope
    try {
      envelope = fn(input)
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        const err = new Error(`internal error: ${e.message}`)
        err.name = 'ClarifyError'
        err.code = 'INTERNAL'
        throw err
      }
      throw e
    }
    return unwrap(envelope)
  }
}

function wrap(wasm) {
  const api = { unwrap, panicForTest: guard(() => wasm.panicForTest()) }
  for (const name of FUNCTIONS) api[name] = guard(wasm[name])
  return api
}

module.exports = { wrap, unwrap, FUNCTIONS }
