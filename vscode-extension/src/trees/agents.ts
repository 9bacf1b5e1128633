// Decides how an agent's status (SPEC §5, `agent-status.json`) looks in the sidebar: one row
// per agent, an icon per status, and what it waits on or answers in the description.
import * as vscode from 'vscode'
import type { AgentStatus, Statuses } from '../../../bindings-node/clarify'
import type { Backend } from '../backend'
import type { EventBus } from '../events'

interface Look {
  icon: string
  color?: string
  label: string
}

/** Icon per status; the two clarification states are the ones that must stand out. */
export const STATUS_LOOK: Record<string, Look> = {
  idle: { icon: 'circle-large-outline', label: 'idle' },
  working: { icon: 'tools', color: 'charts.blue', label: 'working' },
  clarifying: { icon: 'sync~spin', color: 'charts.yellow', label: 'clarifying' },
  'blocked-clarification': { icon: 'warning', color: 'list.warningForeground', label: 'blocked' },
  done: { icon: 'pass', color: 'testing.iconPassed', label: 'done' },
  stuck: { icon: 'error', color: 'list.errorForeground', label: 'stuck' },
}
const UNKNOWN: Look = { icon: 'question', label: 'unknown status' }

export class AgentItem extends vscode.TreeItem {
  constructor(
    readonly agent: string,
    readonly status: AgentStatus,
  ) {
    super(agent, vscode.TreeItemCollapsibleState.None)
    const look = STATUS_LOOK[status.status] ?? { ...UNKNOWN, label: String(status.status) }
    this.id = `agent:${agent}`
    this.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined)
    this.description = describe(status, look)
    this.tooltip = tooltip(agent, status)
    this.contextValue = `agent.${status.status}`
    this.accessibilityInformation = { label: `${agent} ${this.description}`, role: 'treeitem' }
    if (status.clarificationId) {
      this.command = {
        command: 'agentx.showClarification',
        title: 'Show Clarification Thread',
        arguments: [status.clarificationId],
      }
    }
  }
}

function describe(status: AgentStatus, look: Look): string {
  const parts = [look.label]
  if (status.status === 'blocked-clarification' && status.waitingOn) parts.push(`waiting on ${status.waitingOn}`)
  else if (status.status === 'clarifying' && status.respondingTo) parts.push(`answering ${status.respondingTo}`)
  else if (status.waitingOn) parts.push(`waiting on ${status.waitingOn}`)
  else if (status.respondingTo) parts.push(`answering ${status.respondingTo}`)
  if (status.clarificationId && (status.status === 'blocked-clarification' || status.status === 'clarifying')) {
    parts.push(status.clarificationId)
  }
  if (status.issue !== null && status.issue !== undefined) parts.push(`#${status.issue}`)
  return parts.join(' · ')
}

function tooltip(agent: string, status: AgentStatus): vscode.MarkdownString {
  const md = new vscode.MarkdownString()
  md.appendMarkdown(`**${escape(agent)}**: ${escape(String(status.status))}\n\n`)
  const rows: [string, unknown][] = [
    ['issue', status.issue === null || status.issue === undefined ? null : `#${status.issue}`],
    ['clarification', status.clarificationId],
    ['waiting on', status.waitingOn],
    ['answering', status.respondingTo],
    ['last activity', status.lastActivity],
  ]
  for (const [name, value] of rows) {
    if (value !== null && value !== undefined) md.appendMarkdown(`- ${name}: ${escape(String(value))}\n`)
  }
  return md
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&')
}

export class AgentsTree implements vscode.TreeDataProvider<AgentItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<AgentItem | undefined>()
  readonly onDidChangeTreeData = this.changed.event
  private readonly subscription: vscode.Disposable

  constructor(
    private backend: () => Backend | undefined,
    bus: EventBus,
  ) {
    this.subscription = bus.onDidChange(() => this.changed.fire(undefined))
  }

  getTreeItem(item: AgentItem): vscode.TreeItem {
    return item
  }

  async getChildren(parent?: AgentItem): Promise<AgentItem[]> {
    const backend = this.backend()
    if (parent || !backend) return []
    const statuses: Statuses = await backend.statuses()
    return Object.keys(statuses)
      .sort()
      .filter((name) => statuses[name] && typeof statuses[name] === 'object')
      .map((name) => new AgentItem(name, statuses[name]))
  }

  dispose(): void {
    this.subscription.dispose()
    this.changed.dispose()
  }
}
