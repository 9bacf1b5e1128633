// Example scenarios: conformance vectors from tests/vectors/ (served under vectors/), replayed
// through the same workspace the page uses. A vector's `setup` becomes the scenario's start
// and its cases become the upcoming steps ("Next step" plays them one by one, each at the
// time the vector gives). Read-only cases (show, list, verify, file, stats) are checks, not
// steps, and are left out.
import { MUTATIONS, toMs } from './engine.js'

export const EXAMPLES = [
  { id: 'happy-path', file: 'playground/happy_path.json', title: 'Happy path',
    blurb: 'A blocking question, an answer, one follow-up round, and the requester resolves.' },
  { id: 'max-rounds', file: 'core/follow_up_max_rounds.json', title: 'Max rounds',
    blurb: 'Three rounds are allowed; the fourth follow-up is refused with MAX_ROUNDS_EXCEEDED and escalated by agent-x.' },
  { id: 'stale-twice', file: 'monitor/stale_retry_escalate.json', title: 'Stale twice',
    blurb: 'Nobody answers: the SLA expires, the monitor retries once, the SLA expires again and it escalates.' },
  { id: 'three-agent-deadlock', file: 'playground/three_agent_deadlock.json', title: 'Three-agent deadlock',
    blurb: 'Engineer, product manager and architect wait on each other. Advance the clock: the monitor breaks the cycle.' },
  { id: 'stuck-repetition', file: 'monitor/stuck_repeated_questions.json', title: 'Stuck repetition',
    blurb: 'A follow-up that repeats the previous question (word-set similarity above 0.8) is escalated as circular.' },
  { id: 'deadlock-on-request', file: 'monitor/deadlock_three_agents.json', title: 'Deadlock closing on a request',
    blurb: 'The request that closes a cycle is followed by a monitor run that breaks it at once.' },
  { id: 'direction-flip', file: 'monitor/stuck_direction_flip.json', title: 'Direction flip',
    blurb: '"A asks B what B asked A": the later of two opposite records with similar topics is escalated.' },
  { id: 'abandoned', file: 'monitor/abandoned_after_state_change.json', title: 'Abandoned requester',
    blurb: 'A requester that is done, or moved to another issue, abandons its open questions at the next monitor run.' },
  { id: 'retries-two', file: 'monitor/stale_max_retries_two.json', title: 'Two retries (config)',
    blurb: 'With max_retries = 2 in config.toml a silent record is retried twice before it escalates.' },
  { id: 'scope', file: 'core/scope_check_order.json', title: 'Scope refusals',
    blurb: 'Who may ask whom: every scope check in its order, with the error each one gives.' },
  { id: 'events', file: 'core/events_lifecycle.json', title: 'Every event',
    blurb: 'Each operation and the events it emits: requested, answered, resolved, escalated, abandoned.' },
  { id: 'team-gap', file: 'delegation/gap_score_seed003.json', title: 'Team gap',
    blurb: 'Seed 003 §8.3: one capability is rejected, slow and clarified over and over; the Team view scores it 0.62 ≥ 0.55 and suggests an agent.' },
]

const READ_ONLY = new Set(['show', 'list', 'verify', 'file', 'stats'])

/** A vector → a fresh scenario whose cases are queued as upcoming steps. */
export function scenarioFromVector(example, vector) {
  const queue = []
  for (const kase of vector.cases ?? []) {
    const now = toMs(kase.now)
    const name = kase.name
    const args = kase.args ?? {}
    if (MUTATIONS.includes(kase.op) || kase.op === 'monitor' || kase.op === 'hook') {
      queue.push({ op: kase.op, args, now, name })
    } else if (kase.op === 'ready') {
      queue.push({ op: 'monitor', args: {}, now, name })
    } else if (kase.op === 'state' && args.agent !== undefined && args.status !== undefined) {
      queue.push({ op: 'state', args, now, name })
    } else if (!READ_ONLY.has(kase.op) && kase.op !== 'state') {
      queue.push({ op: kase.op, args, now, name })
    }
  }
  const first = vector.cases?.length ? toMs(vector.cases[0].now) : Date.parse('2026-11-22T10:00:00.000Z')
  return {
    v: 1,
    title: example.title,
    example: example.id,
    description: vector.description ?? '',
    setup: vector.setup ?? {},
    start: first,
    steps: [],
    queue,
  }
}

export async function loadExample(id, base = 'vectors/') {
  const example = EXAMPLES.find((e) => e.id === id)
  if (!example) throw new Error(`no example ${id}`)
  const res = await fetch(base + example.file)
  if (!res.ok) throw new Error(`cannot load ${example.file}: HTTP ${res.status}`)
  return scenarioFromVector(example, await res.json())
}
