/* AgentX Clarify — the JSON shapes every surface shares (docs/api.md, SPEC §3, §5, §7, §10).
 * This file is the single source of the TypeScript types of @agentx/clarify-node and
 * @agentx/clarify-wasm. */

export type Status = 'pending' | 'stale' | 'answered' | 'escalated' | 'resolved' | 'abandoned'
export type EntryType = 'question' | 'answer' | 'stale' | 'retry' | 'escalation' | 'resolution' | 'abandonment'
export type Severity = 'BLOCK' | 'WARN'
export type AgentState = 'idle' | 'working' | 'clarifying' | 'blocked-clarification' | 'done' | 'stuck'
export type ErrorCode =
  | 'INVALID_ID' | 'INVALID_AGENT' | 'INVALID_ISSUE' | 'TEXT_EMPTY' | 'TEXT_TOO_LONG'
  | 'SELF_CLARIFICATION' | 'SCOPE_VIOLATION' | 'BLOCKING_NOT_ALLOWED' | 'MAX_ROUNDS_EXCEEDED'
  | 'NOT_FOUND' | 'NOT_PARTICIPANT' | 'INVALID_TRANSITION' | 'IDEMPOTENCY_CONFLICT'
  | 'INVALID_WORKFLOW' | 'CONFIG_INVALID' | 'LEDGER_CORRUPT' | 'LEDGER_INCONSISTENT'
  | 'LOCK_TIMEOUT' | 'IO_ERROR' | 'INVALID_INPUT' | 'GATE_CLOSED' | 'SIGNATURE_INVALID'
  | 'INTERNAL' | 'NO_RUNNER' | 'ROUTING_IN_PROGRESS' | 'AGENT_ERROR'

/** What kind of failure a code is (SPEC §13); `errorCodes()` gives each code's class. */
export type ErrorClass = 'input' | 'policy' | 'not-found' | 'transition' | 'lock' | 'corrupt' | 'io' | 'internal' | 'agent'

/** One entry of a thread (an append-only log). Unknown fields are kept. */
export interface Entry {
  round: number
  from: string
  type: EntryType
  body: string
  /** RFC 3339 UTC with milliseconds. */
  timestamp: string
  /** Lowercase hex SHA-256 chained to the previous entry. */
  hash?: string
  /** The agent whose key signed the entry (covered by the hash). */
  signer?: string
  /** `ed25519:<base64>` over the 32 bytes of `hash` (not covered by the hash). */
  signature?: string
  [unknown: string]: unknown
}

/** A clarification record as stored in a ledger. */
export interface ClarificationRecord {
  id: string
  from: string
  to: string
  topic: string
  blocking: boolean
  status: Status
  round: number
  maxRounds: number
  slaMinutes: number
  created?: string
  staleAfter?: string
  retries: number
  resolvedAt: string | null
  field?: string
  suggestions?: string[]
  idempotencyKey?: string
  /** Layer 4 (SPEC §16); absent: BLOCK when blocking, else WARN. */
  severity?: Severity
  context?: string
  /** Operations the record blocks while open; absent or empty: every operation. */
  blockedOperations?: string[]
  sessionId?: string
  gapId?: string
  thread: Entry[]
  [unknown: string]: unknown
}

/** A record as outputs show it: with its issue number. */
export interface Clarification extends ClarificationRecord {
  issueNumber: number
}

/** The ledger file `issue-<n>.json`. */
export interface Ledger {
  issueNumber: number
  workflow?: string
  clarifications: ClarificationRecord[]
  [unknown: string]: unknown
}

export interface AgentStatus {
  status: AgentState | string
  issue: number | null
  lastActivity: string | null
  clarificationId: string | null
  waitingOn: string | null
  respondingTo: string | null
  [unknown: string]: unknown
}

/** `agent-status.json`, keyed by agent name. */
export type Statuses = Record<string, AgentStatus>

export type EventType =
  | 'clarification-requested' | 'clarification-answered' | 'clarification-stale'
  | 'clarification-resolved' | 'clarification-escalated' | 'clarification-abandoned'
  | 'clarification-routed' | 'clarification-route-failed'

export interface ClarifyEvent {
  type: EventType
  clarificationId: string
  issueNumber: number
  fromAgent: string
  toAgent: string
  topic: string
  blocking: boolean
  /** Epoch milliseconds. */
  timestamp: number
  actor: string
  reason?: string
}

export interface MonitorReport {
  stale: string[]
  retried: string[]
  escalated: { id: string; reason: string }[]
  stuck: string[]
  deadlocks: { cycle: string[]; agents: string[]; escalated: string }[]
  abandoned: string[]
  errors: FileError[]
}

/** A file a command could not use (read, parse or lock), and why; never skipped silently. */
export interface FileError { file: string; code: ErrorCode | string; message: string }

export interface Problem {
  file: string
  id: string | null
  message: string
  /** Present when the problem is not verify's own LEDGER_INCONSISTENT: SIGNATURE_INVALID. */
  code?: ErrorCode
}

export interface Stats {
  total: number
  byStatus: Record<Status, number>
  autoResolutionRate: number | null
  escalationRate: number | null
  averageRoundsToResolution: number | null
  timeToFirstAnswerMs: { count: number; median: number | null; p90: number | null }
  staleCount: number
  deadlockCount: number
  pairs: { from: string; to: string; total: number; resolved: number; escalated: number }[]
}

export interface WorkflowStep {
  id: string
  agent: string
  canClarify: string[]
  clarifyMaxRounds: number | null
  clarifySlaMinutes: number
  clarifyBlockingAllowed: boolean
}

export interface Workflow {
  steps: WorkflowStep[]
}

export interface Config {
  priority: string[]
  stuckSimilarity: number
  maxRetries: number
  maxTopicChars: number
  maxBodyChars: number
  lockTimeoutMs: number
  staleLockMs: number
  defaultWorkflow: string
  audit: { requireSignatures: boolean }
}

export interface ReadyIssue {
  issueNumber: number
  blocked: { id: string; waitingOn: string }[]
}

/** `{ok: true, …}` on success; the bindings throw a {@link ClarifyError} otherwise. */
export type Ok<T> = { ok: true } & T
export type Failure = { ok: false; error: { code: ErrorCode; message: string } } & Partial<MutationResult>
export type Envelope<T> = Ok<T> | Failure

/** The error the bindings throw: `code` is the stable SPEC §9 code. */
export interface ClarifyError extends Error {
  code: ErrorCode
  /** Present on MAX_ROUNDS_EXCEEDED: what was written anyway. */
  ledger?: Ledger
  clarification?: Clarification
  events?: ClarifyEvent[]
  statuses?: Statuses
}

// ── inputs of the pure functions ────────────────────────────────────────────────────────────
/** Workflow files by type: TOML text or a parsed {@link Workflow}. Default: the built-in ones. */
export type Workflows = Record<string, string | Workflow>

interface Common {
  /** Epoch milliseconds. */
  now: number
  /** `.agentx/config.toml` as TOML text or a parsed {@link Config}. */
  config?: string | Partial<Config>
  /** `agent-status.json` as an object or raw text. */
  statuses?: Statuses | string
}

/** The fields of a new clarification (pure `request` and the store's `ask`). */
interface AskFields {
  issueNumber: number | string
  from: string
  to: string
  topic: string
  question: string
  blocking?: boolean
  workflow?: string
  step?: string
  field?: string
  suggestions?: string[]
  idempotencyKey?: string
  /** Layer 4 (SPEC §16): given, severity sets `blocking`. */
  severity?: Severity
  context?: string
  blockedOperations?: string[]
  /** A UUID. */
  sessionId?: string
  gapId?: string
}
/** The fields of each operation on an existing clarification. */
interface AnswerFields { id: string; from: string; body: string }
interface FollowUpFields { id: string; from: string; question: string }
interface CloseFields { id: string; from?: string; message?: string }

export interface RequestInput extends Common, AskFields {
  /** The issue's ledger (object or raw file text); absent for a new issue. */
  ledger?: Ledger | string | null
  workflows?: Workflows
}

interface OnRecord extends Common {
  ledger: Ledger | string
}

export interface AnswerInput extends OnRecord, AnswerFields {}
export interface FollowUpInput extends OnRecord, FollowUpFields {}
export interface CloseInput extends OnRecord, CloseFields {}

export interface MutationResult {
  ledger: Ledger
  clarification: Clarification
  events: ClarifyEvent[]
  statuses: Statuses
  idempotent: boolean
}

export interface WorkspaceInput {
  ledgers?: Ledger[]
  /** Raw ledger files by name (`issue-<n>.json`). */
  files?: Record<string, string>
}

export interface MonitorInput extends WorkspaceInput, Common {}
export interface MonitorResult {
  ledgers: Ledger[]
  changed: number[]
  report: MonitorReport
  events: ClarifyEvent[]
  statuses: Statuses
}

/**
 * `problems` make verify fail (LEDGER_INCONSISTENT); `warnings` (same shape) list what another
 * tool's writer left (legacy records, entries appended without a hash, snapshots it did not
 * keep) for `agentx migrate` or the next write to upgrade, and never fail it (SPEC §20).
 */
export interface VerifyResult { problems: Problem[]; warnings: Problem[] }
export interface StatsInput extends WorkspaceInput { since?: number }
export interface StatsResult { stats: Stats }
export interface ListInput extends WorkspaceInput { issue?: number | string; status?: Status[]; all?: boolean }
export interface ListResult { clarifications: Clarification[] }
/** `includeEscalated`: an escalated blocking record holds its issue too (`waitingOn: "human"`). */
export interface ReadyInput extends WorkspaceInput { includeEscalated?: boolean }
export interface ShowInput extends WorkspaceInput { id?: string; issue?: number | string }
export interface ShowResult { clarification?: Clarification; ledger?: Ledger }
export interface ReadyResult { issues: ReadyIssue[] }
export interface SetStatusInput {
  statuses?: Statuses | string
  agent: string
  status: AgentState
  issue?: number | string | null
  now: number
}
export interface SetStatusResult { statuses: Statuses; agent: AgentStatus; warning: string | null }
export interface ParseInput { text: string; file?: string }
/** Who may perform an operation: the record's target, its requester (or the monitor), a human, anyone. */
export type Who = 'target' | 'requester' | 'requesterOrMonitor' | 'human' | 'anyone'
/** The state machine (SPEC §4): for each operation, the statuses that admit it and who may act. */
export type Transitions = Record<'answer' | 'followUp' | 'resolve' | 'abandon' | 'escalate', Partial<Record<Status, Who>>>

export type RenderInput =
  | { view: 'thread' | 'escalation'; clarification: Clarification }
  | { view: 'round'; clarification: Clarification; round?: number }
  | { view: 'list'; clarifications: Clarification[] }
  | { view: 'report'; report: MonitorReport }

// ── the file store (Node only): the CLI's operations and `--json` shapes ─────────────────────
export type StoreOperation =
  | 'init' | 'ask' | 'answer' | 'followUp' | 'resolve' | 'escalate' | 'abandon' | 'monitor'
  | 'verify' | 'list' | 'show' | 'stats' | 'hookStart' | 'hookFinish' | 'ready' | 'state'
  | 'migrate' | 'route' | 'resumePrompt' | 'routePrompt' | 'routeOutcome' | 'routeRunner'

/** A workspace's initial files, as the conformance vectors give them. */
export interface WorkspaceSetup {
  /** Workflow name → TOML text (default: the workflows `agentx init` writes). */
  workflows?: Record<string, string>
  /** `.agentx/config.toml` text. */
  config?: string
  /** Ledger file name → ledger object, or the file's exact text. */
  ledgers?: Record<string, unknown>
  statuses?: unknown
}

/** `now` defaults to the system clock; RFC 3339 text is accepted too. */
interface StoreCommon { now?: number | string }
export interface AskInput extends StoreCommon, AskFields {}
export interface StoreAnswerInput extends StoreCommon, AnswerFields {}
export interface StoreFollowUpInput extends StoreCommon, FollowUpFields {}
export interface StoreCloseInput extends StoreCommon, CloseFields {}

/**
 * The CLI's `--json` output of a mutation. `warnings`: what failed after the ledger was
 * written (the status file, the follow-up monitor); the command still succeeded (SPEC §20),
 * so retrying it would only duplicate the record.
 */
export interface StoreMutation {
  clarification: Clarification
  events: ClarifyEvent[]
  idempotent: boolean
  monitor: MonitorReport
  warnings: string[]
}
/** `warning`: the status table's; `warnings`: what failed after the status was written. */
export interface StoreHook { agent: AgentStatus; monitor: MonitorReport; events: ClarifyEvent[]; warning?: string; warnings: string[] }
/** `errors`: the ledgers that could not be read (the same as `monitor.errors`). */
export interface StoreReady { issues: ReadyIssue[]; monitor: MonitorReport; errors: FileError[] }
/** `errors`: the ledgers that could not be read (with `issue`, a bad ledger fails instead). */
export interface StoreList extends ListResult { errors: FileError[] }
export interface StoreStats extends StatsResult { errors: FileError[] }
/** `agentx migrate`: each ledger upgraded (or, with `dryRun`, that would be) and its changes. */
export interface StoreMigrate {
  dryRun: boolean
  migrated: { file: string; changes: { id: string | null; message: string }[] }[]
  /** Ledgers already in the form this crate writes. */
  unchanged: number
  /** Ledgers that could not be read, parsed or locked (left untouched). */
  errors: FileError[]
}

export interface StoreMonitor {
  report: MonitorReport
  events: ClarifyEvent[]
  /** `monitor({route: true})` (or `[clarify] route_on_retry`): the routing of what it retried. */
  routed?: StoreRouteAll
}

// ── routing (SPEC §14.2; docs/api.md "Routing") ────────────────────────────────────────────
export type RouteOutcome = 'answered' | 'asked-back' | 'escalated' | 'superseded'
/** What a routed agent's run said. */
export type RouteInterpretation =
  | { kind: 'answer'; answer: string }
  | { kind: 'asked-back'; questions: string[]; to?: string }
  | { kind: 'stopped'; blockerType: string; details?: string }
  | { kind: 'agent-error'; cause: string }
/** A run as the interpretation reads it (`routeOutcome`'s `output`, `route --interpret`). */
export interface RunOutput {
  exit?: number | null
  signal?: number | null
  timedOut?: boolean
  stdout?: string
  stderr?: string
  stdoutTruncated?: boolean
  stderrTruncated?: boolean
  spawnError?: string | null
  startedMs?: number
  endedMs?: number
}
export interface RouteRun {
  agent: string
  preset: 'claude' | 'codex' | 'gemini' | 'copilot' | 'cursor' | 'command'
  program: string
  exit: number | null
  signal: number | null
  timedOut: boolean
  startedMs: number
  endedMs: number
  durationMs: number
  interpretation: RouteInterpretation
  /** The run log (`.agentx/state/runs/<id>.r<round>.<n>.json`), null when it could not be written. */
  log: string | null
  logError?: string
}
/** `route({id})`; an agent error throws AGENT_ERROR carrying these fields. */
export interface StoreRoute {
  outcome: RouteOutcome
  clarification: Clarification
  /** The question the agent asked back (outcome `asked-back`). */
  askedBack?: Clarification
  events: ClarifyEvent[]
  run: RouteRun
  monitor: MonitorReport
}
/** `route({all: true, jobs?})`. */
export interface StoreRouteAll {
  routed: { id: string; outcome: RouteOutcome; log: string | null; askedBack?: string; error?: { code: ErrorCode; message: string } }[]
  skipped: { id: string; reason: string }[]
  errors: { id: string; code: ErrorCode; message: string }[]
  events: ClarifyEvent[]
  monitor: MonitorReport
}
export interface ResumeLine { label: string; value: string }
/** `resumePrompt({id})`: seed 002's `CLARIFICATION RESPONSE` text and its parts. */
export interface StoreResumePrompt {
  text: string
  resume: {
    kind: 'clarification-response' | 'blocker-resolved'
    title: string
    id: string
    issueNumber: number
    status: Status
    header: ResumeLine[]
    rounds?: { round: number; question: string; answer: string | null }[]
    outcome?: ResumeLine
    decision?: string
    waitsForHuman: boolean
    stateRestoration?: string
    instruction: string
  }
}
export interface StoreHook { agent: AgentStatus; monitor: MonitorReport; events: ClarifyEvent[]; warning?: string }
export interface StoreReady { issues: ReadyIssue[]; monitor: MonitorReport }
export interface StoreState { statuses: Statuses; warning?: string }
