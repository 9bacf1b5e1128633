// The workflow & config editor: the TOML files of the workspace, checked live by the core's
// parsers; applying them is a step of the scenario (engine.js `workflows`), so the change
// governs what follows and undo takes it back.
import { S, clockNow, runStep, parsed } from './session.js'
import { $, $$, esc, flash, refusalHtml } from './dom.js'

const CONFIG = '@config'
const fileName = (key) => (key === CONFIG ? 'config.toml' : `${key}.toml`)

/** The texts in force: every workflow, and config.toml (the defaults when there is none). */
function appliedTexts() {
  const ws = S.rt.workspace
  const out = {}
  for (const [type, text] of Object.entries(ws.workflows)) out[type] = typeof text === 'string' ? text : JSON.stringify(text)
  out[CONFIG] = ws.config ?? S.DEFAULTS.config
  return out
}

const tabHtml = (k, applied) => `${esc(fileName(k))}${S.ui.drafts[k] !== applied[k] ? ' <span class="dirty" title="not applied">●</span>' : ''}`

export function renderEditor() {
  const { ui } = S
  const applied = appliedTexts()
  if (!ui.drafts) ui.drafts = { ...applied }
  if (!(ui.activeFile in ui.drafts)) ui.activeFile = Object.keys(ui.drafts)[0]
  const keys = [...Object.keys(ui.drafts).filter((k) => k !== CONFIG), CONFIG]
  $('#file-tabs').innerHTML = keys.map((k) => `<button type="button" role="tab" data-key="${esc(k)}" aria-selected="${k === ui.activeFile}">${tabHtml(k, applied)}</button>`).join('')
  const ta = $('#toml')
  if (ta.value !== ui.drafts[ui.activeFile]) ta.value = ui.drafts[ui.activeFile]
  renderGutter()
  renderTomlStatus()
}

function renderGutter() {
  const ta = $('#toml')
  const n = ta.value.split('\n').length
  const g = $('#gutter')
  if (g.childElementCount !== n) g.innerHTML = Array.from({ length: n }, (_, i) => `<span>${i + 1}</span>`).join('')
  g.scrollTop = ta.scrollTop
}

function renderTomlStatus() {
  const { ui } = S
  const key = ui.activeFile
  const text = ui.drafts[key]
  const box = $('#toml-status')
  const applied = appliedTexts()
  const dirty = Object.keys(ui.drafts).some((k) => ui.drafts[k] !== applied[k]) || Object.keys(applied).some((k) => !(k in ui.drafts))
  $('#toml-apply').disabled = !dirty
  $('#toml-revert').disabled = !dirty
  const table = $('#scope-table')
  if (key === CONFIG) {
    const p = parsed('config', text)
    if (p.error) {
      box.innerHTML = refusalHtml(p.error)
      table.innerHTML = ''
    } else {
      box.innerHTML = `<span class="ok">✓ valid</span> <span class="muted">max_retries ${p.value.maxRetries} · stuck_similarity ${p.value.stuckSimilarity} · default_workflow ${esc(p.value.defaultWorkflow)}</span>`
      table.innerHTML = `<p class="help">Deadlock priority (earlier = keeps waiting; the lowest-ranked requester in a cycle yields): ${p.value.priority.map((a) => `<code>${esc(a)}</code>`).join(' › ')}</p>`
    }
    return
  }
  const p = parsed('workflow', text)
  if (p.error) {
    box.innerHTML = refusalHtml(p.error)
    table.innerHTML = ''
    return
  }
  box.innerHTML = `<span class="ok">✓ valid</span> <span class="muted">${p.value.steps.length} step${p.value.steps.length === 1 ? '' : 's'}</span>`
  table.innerHTML = p.value.steps.length
    ? `<table class="data"><thead><tr><th>step</th><th>agent</th><th>may ask</th><th>rounds</th><th>SLA</th><th>blocking</th></tr></thead><tbody>${p.value.steps.map((s) => `<tr><td>${esc(s.id)}</td><td><b>${esc(s.agent)}</b></td><td>${s.canClarify.length ? s.canClarify.map(esc).join(', ') : '<span class="muted">nobody</span>'}</td><td>${s.clarifyMaxRounds ?? '<span class="muted">5 / 6</span>'}</td><td>${s.clarifySlaMinutes} min</td><td>${s.clarifyBlockingAllowed ? 'yes' : '<b>no</b>'}</td></tr>`).join('')}</tbody></table>`
    : '<p class="muted">No steps: nobody may ask anyone under this workflow.</p>'
}

function applyWorkflows() {
  const { ui } = S
  const workflows = {}
  for (const [k, v] of Object.entries(ui.drafts)) if (k !== CONFIG) workflows[k] = v
  const configText = ui.drafts[CONFIG]
  const config = S.rt.workspace.config === undefined && configText === S.DEFAULTS.config ? undefined : configText
  for (const [k, v] of Object.entries(workflows)) {
    const p = parsed('workflow', v)
    if (p.error) return showEditorError(k, p.error)
  }
  const pc = parsed('config', configText)
  if (pc.error) return showEditorError(CONFIG, pc.error)
  const result = runStep({ op: 'workflows', args: config === undefined ? { workflows } : { workflows, config }, now: clockNow() })
  if (result.ok === false) return showEditorError(ui.activeFile, result.error)
  ui.drafts = null
  renderEditor()
  flash(`Workflows applied: ${Object.keys(workflows).join(', ')}${config !== undefined ? ' and config.toml' : ''}.`)
}

function showEditorError(key, error) {
  S.ui.activeFile = key
  renderEditor()
  $('#toml-status').innerHTML = refusalHtml(error)
}

export function wireEditor() {
  const { ui } = S
  const ta = $('#toml')
  ta.addEventListener('input', () => {
    ui.drafts[ui.activeFile] = ta.value
    renderGutter()
    clearTimeout(ta.timer)
    ta.timer = setTimeout(() => {
      renderTomlStatus()
      const applied = appliedTexts()
      $$('#file-tabs [role="tab"]').forEach((b) => (b.innerHTML = tabHtml(b.dataset.key, applied)))
    }, 120)
  })
  ta.addEventListener('scroll', () => ($('#gutter').scrollTop = ta.scrollTop))
  ta.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault()
      applyWorkflows()
    }
  })
  $('#file-tabs').addEventListener('click', (e) => {
    const b = e.target.closest('[data-key]')
    if (!b) return
    ui.activeFile = b.dataset.key
    renderEditor()
  })
  $('#toml-apply').addEventListener('click', applyWorkflows)
  $('#toml-revert').addEventListener('click', () => {
    ui.drafts = null
    renderEditor()
  })
  $('#toml-defaults').addEventListener('click', () => {
    const k = ui.activeFile
    const text = k === CONFIG ? S.DEFAULTS.config : S.DEFAULTS.workflows[k] ?? `# Workflow "${k}"\n\n[[steps]]\nid = "implement"\nagent = "engineer"\ncan_clarify = ["architect"]\n`
    ui.drafts[k] = text
    renderEditor()
  })
  $('#add-type').addEventListener('click', () => {
    const input = $('#new-type')
    const name = input.value.trim()
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) return flash('A workflow type is lowercase letters, digits, "-" and "_" (e.g. <code>epic</code>).', 'error')
    if (name in ui.drafts) return flash(`${esc(name)}.toml exists already.`, 'error')
    ui.drafts[name] = `# Workflow "${name}": who may ask whom in its steps.\n\n[[steps]]\nid = "design"\nagent = "ux-designer"\ncan_clarify = ["product-manager"]\nclarify_sla_minutes = 30\n\n[[steps]]\nid = "implement"\nagent = "engineer"\ncan_clarify = ["ux-designer", "architect"]\nclarify_max_rounds = 2\n`
    ui.activeFile = name
    input.value = ''
    renderEditor()
  })
}
