// Registers `agentx mcp` (docs/protocol.md §15) with VS Code, one server per workspace root, so agent mode
// gets the clarification tools without a `.vscode/mcp.json`. The program is the CLI binary the
// .vsix carries (bin/agentx); a repository checkout falls back to target/{release,debug}.
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as vscode from 'vscode'

export const MCP_PROVIDER = 'agentx-clarify.mcp'

/** The agentx binary: `AGENTX_BIN`, the bundled one, else a checkout's build. */
export function cliPath(extensionRoot: string): string | undefined {
  const candidates = [
    process.env.AGENTX_BIN,
    path.join(extensionRoot, 'bin', 'agentx'),
    path.join(extensionRoot, '..', 'target', 'release', 'agentx'),
    path.join(extensionRoot, '..', 'target', 'debug', 'agentx'),
  ]
  return candidates.find((c): c is string => !!c && isExecutable(c))
}

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false
  } catch {
    return false
  }
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    // An unpacker that dropped the mode bits: the bundled binary is ours to mark executable.
    try {
      fs.chmodSync(file, 0o755)
      return true
    } catch {
      return false
    }
  }
}

/** One stdio definition per root: `agentx mcp --agent <agentx.mcp.agent> --root <root>`. */
export function mcpDefinitions(program: string, roots: string[], version: string): vscode.McpStdioServerDefinition[] {
  const config = vscode.workspace.getConfiguration('agentx')
  if (!config.get<boolean>('mcp.enabled', true)) return []
  const agent = config.get<string>('mcp.agent', 'engineer') || 'engineer'
  const unique = [...new Set(roots)]
  return unique.map((root) => {
    const label = unique.length === 1 ? 'AgentX Clarify' : `AgentX Clarify (${path.basename(root)})`
    const def = new vscode.McpStdioServerDefinition(label, program, ['mcp', '--agent', agent, '--root', root], {}, version)
    def.cwd = vscode.Uri.file(root)
    return def
  })
}

/**
 * The provider: the roots (the resolved `.agentx` root of each folder) are asked on every
 * request, and `changed` re-announces when the folders or the settings change.
 */
export function registerMcp(program: string | undefined, roots: () => string[], version: string, log: vscode.LogOutputChannel): vscode.Disposable[] {
  if (!program) {
    log.warn('agentx mcp is not registered: no agentx binary (bin/agentx in the extension, or AGENTX_BIN)')
    return []
  }
  const changed = new vscode.EventEmitter<void>()
  const provider: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => mcpDefinitions(program, roots(), version),
  }
  return [
    changed,
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER, provider),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentx.mcp') || e.affectsConfiguration('agentx.root')) changed.fire()
    }),
  ]
}
