// The JS model of the `agentx` CLI (the twin of tests/src/model.rs) is the playground's
// engine: one implementation, browser-safe, so every vector run through a binding also
// checks the code the playground runs.
export { Workspace as Model } from '../../bindings-wasm/playground/engine.js'
