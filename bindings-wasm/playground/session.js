// The page's state: the scenario ({setup, steps, queue, start}), its replay through the
// workspace (engine.js: one files snapshot per step), what the page shows (`ui`), and the
// saved copy in the URL hash and localStorage. Every module reads and changes it through `S`;
// `S.render` (set by app.js) redraws the page after a change.
import { replay, play, parseFiles, parseStatuses, ledgerTexts, statusText } from './engine.js'
import { orderAgents } from './graph.js'
import { encode, decode, hashState, saveLocal, loadLocal } from './state.js'
import { flash, esc } from './dom.js'

export const S = {
  c: null, // the core API (the wasm package)
  DEFAULTS: null, // {workflows: {type: text}, config: text}
  scenario: null,
  rt: null, // replay(scenario): {workspace, initial, results}
  ui: {
    step: null, // index of the step whose state is shown; null = the latest
    issue: null, // issue number shown, or 'all'
    selectedId: null, // the record the views focus on
    view: 'graph',
    drafts: null, // the workflow editor's texts: {type: text, '@config': text}
    activeFile: 'feature',
    ledgerFile: null,
  },
  render: () => {},
}

export const OP_LABEL = { request: 'ask', answer: 'answer', followUp: 'follow-up', resolve: 'resolve', escalate: 'escalate', abandon: 'abandon', monitor: 'monitor', hook: 'hook', state: 'state', workflows: 'workflows' }

// The statuses that admit each operation: the core's state machine, asked once after init.
let transitions
export const statusesFor = (op) => Object.keys((transitions ??= S.c.transitions().transitions)[op])

export function emptyScenario() {
  const hour = 3600000
  return { v: 1, title: 'Your scenario', example: null, description: '', setup: {}, start: Math.floor(Date.now() / hour) * hour, steps: [], queue: [] }
}

export const clockNow = () => S.scenario.steps.reduce((t, s) => Math.max(t, s.now), S.scenario.start)
export const latest = () => (S.rt.results.length ? S.rt.results[S.rt.results.length - 1].snapshot : S.rt.initial)
export const shownIndex = () => (S.ui.step === null ? S.rt.results.length - 1 : S.ui.step)
export const shownSnapshot = () => (shownIndex() < 0 ? S.rt.initial : S.rt.results[shownIndex()].snapshot)
/** The time of the state shown: the clock, the scenario's start, or the step's time. */
export const shownNow = () => (S.ui.step === null ? clockNow() : S.ui.step === -1 ? S.scenario.start : S.rt.results[S.ui.step].step.now)

/** A read-only command of the layer on the state shown (the live workspace for the latest). */
export function shownQuery(op, args = {}) {
  const ws = S.rt.workspace
  return S.ui.step === null ? ws.run(op, args, clockNow()) : ws.query(shownSnapshot(), op, args, shownNow())
}

/** The monitor report of the shown step, or of the last step before it that ran the monitor. */
export function shownReport() {
  for (let i = shownIndex(); i >= 0; i--) {
    const r = S.rt.results[i].result
    const report = r.report ?? r.monitor
    if (report) return { report, index: i, now: S.rt.results[i].step.now }
  }
  return null
}

/** Shows `next` from its start; `save: false` leaves the URL and localStorage as they are. */
export function setScenario(next, { push = false, save = true } = {}) {
  try {
    S.rt = replay(S.c, next)
    S.scenario = next
  } catch (e) {
    // A setup the core refuses (a hand-edited link): start fresh instead.
    flash(`That scenario cannot be set up (${esc(e.message)}); starting fresh.`, 'error')
    S.scenario = emptyScenario()
    S.rt = replay(S.c, S.scenario)
  }
  const { ui } = S
  ui.step = null
  ui.drafts = null
  ui.ledgerFile = null
  const issues = issueNumbers(latest())
  ui.issue = issues.length ? issues[issues.length - 1] : null
  ui.selectedId = null
  if (save) persist(push)
  S.render()
}

/** Runs a new step on the latest state, keeps its snapshot, and shows its record. */
export function runStep(step) {
  S.scenario.steps.push(step)
  const entry = play(S.rt.workspace, step)
  S.rt.results.push(entry)
  const { result } = entry
  const { ui } = S
  ui.step = null
  const id = result.clarification?.id
  if (id) {
    ui.selectedId = id
    ui.issue = issueOf(id)
  } else if (step.op === 'request' && ui.issue !== 'all') {
    const n = Number(step.args.issueNumber)
    if (Number.isInteger(n) && issueNumbers(latest()).includes(n)) ui.issue = n
  }
  persist(false)
  S.render()
  return result
}

/** Removes the last step: the workspace goes back to the snapshot before it. */
export function undo() {
  if (!S.scenario.steps.length) return
  S.scenario.steps.pop()
  S.rt.results.pop()
  S.rt.workspace.restore(latest())
  S.ui.step = null
  S.ui.drafts = null
  persist(false)
  S.render()
}

let persistTimer = null
let persistSeq = 0
export function persist(push) {
  const seq = ++persistSeq
  clearTimeout(persistTimer)
  const write = async () => {
    const encoded = await encode(S.scenario)
    if (seq !== persistSeq) return
    const url = `${location.pathname}${location.search}#s=${encoded}`
    if (push) history.pushState(null, '', url)
    else history.replaceState(null, '', url)
    saveLocal(encoded)
  }
  // Coalesce bursts (Play all) into one write; a push (new scenario) is written at once.
  if (push) write()
  else persistTimer = setTimeout(write, 60)
}

/** The scenario saved in the link, else in localStorage, else null. */
export async function restoreSaved() {
  for (const [source, text] of [['link', hashState()], ['local storage', loadLocal()]]) {
    if (!text) continue
    try {
      return await decode(text)
    } catch (e) {
      flash(`The scenario in the ${source} could not be restored (${esc(e.message)}); starting fresh.`, 'error')
    }
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// What a snapshot holds, as the views read it

export const issueOf = (id) => Number(/^CLR-(\d+)-/.exec(id)?.[1])
export const ledgersOf = (snap) => parseFiles(ledgerTexts(snap)).ledgers
export const issueNumbers = (snap) => ledgersOf(snap).map((l) => l.issueNumber)
export const statusesOf = (snap) => parseStatuses(statusText(snap))

export function records(snap) {
  return ledgersOf(snap).flatMap((l) => l.clarifications.map((r) => ({ ...r, issueNumber: l.issueNumber })))
}

const parseCache = new Map()
/** A workflow or config text as the core parses it: `{value}` or `{error}` (cached). */
export function parsed(kind, text) {
  const key = `${kind}\u0000${text}`
  if (!parseCache.has(key)) {
    let v
    try {
      v = kind === 'workflow' ? { value: S.c.parseWorkflow({ text }).workflow } : { value: S.c.parseConfig({ text }).config }
    } catch (e) {
      v = { error: { code: e.code ?? 'ERROR', message: e.message } }
    }
    if (parseCache.size > 200) parseCache.clear()
    parseCache.set(key, v)
  }
  return parseCache.get(key)
}

/** The settings in force (config.toml, else the defaults). */
export function config() {
  return parsed('config', S.rt.workspace.config ?? '').value ?? parsed('config', '').value
}

/** Every agent the page knows: workflow steps, records, statuses; in priority order. */
export function knownAgents() {
  const set = new Set()
  for (const text of Object.values(S.rt.workspace.workflows)) {
    for (const s of parsed('workflow', String(text)).value?.steps ?? []) {
      set.add(s.agent)
      s.canClarify.forEach((a) => set.add(a))
    }
  }
  const snap = latest()
  for (const r of records(snap)) {
    set.add(r.from)
    set.add(r.to)
  }
  Object.keys(statusesOf(snap)).forEach((a) => set.add(a))
  return orderAgents([...set], config()?.priority ?? [])
}
