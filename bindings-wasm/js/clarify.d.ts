// @agentx/clarify-wasm — the same shapes (types.d.ts) and pure functions (functions.d.ts) as
// @agentx/clarify-node. In browsers, call `init()` once before the functions.
export * from './types'
export * from './functions'

/** Loads and instantiates the module (browsers); resolves when the functions are usable. */
export declare function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>
/** Instantiates the module from bytes synchronously. */
export declare function initSync(bytes: BufferSource | WebAssembly.Module): void
export default init
