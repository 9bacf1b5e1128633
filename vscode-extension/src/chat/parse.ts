// Decides what a `/clarify …` prompt asks for. Pure: text in, command out; anything it does not
// understand becomes `help` with the reason, never an exception.
//
//   (nothing)                          active clarifications
//   all                                every clarification, terminal ones too
//   #42 | 42 | issue 42                the threads of issue 42
//   show CLR-42-001 | CLR-42-001       one thread
//   stale | monitor                    run the monitor, show its report
//   answer CLR-42-001 [--value V…] [text]  answer as the record's target (typed value, §22)
//   resolve CLR-42-001 [--value V…] [text] resolve (requester on answered, human on escalated)
//   escalate CLR-42-001 [text]         escalate to a human
//   ask #42 engineer -> architect [--non-blocking] [--workflow W] [--step S] [--route] "Topic" Question…
//   route CLR-42-001                   route to the target (its runner, else the chat model)
//   ingest #42 engineer [--parent P]   act on the signal blocks of the selection or file
//   help

export interface AskCommand {
  kind: 'ask'
  issueNumber: number
  from: string
  to: string
  topic: string
  question: string
  blocking: boolean
  workflow?: string
  step?: string
  /** Route the new record to its target at once (`--route`). */
  route?: boolean
}

/** `ingest #42 engineer [--parent P]`: the agent's output is the selection or the file. */
export interface IngestCommand {
  kind: 'ingest'
  issue: number
  agent: string
  parent?: string
}

export type Command =
  | { kind: 'list'; all: boolean }
  | { kind: 'issue'; issue: number }
  | { kind: 'show'; id: string }
  | { kind: 'stale' }
  | { kind: 'answer'; id: string; message?: string; values?: string[] }
  | { kind: 'resolve'; id: string; message?: string; values?: string[] }
  | { kind: 'escalate'; id: string; message?: string }
  | AskCommand
  | { kind: 'route'; id: string }
  | IngestCommand
  | { kind: 'help'; problem?: string }

export const ASK_SYNTAX = 'ask #42 engineer -> architect "Topic" Question text'

const ISSUE = /^(?:#)?(0|[1-9][0-9]{0,9})$/
const ID_LIKE = /^clr-\S+$/i

/** Parses the text after `/clarify` (a leading `@agentx` or `/clarify` is tolerated). */
export function parseClarify(prompt: string): Command {
  // The chat view keeps `@agentx` in the input after an answer (the participant is sticky):
  // a second mention or a literal `/clarify` in the text must not change the meaning.
  const text = prompt.trim().replace(/^(?:@agentx\s+)*(?:\/clarify\b\s*)?/i, '').trim()
  if (text === '') return { kind: 'list', all: false }
  const [head, rest] = splitFirst(text)
  const word = head.toLowerCase()

  switch (word) {
    case 'help':
    case '?':
    case '-h':
    case '--help':
      return rest === '' ? { kind: 'help' } : unknown(text)
    case 'all':
    case 'list':
      if (rest === '') return { kind: 'list', all: word === 'all' }
      if (word === 'list' && rest.toLowerCase() === 'all') return { kind: 'list', all: true }
      if (word === 'list' && ISSUE.test(rest)) return issue(rest)
      return unknown(text)
    case 'stale':
    case 'monitor':
      return rest === '' ? { kind: 'stale' } : unknown(text)
    case 'show':
    case 'thread': {
      if (rest === '') return { kind: 'help', problem: '`show` needs a clarification id, e.g. `show CLR-42-001`.' }
      const [id, extra] = splitFirst(rest)
      if (ISSUE.test(id) && extra === '') return issue(id)
      return extra === '' ? { kind: 'show', id: normaliseId(id) } : unknown(text)
    }
    case 'issue':
      return ISSUE.test(rest) ? issue(rest) : { kind: 'help', problem: '`issue` needs an issue number, e.g. `#42`.' }
    case 'answer':
    case 'resolve':
    case 'escalate': {
      if (rest === '') {
        return { kind: 'help', problem: `\`${word}\` needs a clarification id, e.g. \`${word} CLR-42-001 text\`.` }
      }
      const [id, message] = splitFirst(rest)
      // `answer|resolve <id> --value V [--value W] [text]`: a typed value (docs/protocol.md §22).
      const typed = word !== 'escalate'
      const values: string[] = []
      let remaining = message
      for (let m = /^--value(?:=|\s+)(\S+)\s*/.exec(remaining); typed && m; m = /^--value(?:=|\s+)(\S+)\s*/.exec(remaining)) {
        values.push(m[1])
        remaining = remaining.slice(m[0].length)
      }
      const body = unquote(remaining.trim())
      if (word === 'answer' && body === '' && values.length === 0) {
        return { kind: 'help', problem: '`answer` needs the answer: text, or `--value V` for a record with options, e.g. `answer CLR-42-001 --value redis`.' }
      }
      return {
        kind: word,
        id: normaliseId(id),
        ...(body === '' ? {} : { message: body }),
        ...(values.length ? { values } : {}),
      } as Command
    }
    case 'ask':
      return parseAsk(rest)
    case 'route': {
      const [id, extra] = splitFirst(rest)
      if (id === '' || extra !== '') return { kind: 'help', problem: '`route` needs one clarification id, e.g. `route CLR-42-001`.' }
      return { kind: 'route', id: normaliseId(id) }
    }
    case 'ingest':
      return parseIngest(rest)
  }
  if (ISSUE.test(head) && rest === '') return issue(head)
  if (ID_LIKE.test(head) && rest === '') return { kind: 'show', id: normaliseId(head) }
  return unknown(text)
}

function issue(text: string): Command {
  return { kind: 'issue', issue: Number(text.replace(/^#/, '')) }
}

function unknown(text: string): Command {
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text
  return { kind: 'help', problem: `I did not understand \`${shown.replace(/`/g, "'")}\`.` }
}

/** `clr-42-001` → `CLR-42-001`; anything else is left for the core to judge (INVALID_ID). */
function normaliseId(id: string): string {
  return ID_LIKE.test(id) ? id.toUpperCase() : id
}

function splitFirst(text: string): [string, string] {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text.trim())
  return match ? [match[1], match[2].trim()] : ['', '']
}

const QUOTES: Record<string, string> = { '"': '"', "'": "'", '“': '”', '„': '“', '«': '»', '‘': '’' }

function unquote(text: string): string {
  const t = text.trim()
  const close = QUOTES[t[0]]
  if (close && t.length >= 2 && t.endsWith(close) && !t.slice(1, -1).includes(close)) return t.slice(1, -1).trim()
  return t
}

function askProblem(problem: string): Command {
  return { kind: 'help', problem: `${problem} Write it as \`${ASK_SYNTAX}\`.` }
}

function parseAsk(text: string): Command {
  // #42 engineer -> architect
  const head = /^#?(\S+)\s+([^\s]+?)\s*(?:->|→|=>)\s*([^\s"“„«‘']+)\s*([\s\S]*)$/.exec(text)
  if (!head) return askProblem('`ask` needs an issue, the asking agent and the agent asked.')
  const [, issueText, from, to, afterAgents] = head
  if (!ISSUE.test(issueText)) return askProblem(`\`${issueText.replace(/`/g, "'")}\` is not an issue number.`)
  let rest = afterAgents
  let blocking = true
  let workflow: string | undefined
  let step: string | undefined
  let route = false
  for (;;) {
    const flag = /^(--non-blocking|--blocking|--route|--workflow|--step)(?:\s+|$)([\s\S]*)$/.exec(rest)
    if (!flag) break
    rest = flag[2]
    if (flag[1] === '--non-blocking') blocking = false
    else if (flag[1] === '--blocking') blocking = true
    else if (flag[1] === '--route') route = true
    else {
      const [value, after] = splitFirst(rest)
      if (value === '') return askProblem(`\`${flag[1]}\` needs a value.`)
      if (flag[1] === '--workflow') workflow = value
      else step = value
      rest = after
    }
  }
  const close = QUOTES[rest[0]]
  if (!close) return askProblem('Put the topic in quotes.')
  const end = rest.indexOf(close, 1)
  if (end < 0) return askProblem('The topic has no closing quote.')
  const topic = rest.slice(1, end).trim()
  let question = rest.slice(end + 1).trim()
  // `--route` may also close the line: `… "Topic" Question? --route`.
  const trailing = /\s--route$/.exec(question)
  if (trailing) {
    route = true
    question = question.slice(0, trailing.index).trim()
  }
  if (question === '') return askProblem('The question is missing after the topic.')
  return {
    kind: 'ask',
    issueNumber: Number(issueText),
    from,
    to,
    topic,
    question,
    blocking,
    ...(workflow ? { workflow } : {}),
    ...(step ? { step } : {}),
    ...(route ? { route } : {}),
  }
}

const INGEST_SYNTAX = 'ingest #42 engineer [--parent agent-x]'

function parseIngest(text: string): Command {
  const m = /^#?(\S+)\s+(\S+)(?:\s+--parent\s+(\S+))?$/.exec(text.trim())
  if (!m || !ISSUE.test(m[1])) {
    return { kind: 'help', problem: `\`ingest\` needs the issue and the agent whose output it is: \`${INGEST_SYNTAX}\` (the output is the selection, else the open file).` }
  }
  return { kind: 'ingest', issue: Number(m[1]), agent: m[2], ...(m[3] ? { parent: m[3] } : {}) }
}

/** The help text (markdown), with a line naming what went wrong when there is one. */
export function helpMarkdown(problem?: string, readOnly = false): string {
  const lines = [
    ...(problem ? [`${problem}`, ''] : []),
    '**`@agentx /clarify`**: clarifications between agents, from the workspace ledgers.',
    '',
    '| Command | What it does |',
    '|---|---|',
    '| `/clarify` | active clarifications (`/clarify all` includes resolved and abandoned) |',
    '| `/clarify #42` | every thread of issue 42 |',
    '| `/clarify show CLR-42-001` | one thread, round by round |',
    '| `/clarify stale` | run the monitor (stale, stuck, deadlocked, abandoned) and show its report |',
    '| `/clarify answer CLR-42-001 [--value V] [text]` | answer a pending question as its target; `--value` picks an option (repeat it for several) |',
    '| `/clarify resolve CLR-42-001 [--value V] [text]` | resolve: the requester on an answered record, a human on an escalated one; `--value` decides by option |',
    '| `/clarify escalate CLR-42-001 [text]` | escalate to a human, with the text as the reason |',
    `| \`/clarify ${ASK_SYNTAX}\` | ask a clarification (options after the agents: \`--non-blocking\`, \`--workflow W\`, \`--step S\`, \`--route\`) |`,
    '| `/clarify route CLR-42-001` | route a pending question to its target: its runner in `.agentx/config.toml`, else the chat model with its persona |',
    `| \`/clarify ${INGEST_SYNTAX}\` | act on the signal blocks (\`[CLARIFICATION_NEEDED]\`, \`[COMPLETION_REPORT]\`…) of the selection or the open file |`,
    '| `/clarify help` | this text |',
    '',
    'The workflow decides who may ask whom (`can_clarify` in `.agentx/workflows/*.toml`); a refused request writes nothing.',
  ]
  if (readOnly) lines.push('', '_Read-only: the native addon did not load, so editing (answer, resolve, escalate, ask) is not available here._')
  return lines.join('\n')
}
