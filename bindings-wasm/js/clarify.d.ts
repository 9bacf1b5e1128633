// @agentx/clarify-wasm — the same shapes (types.d.ts) and pure functions (functions.d.ts) as
// @agentx/clarify-node. In browsers, call `init()` once before the functions.
export * from './types'
export * from './functions'

/** Loads and instantiates the module (browsers); resolves when the functions are usable. */
export declare function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>
/** Instantiates the module from bytes synchronously. */
export declare function initSync(bytes: BufferSource | WebAssembly.Module): void
export default init

/** A workspace in memory: the same commands and `--json` shapes as the CLI and the Node store. */
export declare class Workspace {
  constructor(setup?: import('./types').WorkspaceSetup)
  /** Runs a command (a Node `Workspace` method name, or a vector op) at `now` (epoch ms). */
  run(op: string, input?: object, now?: number): import('./types').Ok<any>
  /** Every file: relative path → text. */
  files(): Record<string, string>
  /** Replaces every file with a snapshot from `files()`. */
  restore(files: Record<string, string>): void
}
