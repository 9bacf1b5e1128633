// Decides what the status bar says: the number of blocking clarifications that hold their
// issue up (the ready queue's blockers: pending, stale or escalated), plus a read-only marker
// in wasm mode.
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as vscode from 'vscode'
import type { ReadyIssue } from '../../bindings-node/clarify'
import type { Backend } from './backend'
import type { EventBus } from './events'

export function countBlocking(issues: readonly ReadyIssue[]): number {
  return issues.reduce((n, issue) => n + issue.blocked.length, 0)
}

export function statusText(count: number, readOnly: boolean): string {
  const icon = count > 0 ? '$(warning)' : '$(comment-discussion)'
  return `${icon} ${count} blocking${readOnly ? ' (read-only)' : ''}`
}

export class ClarifyStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem
  private readonly subscription: vscode.Disposable
  private generation = 0

  constructor(
    private backend: () => Backend | undefined,
    bus: EventBus,
  ) {
    this.item = vscode.window.createStatusBarItem('agentx.blocking', vscode.StatusBarAlignment.Left, 50)
    this.item.name = 'AgentX Clarify'
    this.item.command = 'agentx.showClarifications'
    this.subscription = bus.onDidChange(() => void this.update())
  }

  /** Re-reads the ready queue; a slower, older read never overwrites a newer one. */
  async update(): Promise<void> {
    const generation = ++this.generation
    const backend = this.backend()
    // Not an AgentX workspace (no `.agentx/`): stay out of the way.
    if (!backend || !fs.existsSync(path.join(backend.root, '.agentx'))) {
      this.item.hide()
      return
    }
    let count: number
    try {
      count = countBlocking(await backend.ready())
    } catch (e) {
      if (generation !== this.generation) return
      this.item.text = '$(error) clarifications'
      this.item.tooltip = `AgentX Clarify: ${e instanceof Error ? e.message : String(e)}`
      this.item.show()
      return
    }
    if (generation !== this.generation) return
    this.item.text = statusText(count, !backend.canEdit)
    this.item.tooltip =
      `${count} open blocking clarification${count === 1 ? '' : 's'} in ${backend.root}` +
      (backend.canEdit ? '' : `\nRead-only: editing needs the native addon (${backend.fallbackReason ?? ''})`)
    this.item.backgroundColor = count > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined
    this.item.show()
  }

  dispose(): void {
    this.subscription.dispose()
    this.item.dispose()
  }
}
