// @agentx/clarify-wasm for browsers (ES module). Call `await init()` (or `initSync(bytes)`)
// once, then use the same functions as @agentx/clarify-node's pure API.
import initWasm, * as wasm from './agentx_clarify_wasm.js'
import wrapModule from './wrap.js'

const api = wrapModule.wrap(wasm)

export async function init(input) {
  await initWasm(input === undefined ? undefined : { module_or_path: input })
  return api
}

export function initSync(bytes) {
  wasm.initSync({ module: bytes })
  return api
}

export const {
  request, answer, followUp, resolve, escalate, abandon, monitor, verify, audit, stats, list,
  show, ready, setStatus, parseWorkflow, parseConfig, defaultWorkflows, renderMarkdown, renderText,
  transitions, errorCodes, version, signalsParse, extractJson, signalsIngest, resumePrompt,
  delegationMetrics, unwrap, Workspace,
} = api
export default init
