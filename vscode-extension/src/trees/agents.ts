// Decides how an agent's status (docs/protocol.md §5, `agent-status.json`) looks in the sidebar: one row
// per agent, an icon per status, and what it waits on or answers in the description; under an
// agent, the delegations (docs/protocol.md §18) it made or holds that are still open.
import * as vscode from 'vscode'
import type { AgentStatus, Delegation, Statuses } from '../../../bindings-node/clarify'
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
    readonly delegations: Delegation[] = [],
  ) {
    super(agent, delegations.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None)
    const look = STATUS_LOOK[status.status] ?? { ...UNKNOWN, label: String(status.status) }
    // A new id when delegations appear: VS Code keeps an id's collapsed state, and a row that
    // was a leaf would stay closed over the delegations it now has.
    this.id = delegations.length > 0 ? `agent:${agent}:delegations` : `agent:${agent}`
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

/** No status reported yet: an agent seen only in delegations. */
const NO_STATUS: AgentStatus = { status: 'no status', issue: null, lastActivity: null, clarificationId: null, waitingOn: null, respondingTo: null }

const DELEGATION_ICON: Record<string, string> = { REQUESTED: 'mail', ACCEPTED: 'run', COMPLETED: 'pass', TIMEOUT: 'watch' }

/** A delegation under one of its two agents: the other agent, the objective, the status. */
export class DelegationItem extends vscode.TreeItem {
  constructor(
    readonly agent: string,
    readonly delegation: Delegation,
  ) {
    const d = delegation
    const outgoing = d.from === agent
    super(`${outgoing ? '→' : '←'} ${outgoing ? d.to : d.from}: ${d.objective}`, vscode.TreeItemCollapsibleState.None)
    this.id = `delegation:${agent}:${d.id}`
    this.iconPath = new vscode.ThemeIcon(DELEGATION_ICON[d.status] ?? (d.status.startsWith('REJECTED') || d.status.startsWith('FAILED') ? 'error' : 'circle-outline'))
    this.description = [d.id, d.status, d.capability ?? '', d.deadline ? `due ${d.deadline}` : ''].filter(Boolean).join(' · ')
    this.tooltip = `${d.id} (issue #${d.issueNumber ?? '?'}): ${d.from} delegated to ${d.to}${d.capability ? ` (${d.capability})` : ''}: ${d.objective} — ${d.status}`
    this.contextValue = `delegation.${d.status}`
    this.accessibilityInformation = { label: `${this.label} ${this.description}`, role: 'treeitem' }
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

type Item = AgentItem | DelegationItem

export class AgentsTree implements vscode.TreeDataProvider<Item>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Item | undefined>()
  readonly onDidChangeTreeData = this.changed.event
  private readonly subscription: vscode.Disposable

  constructor(
    private backend: () => Backend | undefined,
    bus: EventBus,
  ) {
    this.subscription = bus.onDidChange(() => this.changed.fire(undefined))
  }

  getTreeItem(item: Item): vscode.TreeItem {
    return item
  }

  async getChildren(parent?: Item): Promise<Item[]> {
    if (parent) return parent instanceof AgentItem ? parent.delegations.map((d) => new DelegationItem(parent.agent, d)) : []
    const backend = this.backend()
    if (!backend) return []
    const statuses: Statuses = await backend.statuses()
    // Open delegations (the store's default list); a broken delegation ledger must not hide the agents.
    const delegations = await backend.delegations().catch(() => [] as Delegation[])
    const names = new Set(Object.keys(statuses).filter((name) => statuses[name] && typeof statuses[name] === 'object'))
    for (const d of delegations) names.add(d.from).add(d.to)
    return [...names]
      .sort()
      .map((name) => new AgentItem(name, statuses[name] ?? NO_STATUS, delegations.filter((d) => d.from === name || d.to === name)))
  }

  dispose(): void {
    this.subscription.dispose()
    this.changed.dispose()
  }
}
