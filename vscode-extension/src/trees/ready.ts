// Decides how the ready queue looks: one row per issue that has a ledger (as `agentx ready`
// prints them), a blocked badge and a tooltip naming the blocking record and the agent it
// waits on, and the issue's clarifications as children.
import * as vscode from 'vscode'
import type { Clarification, ReadyIssue, Status } from '../../../bindings-node/clarify'
import type { Backend } from '../backend'
import type { EventBus } from '../events'

/** Scheme of the tree items' resource URIs, so a FileDecorationProvider can badge them. */
export const READY_SCHEME = 'agentx-ready'
export const BLOCKED_BADGE = 'B'

export const RECORD_LOOK: Record<Status, { icon: string; color?: string }> = {
  pending: { icon: 'clock', color: 'charts.yellow' },
  stale: { icon: 'watch', color: 'charts.red' },
  answered: { icon: 'comment', color: 'charts.green' },
  escalated: { icon: 'flame', color: 'charts.purple' },
  resolved: { icon: 'check', color: 'disabledForeground' },
  abandoned: { icon: 'circle-slash', color: 'disabledForeground' },
}

export function issueUri(issue: number): vscode.Uri {
  return vscode.Uri.parse(`${READY_SCHEME}:/issue/${issue}`)
}

export class IssueItem extends vscode.TreeItem {
  readonly kind = 'issue'
  constructor(readonly issue: ReadyIssue) {
    super(`#${issue.issueNumber}`, vscode.TreeItemCollapsibleState.Collapsed)
    const [first, ...more] = issue.blocked
    this.id = `issue:${issue.issueNumber}`
    this.resourceUri = issueUri(issue.issueNumber)
    if (first) {
      this.description = `BLOCKED: ${first.id} waiting on ${first.waitingOn}${more.length ? ` (+${more.length} more)` : ''}`
      this.iconPath = new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('list.errorForeground'))
      this.tooltip = blockedTooltip(issue)
      this.contextValue = 'issue.blocked'
    } else {
      this.description = 'ready'
      this.iconPath = new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'))
      this.tooltip = `Issue #${issue.issueNumber} is ready: no blocking clarification is waiting`
      this.contextValue = 'issue.ready'
    }
    // What screen readers (and the e2e test) read: the row as it reads on screen.
    this.accessibilityInformation = { label: `#${issue.issueNumber} ${this.description}`, role: 'treeitem' }
  }
}

export function blockedTooltip(issue: ReadyIssue): vscode.MarkdownString {
  const md = new vscode.MarkdownString()
  md.appendMarkdown(`**Issue #${issue.issueNumber} is blocked**\n\n`)
  for (const b of issue.blocked) md.appendMarkdown(`- ${b.id} is waiting on ${b.waitingOn}\n`)
  return md
}

export class ClarificationItem extends vscode.TreeItem {
  readonly kind = 'clarification'
  constructor(readonly record: Clarification) {
    super(record.id, vscode.TreeItemCollapsibleState.None)
    const look = RECORD_LOOK[record.status] ?? { icon: 'question' }
    this.id = `clarification:${record.id}`
    this.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined)
    this.description = `${record.from} -> ${record.to} · ${record.status} · ${record.topic}`
    this.tooltip = `${record.id} (${record.blocking ? 'blocking' : 'non-blocking'}): ${record.from} -> ${record.to}, ${record.status}, round ${record.round}/${record.maxRounds}\n${record.topic}`
    this.contextValue = `clarification.${record.status}`
    this.accessibilityInformation = { label: `${record.id} ${this.description}`, role: 'treeitem' }
    this.command = { command: 'agentx.showClarification', title: 'Show Clarification Thread', arguments: [record.id] }
  }
}

export type ReadyNode = IssueItem | ClarificationItem

function badgeKey(issue: ReadyIssue | undefined): string {
  return issue && issue.blocked.length > 0 ? `${issue.blocked[0].id}>${issue.blocked[0].waitingOn}` : ''
}

export class ReadyTree implements vscode.TreeDataProvider<ReadyNode>, vscode.FileDecorationProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ReadyNode | undefined>()
  readonly onDidChangeTreeData = this.changed.event
  private readonly decorationsChanged = new vscode.EventEmitter<vscode.Uri[] | undefined>()
  readonly onDidChangeFileDecorations = this.decorationsChanged.event
  private readonly loaded = new vscode.EventEmitter<ReadyIssue[]>()
  /** The issues of the latest read (for the view's badge). */
  readonly onDidLoad = this.loaded.event
  private issues = new Map<number, ReadyIssue>()
  private readonly subscription: vscode.Disposable

  constructor(
    private backend: () => Backend | undefined,
    bus: EventBus,
  ) {
    this.subscription = bus.onDidChange(() => this.changed.fire(undefined))
  }

  getTreeItem(node: ReadyNode): vscode.TreeItem {
    return node
  }

  async getChildren(parent?: ReadyNode): Promise<ReadyNode[]> {
    const backend = this.backend()
    if (!backend) return []
    if (!parent) {
      const issues = await backend.ready()
      const before = this.issues
      this.issues = new Map(issues.map((i) => [i.issueNumber, i]))
      this.loaded.fire(issues)
      // Only the badges that changed: a blanket "everything changed" makes VS Code drop the
      // decorations of rows it does not redraw.
      const changed = [...new Set([...before.keys(), ...this.issues.keys()])].filter(
        (n) => badgeKey(before.get(n)) !== badgeKey(this.issues.get(n)),
      )
      if (changed.length > 0) this.decorationsChanged.fire(changed.map(issueUri))
      return issues.map((i) => new IssueItem(i))
    }
    if (parent instanceof IssueItem) {
      const records = await backend.list({ issue: parent.issue.issueNumber, all: true })
      return records.map((r) => new ClarificationItem(r))
    }
    return []
  }

  /** The blocked badge on an issue row. */
  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== READY_SCHEME) return undefined
    const match = /^\/issue\/(\d+)$/.exec(uri.path)
    const issue = match ? this.issues.get(Number(match[1])) : undefined
    if (!issue || issue.blocked.length === 0) return undefined
    const [first] = issue.blocked
    const decoration = new vscode.FileDecoration(
      BLOCKED_BADGE,
      `blocked: ${first.id} is waiting on ${first.waitingOn}`,
      new vscode.ThemeColor('list.errorForeground'),
    )
    decoration.propagate = false
    return decoration
  }

  dispose(): void {
    this.subscription.dispose()
    this.changed.dispose()
    this.decorationsChanged.dispose()
    this.loaded.dispose()
  }
}
