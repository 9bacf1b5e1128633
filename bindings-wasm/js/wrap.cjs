'use strict'
// Shared by the Node and web builds: envelope → value or thrown ClarifyError. The functions
// are the module's `functions()`: the core's operation table names them.

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

// `names`: the operation table's functions; the ES build passes them (its module is not yet
// instantiated when it wraps), the Node build asks the module.
function wrap(wasm, names = wasm.functions()) {
  const api = { unwrap }
  for (const name of names) api[name] = guard((input) => wasm.call(name, input))

  /**
   * A workspace in memory: the command layer over files held in the module, with the same
   * commands and `--json` shapes as the CLI and @agentx/clarify-node's `Workspace`.
   */
  class Workspace {
    constructor(setup) {
      this.inner = new wasm.Workspace()
      if (setup !== undefined) guard((s) => this.inner.fromSetup(s))(setup)
    }

    /** Runs `op` at `now` (epoch ms); returns the envelope or throws a ClarifyError. */
    run(op, input = {}, now = Date.now()) {
      return guard((i) => this.inner.run(op, i, now))(input)
    }

    /** Every file: relative path → text. */
    files() {
      return this.inner.files()
    }

    /** Replaces every file with a snapshot from `files()`. */
    restore(files) {
      if (!this.inner.restore(files)) {
        unwrap({ ok: false, error: { code: 'INVALID_INPUT', message: 'a snapshot is an object of path → text' } })
      }
    }
  }
  api.Workspace = Workspace
  return api
}

module.exports = { wrap, unwrap, guard }
