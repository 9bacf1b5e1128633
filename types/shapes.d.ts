// The output shapes of types/types.d.ts, kept by hand (the inputs, the operation names and the
// error codes are generated from the Rust types: tests/types.rs).

export type Status = 'pending' | 'stale' | 'answered' | 'escalated' | 'resolved' | 'abandoned'
export type EntryType = 'question' | 'answer' | 'stale' | 'retry' | 'escalation' | 'resolution' | 'abandonment' | 'reopen' | 'claim' | 'handoff' | 'lapse' | 'approval' | 'assign'
export type Severity = 'BLOCK' | 'WARN'
export type AgentState = 'idle' | 'working' | 'clarifying' | 'blocked-clarification' | 'done' | 'stuck'

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
  /** An answer's or resolution's typed value (docs/protocol.md §22), covered by the hash. */
  value?: AnswerValue
  [unknown: string]: unknown
}

/** The answer kinds of docs/protocol.md §22; `text` (the default) is stored as no `answerKind`. */
export type AnswerKind = 'text' | 'confirm' | 'choice' | 'multi_choice'
/** `true`/`false` for confirm, an option value for choice, option values (in option order) for multi_choice. */
export type AnswerValue = boolean | string | string[]
/** A request's answer kind fields (all optional). */
export interface AnswerKindFields {
  answerKind?: AnswerKind
  /** 2–10, for choice and multi_choice only. */
  options?: AnswerOption[]
  /** Choice kinds: accept free text outside the options (default true). */
  allowOther?: boolean
  /** multi_choice: default 1. */
  minSelect?: number
  /** multi_choice: default the number of options. */
  maxSelect?: number
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
  /** Layer 4 (docs/protocol.md §16); absent: BLOCK when blocking, else WARN. */
  severity?: Severity
  context?: string
  /** Operations the record blocks while open; absent or empty: every operation. */
  blockedOperations?: string[]
  sessionId?: string
  gapId?: string
  /** The question this one was asked back from (docs/protocol.md §30). */
  askedBack?: string
  answerKind?: Exclude<AnswerKind, 'text'>
  options?: AnswerOption[]
  allowOther?: boolean
  minSelect?: number
  maxSelect?: number
  /** SHA-256 of issue, target, field and the normalised question (docs/protocol.md §22). */
  fingerprint?: string
  /** Re-asks answered from this record; `reuses`: the latest 20, who and when. */
  reuseCount?: number
  reuses?: { from: string; at: string }[]
  thread: Entry[]
  [unknown: string]: unknown
}

/** A record as outputs show it: with its issue number. */
export interface Clarification extends ClarificationRecord {
  issueNumber: number
  /** An escalated record assigned to people (docs/protocol.md §37): whom, now (outputs only). */
  assigned?: string[]
  /** Who holds an escalated record — a claim or a handoff — and until when (outputs only). */
  claimedBy?: { person: string; since: string; until?: string }
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
  /** When the agent last reported (hook/state); absent until it does (docs/protocol.md §28). */
  reportedAt?: string
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
  | 'clarification-routed' | 'clarification-route-failed' | 'clarification-reused'

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
  /** Delegations the monitor timed out (docs/protocol.md §18); absent when none. */
  timedOut?: string[]
  /** Claims the monitor ended (docs/protocol.md §37); absent when none. */
  lapsed?: string[]
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
  /** Re-asks answered from an existing record instead of a new one (docs/protocol.md §22). */
  reasksSuppressed: number
  /** Seed 003's delegation metrics and gap scores (docs/protocol.md §18); absent without delegations. */
  delegations?: DelegationMetrics
  /** What the hub's memory saved (docs/protocol.md §36); absent when nothing was re-asked or reused. */
  memory?: {
    byAgent: { agent: string; reasksSuppressed: number; decisionsReused: number }[]
    medianDecisionMs: number | null
    agentMinutesSaved: number | null
  }
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
  /** `[clarify] related` (docs/protocol.md §36). */
  related: 'suggest' | 'off'
  /** `[clarify] related_min_score`, 0–100 (default 60). */
  relatedMinScore: number
}

export interface ReadyIssue {
  issueNumber: number
  blocked: { id: string; waitingOn: string }[]
}

/** `{ok: true, …}` on success; the bindings throw a {@link ClarifyError} otherwise. */
export type Ok<T> = { ok: true } & T
export type Failure = { ok: false; error: { code: ErrorCode; message: string } } & Partial<MutationResult>
export type Envelope<T> = Ok<T> | Failure

/** The error the bindings throw: `code` is the stable docs/protocol.md §9 code. */
export interface ClarifyError extends Error {
  code: ErrorCode
  /** Present on MAX_ROUNDS_EXCEEDED: what was written anyway. */
  ledger?: Ledger
  clarification?: Clarification
  events?: ClarifyEvent[]
  statuses?: Statuses
}

// ── results of the pure functions ───────────────────────────────────────────────────────────
/** Workflow files by type: TOML text or a parsed {@link Workflow}. Default: the built-in ones. */
export type Workflows = Record<string, string | Workflow>

export interface MutationResult {
  ledger: Ledger
  clarification: Clarification
  events: ClarifyEvent[]
  statuses: Statuses
  idempotent: boolean
  /** A re-ask answered from the record that already held the question (docs/protocol.md §22). */
  reused?: true
}

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
 * keep) for `agentx migrate` or the next write to upgrade, and never fail it (docs/protocol.md §20).
 */
export interface VerifyResult { problems: Problem[]; warnings: Problem[] }
export interface StatsResult { stats: Stats }
export interface ListResult { clarifications: Clarification[] }
/** A person's decision on a record (docs/protocol.md §23): the last resolution, when `human`'s. */
export interface Decision {
  /** The person (`alice`, `operator of engineer`); `human` when the surface named nobody. */
  by: string
  /** The surface (`web`, `elicitation`, `github`, …); `null` when the entry names none. */
  via: string | null
  value: AnswerValue | null
  /** The chosen options' labels, when there is a value. */
  label?: string
  text: string
  at: string
}
export interface ShowResult { clarification?: Clarification; ledger?: Ledger; decision?: Decision }
export interface ReadyResult { issues: ReadyIssue[] }
export interface SetStatusResult { statuses: Statuses; agent: AgentStatus; warning: string | null }
/** Who may perform an operation: the record's target, its requester (or the monitor), a human, anyone. */
export type Who = 'target' | 'requester' | 'requesterOrMonitor' | 'human' | 'anyone'
/** The state machine (docs/protocol.md §4): for each operation, the statuses that admit it and who may act. */
export type Transitions = Record<'answer' | 'followUp' | 'resolve' | 'abandon' | 'escalate', Partial<Record<Status, Who>>>

// ── the file store (Node only): the CLI's operations and `--json` shapes ─────────────────────

/** A workspace's initial files, as the conformance vectors give them. */
export interface WorkspaceSetup {
  /** Workflow name → TOML text (default: the workflows `agentx init` writes). */
  workflows?: Record<string, string>
  /** `.agentx/config.toml` text. */
  config?: string
  /** Ledger file name → ledger object, or the file's exact text. */
  ledgers?: Record<string, unknown>
  statuses?: unknown
  /** Agent → capability manifest TOML (`.agentx/agents/<agent>.toml`). */
  agents?: Record<string, string>
  /** Delegation ledger file name (`issue-<n>.json`) → ledger object, or the file's exact text. */
  delegations?: Record<string, unknown>
  /** Key file name (`<agent>.pub`, `<agent>.key`) → its text (`.agentx/keys/`, docs/protocol.md §16). */
  keys?: Record<string, string>
}

/**
 * The CLI's `--json` output of a mutation. `warnings`: what failed after the ledger was
 * written (the status file, the follow-up monitor); the command still succeeded (docs/protocol.md §20),
 * so retrying it would only duplicate the record.
 */
export interface StoreMutation {
  clarification: Clarification
  events: ClarifyEvent[]
  idempotent: boolean
  /** A re-ask answered from the record that already held the question (docs/protocol.md §22). */
  reused?: true
  monitor: MonitorReport
  warnings: string[]
}
/** `handoff` without an id (docs/protocol.md §37): every escalated record `as` held, now `to`'s; `warnings`: what failed after the writes. */
export interface StoreHandoffAll { handedOff: string[]; to: string; warnings: string[] }
/** `warning`: the status table's; `warnings`: what failed after the status was written. */
export interface StoreHook { agent: AgentStatus; monitor: MonitorReport; events: ClarifyEvent[]; warning?: string; warnings: string[] }
/** `errors`: the ledgers that could not be read (the same as `monitor.errors`). */
export interface StoreReady { issues: ReadyIssue[]; monitor: MonitorReport; errors: FileError[] }
/** `ready` with `monitor: false`: the queue as the ledgers stand (nothing run, written or locked). */
export interface StoreReadyView { issues: ReadyIssue[]; errors: FileError[] }
/** What the store's change feed reports (docs/protocol.md §21): a monotone revision, the issues whose ledgers changed, whether the agent statuses did. */
export interface StoreChanged { revision: number; issues: number[]; statuses: boolean }
/** `errors`: the ledgers that could not be read (with `issue`, a bad ledger fails instead). */
export interface StoreList extends ListResult { errors: FileError[] }
/** A resolved record's decision as a search hit shows it (docs/protocol.md §36). */
export interface HitDecision {
  /** A person's `by` (`human` when unnamed), or the requester who accepted the last answer. */
  by: string
  value: AnswerValue | null
  text: string
  at: string
  /** The resolution entry's hash (what `ask --reuse` cites). */
  hash?: string
}
/** One record a search (or an ask's `related`) found, best first. */
export interface SearchHit {
  id: string
  issue: number
  topic: string
  question: string
  status: Status
  field?: string
  /** Words in common, 0–100. */
  score: number
  /** Of the query's field: ranked before every other. */
  sameField: boolean
  decision?: HitDecision
  supersededBy?: string
}
export interface StoreSearch { hits: SearchHit[]; errors: FileError[] }
/** One person's row of `stats` with `people: true` (docs/protocol.md §37). */
export interface PersonStats {
  name: string
  /** Resolutions they wrote (since `since`). */
  decisions: number
  /** Claims they wrote (since `since`). */
  claims: number
  /** Handoffs they gave (since `since`). */
  handoffs: number
  /** Nearest-rank median, latest escalation before each decision to the decision; null without one. */
  medianDecisionMs: number | null
  /** Escalated records assigned to them now. */
  openAssigned: number
  /** Escalated records they hold now (claimed, or handed to them). */
  holding: number
}
export interface StoreStats extends StatsResult {
  /** Present only with `people: true`: every person, in name order. */
  people?: PersonStats[]
  errors: FileError[]
}
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

// ── routing (docs/protocol.md §14.2; docs/api.md "Routing") ────────────────────────────────────────────
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
  preset: 'claude' | 'codex' | 'gemini' | 'copilot' | 'cursor' | 'command' | 'a2a'
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
/** The `run` of a routing through the shell's chat model (`routeChatReply`). */
export interface ChatRouteRun {
  agent: string
  via: 'chat-model'
  model: string | null
  interpretation: RouteInterpretation
}
/** `routeChatPrompt({id, persona?})`: the prompt for the target (no runner needed, nothing written). */
export interface ChatPrompt {
  id: string
  issueNumber: number
  from: string
  to: string
  /** Give it back to `routeChatReply`: a reply for an older round is `superseded`. */
  round: number
  /** `.github/agents/<to>.agent.md` when it was read; null when absent or `persona` was given. */
  personaFile: string | null
  prompt: string
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
  warnings: string[]
}
/** `routeChatReply`: the same document, its `run` from the chat model. */
export interface StoreChatRoute extends Omit<StoreRoute, 'run'> {
  run: ChatRouteRun
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

// ── subagent signals and delegation (docs/protocol.md §17–§18) ──────────────────────────────────────────
export type BlockName = 'CLARIFICATION_NEEDED' | 'STOP_WORK' | 'DELEGATE_WORK' | 'COMPLETION_REPORT'
/** Something wrong at a 1-based line of the parsed output. */
export interface SignalProblem { line: number; message: string }
interface SignalCommon { agentId: string | null; timestamp: string | null }
/** A well-formed block, typed (seed 002's fields, camelCase). */
export type Signal =
  | (SignalCommon & { block: 'CLARIFICATION_NEEDED'; blockedAt: string | null; questions: string[]; currentState: string | null; to: string | null })
  | (SignalCommon & { block: 'STOP_WORK'; blockerType: string; details: string; stateSnapshot: string | null; blockedWork: string | null; resumeRequirements: string | null })
  | (SignalCommon & { block: 'DELEGATE_WORK'; newTaskDescription: string; capability: string | null; to: string | null; independence: 'can_proceed_parallel' | 'blocks_current_work' | null; coordination: string | null })
  | (SignalCommon & { block: 'COMPLETION_REPORT'; status: 'success' | 'partial' | 'failed'; deliverables: string[]; metricsAchieved: string | null; recommendations: string[] })
export interface ParsedBlock {
  block: BlockName
  startLine: number
  /** null: not closed before the end of the output. */
  endLine: number | null
  /** Closed, and no syntax problem. */
  wellFormed: boolean
  /** Every `key:` in source order, unknown keys included: text, or a list. */
  fields: Record<string, string | string[]>
  /** Syntax problems, then missing or bad fields: a block with any is never acted on. */
  problems: SignalProblem[]
  /** The source lines, line ends as LF (what the idempotency key hashes). */
  text: string
  signal: Signal | null
}
export interface SignalsParseResult { blocks: ParsedBlock[]; problems: SignalProblem[] }
export interface ExtractJsonResult { extracted: { value: unknown; strategy: 'plain' | 'json-fence' | 'fence' | 'after-chatter'; line: number } | null }

export type DelegationStatus =
  | 'REQUESTED' | 'ACCEPTED' | 'COMPLETED' | 'REJECTED_CAPABILITY' | 'REJECTED_CONTEXT' | 'TIMEOUT' | 'FAILED_EXECUTION'
/** Seed 003 §6.4's response envelope. */
export interface DelegationResponse {
  artifactPath: string | null
  summary: string
  metrics: Record<string, unknown>
  followUpRecommended: string[]
  unresolved: string[]
}
export interface DelegationEntry {
  status: DelegationStatus
  from: string
  body: string
  timestamp: string
  response?: DelegationResponse
  hash?: string
  [extra: string]: unknown
}
/** A delegation envelope (seed 003 §6.2) and its hash-chained thread; outputs add `issueNumber`. */
export interface Delegation {
  issueNumber?: number
  id: string
  from: string
  to: string
  capability: string | null
  objective: string
  contextSlice: Record<string, unknown>
  outputContract: Record<string, unknown>
  timeoutMinutes: number
  status: DelegationStatus
  createdAt: string | null
  acceptedAt: string | null
  /** acceptedAt + timeoutMinutes: then the monitor times it out. */
  deadline: string | null
  finishedAt: string | null
  response: DelegationResponse | null
  signalKey?: string
  thread: DelegationEntry[]
  [extra: string]: unknown
}
export interface CompletionReportRecord {
  agent: string
  status: string
  deliverables: string[]
  metricsAchieved: string | null
  recommendations: string[]
  timestamp: string
  signalKey?: string
}
/** `.agentx/state/delegations/issue-<n>.json`. */
export interface DelegationLedger { issueNumber: number; delegations: Delegation[]; reports: CompletionReportRecord[] }
export interface DelegationEvent {
  type: 'delegation-requested' | 'delegation-accepted' | 'delegation-completed' | 'delegation-rejected' | 'delegation-timeout' | 'delegation-failed'
  delegationId: string
  issueNumber: number
  fromAgent: string
  toAgent: string
  capability: string | null
  status: DelegationStatus
  timestamp: number
  actor: string
  reason?: string
}

/** What one block of an ingested output did. */
export interface BlockOutcome {
  block: BlockName
  startLine: number
  endLine: number | null
  /** The idempotency key of a well-formed block. */
  key: string | null
  action: 'request' | 'escalate' | 'delegate' | 'complete' | 'fail' | 'report' | 'skip' | 'invalid' | 'refused'
  outcome: 'created' | 'applied' | 'skipped' | 'invalid' | 'refused'
  /** The record (`CLR-…`) or delegation (`DLG-…`) concerned. */
  id: string | null
  status: string | null
  reason?: string
  problems?: SignalProblem[]
  error?: { code: ErrorCode | string; message: string }
  warnings: string[]
}
export interface IngestReport {
  issueNumber: number
  agent: string
  parent: string | null
  blocks: BlockOutcome[]
  /** Closing tags that close nothing. */
  problems: SignalProblem[]
  events: ClarifyEvent[]
  delegationEvents: DelegationEvent[]
}
export interface SignalsIngestResult extends IngestReport { ledger: Ledger | null; delegations: DelegationLedger | null }

/** A resume text (seed 002) in parts and as `text`. */
export interface ResumeText {
  kind: 'clarification-response' | 'blocker-resolved' | 'delegation-approved' | 'delegation-rejected' | 'delegation-failed'
  title: string
  id: string
  issueNumber: number
  status: string
  header: { label: string; value: string }[]
  rounds?: { round: number; question: string; answer: string | null }[]
  outcome?: { label: string; value: string }
  decision?: string
  waitsForHuman: boolean
  stateRestoration?: string
  instruction: string
}
export interface ResumePromptResult { resume: ResumeText; text: string }

export interface CapabilityGap {
  capability: string
  delegations: number
  rejectedCapability: number
  rejectionRate: number
  latencyPenaltyRatio: number
  clarificationCyclesRatio: number
  /** 0.4·rejection + 0.3·latency + 0.3·cycles, each clamped to [0, 1]; ≥ 0.55 is a gap. */
  score: number
}
/** Seed 003 §8.3's suggestion record (its snake_case keys). */
export interface GapSuggestion {
  suggestion_id: string
  proposed_agent: string
  capabilities: string[]
  justification: { rejection_rate: number; latency_penalty_ratio: number; clarification_cycles_ratio: number; score: number }
  impact_expectation: string
  rfc_reference: string | null
  submitted_by: string
}
export interface DelegationMetrics {
  total: number
  byStatus: Record<DelegationStatus, number>
  delegationSuccessRate: number | null
  avgRoundTripSec: number | null
  clarificationReworkRatio: number | null
  unresolvedCarryover: number | null
  unresolvedItems: number
  reports: number
  gaps: CapabilityGap[]
  suggestions: GapSuggestion[]
}
export interface DelegationMetricsResult { delegations: DelegationMetrics }

/** The `--json` output of a delegation command. */
export interface StoreDelegation {
  delegation: Delegation
  delegationEvents: DelegationEvent[]
  events: ClarifyEvent[]
  idempotent: boolean
  monitor: MonitorReport
}
/** The `--json` output of `signals ingest`. */
export interface StoreIngest extends IngestReport { monitor: MonitorReport; warnings: string[] }

// ---- Pure `verify` and `audit` (docs/protocol.md §16): a ledger checked offline against keys given here.

// ── Layer 4 on the command layer (docs/protocol.md §16): check, gate, audit, keys ─────────────────────────

/** A gap of a Layer 4 plan: a field the agent refuses to guess. */
export interface PlanGap {
  id: string
  field: string
  severity: Severity
  question: string
  context?: string | null
  suggestions?: string[]
  blocked_operations?: string[]
  /** Who answers (default: the check's `to`). */
  to?: string | null
  /** The answer kind the gap asks for (docs/protocol.md §22; docs/layer4.md); absent: a text question with `suggestions` as quick picks. */
  answer_kind?: AnswerKind
  options?: AnswerOption[]
  allow_other?: boolean
  min_select?: number
  max_select?: number
}
/** Layer 4's plan: `check`'s input. */
export interface Plan {
  /** A UUID; absent: a new session (the file store draws one; a MemoryWorkspace needs `newSessionId`). */
  session_id?: string
  agent_id?: string
  /** At most 100, ids unique. */
  gaps: PlanGap[]
}
/** A gap as the response shows it: every key written, then its record and where it stands. */
export interface CheckedGap extends Required<PlanGap> {
  clarificationId: string | null
  status: Status | null
  answer: string | null
}
/** Layer 4's response (`check`), with the command's events, monitor report and warnings. */
export interface CheckResponse {
  protocol_version: '1.0.0'
  session_id: string
  agent_id: string
  timestamp: string
  status: 'needs_clarification' | 'ready_to_proceed'
  gaps: CheckedGap[]
  /** Resolved gaps. */
  accepted_gaps: number
  /** Open BLOCK gaps. */
  blocking_gaps: number
  /** Open WARN gaps. */
  warning_gaps: number
}
export interface StoreCheck extends CheckResponse {
  events: ClarifyEvent[]
  /** True when every gap was already asked (nothing written). */
  idempotent: boolean
  monitor: MonitorReport
  warnings: string[]
}
/** An open BLOCK record that keeps a gate closed. */
export interface OpenGap {
  clarificationId: string
  gapId: string | null
  sessionId: string | null
  field: string | null
  topic: string
  severity: Severity
  from: string
  to: string
  status: Status
  /** Empty: the record blocks every operation. */
  blockedOperations: string[]
}
/** `gate`: open when `open` is empty; closed, the call fails with GATE_CLOSED carrying these keys. */
export interface GateResult {
  issueNumber: number
  operation: string | null
  open: OpenGap[]
}
/** One ask/answer round of an audit (Layer 4's spelling). */
export interface AuditRound {
  round: number
  clarificationId: string
  ask_timestamp: string
  ask_signature: string | null
  gap: { id: string; field: string | null; question: string }
  answer_timestamp: string | null
  answer: string | null
  answer_signature: string | null
  resolved: boolean
  /** Who answered the round, and what; null when nobody did. */
  answered: AuditStep | null
  /** Who decided the round (the resolution): the person, the option, the note; null when not resolved. */
  decided: AuditStep | null
}
/** One answer or decision of an audited round. */
export interface AuditStep {
  from: string
  /** The person behind a `human` entry. */
  by: string | null
  /** The door the person came in by (`web`, `elicitation`, `github`…). */
  via: string | null
  value: AnswerValue | null
  /** What the value stands for (the options' labels, yes/no). */
  label: string | null
  /** What was written beside the value, or the answer itself without one. */
  note: string | null
  timestamp: string
  signer: string | null
  signature: string | null
  ref: string | null
}
/** The pure `audit`'s result: the same record as the store's `audit`. */
export type AuditResult = AuditRecord
export interface AuditProblem { code: ErrorCode; id: string | null; message: string }
/** Layer 4's audit record; not verified, the call fails (SIGNATURE_INVALID or LEDGER_INCONSISTENT) carrying these keys. */
export interface AuditRecord {
  session_id: string | null
  chain: AuditRound[]
  total_rounds: number
  all_resolved: boolean
  /** The last entry's signature (one record only). */
  chain_signature: string | null
  verified: boolean
  problems: AuditProblem[]
}
/** One agent's keys (`keysList`); private keys are never shown. */
export interface KeyInfo {
  agent: string
  /** `ed25519:<base64>`; null when only the private key is there. */
  publicKey: string | null
  /** The workspace holds the private key: this agent's writes here are signed. */
  private: boolean
  /** The `.pub` is not the private key's public half (a replaced `.pub`). */
  mismatch: boolean
}
