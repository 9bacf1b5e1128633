// Decides which directory is the AgentX workspace root: the `agentx.root` setting (absolute,
// or relative to the first workspace folder), else the nearest folder at or above the first
// workspace folder that holds `.agentx/` (as the CLI discovers it), else that folder itself.
import * as fs from 'node:fs'
import * as path from 'node:path'

export function discoverRoot(start: string): string | undefined {
  let dir = path.resolve(start)
  for (;;) {
    try {
      if (fs.statSync(path.join(dir, '.agentx')).isDirectory()) return dir
    } catch {
      // not here
    }
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

export function resolveRoot(setting: string | undefined, folders: readonly string[]): string | undefined {
  const base = folders[0]
  const configured = setting?.trim()
  if (configured) {
    const expanded = configured.replace(/^~(?=$|\/)/, process.env.HOME ?? '~')
    if (path.isAbsolute(expanded)) return path.normalize(expanded)
    return base ? path.resolve(base, expanded) : undefined
  }
  if (!base) return undefined
  return discoverRoot(base) ?? base
}
