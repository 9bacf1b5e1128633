// The playground page: forms → steps → the wasm command layer (through engine.js) → views.
// A scenario is {setup, steps, queue, start}; the page's state is the replay of its steps, so
// the URL hash or localStorage reproduce it exactly. Nothing here decides protocol behaviour:
// every ledger, status, report, refusal, scope preview, wake-up and wait-for graph comes from
// the core. This module boots the page and wires what is global (tabs, examples, sharing);
// the parts live in session.js (state), clock.js, forms.js, timeline.js, views.js,
// graph-view.js and editor.js.
import init, * as core from './pkg/clarify.mjs'
import { Workspace, MUTATIONS } from './engine.js'
import { S, emptyScenario, setScenario, restoreSaved } from './session.js'
import { $, $$, esc, flash } from './dom.js'
import { EXAMPLES, loadExample } from './examples.js'
import { encode, decode, hashState } from './state.js'
import { renderClock, wireClock } from './clock.js'
import { renderForms, wireForms } from './forms.js'
import { renderTimeline, renderTravel, wireTimeline } from './timeline.js'
import { renderIssueSelect, renderView, wireViews } from './views.js'
import { renderEditor, wireEditor } from './editor.js'

function renderAll() {
  renderClock()
  renderForms()
  renderIssueSelect()
  renderTravel()
  renderView()
  renderTimeline()
  renderEditor()
}

function selectTab(tab) {
  const list = tab.closest('[role="tablist"]')
  for (const t of list.querySelectorAll('[role="tab"]')) {
    const on = t === tab
    t.setAttribute('aria-selected', String(on))
    t.tabIndex = on ? 0 : -1
    const pane = document.getElementById(t.getAttribute('aria-controls'))
    if (pane) pane.hidden = !on
  }
  if (list.dataset.tabs === 'views') {
    S.ui.view = tab.id.replace('tab-', '')
    renderView()
  }
}

function wireTabs() {
  for (const list of $$('[role="tablist"][data-tabs]')) {
    const tabs = $$('[role="tab"]', list)
    tabs.forEach((t) => (t.tabIndex = t.getAttribute('aria-selected') === 'true' ? 0 : -1))
    list.addEventListener('click', (e) => {
      const t = e.target.closest('[role="tab"]')
      if (t) selectTab(t)
    })
    list.addEventListener('keydown', (e) => {
      const i = tabs.indexOf(document.activeElement)
      if (i < 0) return
      let j = null
      if (e.key === 'ArrowRight') j = (i + 1) % tabs.length
      else if (e.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length
      else if (e.key === 'Home') j = 0
      else if (e.key === 'End') j = tabs.length - 1
      if (j === null) return
      e.preventDefault()
      tabs[j].focus()
      selectTab(tabs[j])
    })
  }
}

/** The example picker, the share link, a new scenario, and the browser's back button. */
function wireScenarios() {
  const sel = $('#example-select')
  sel.insertAdjacentHTML('beforeend', EXAMPLES.map((x) => `<option value="${esc(x.id)}" title="${esc(x.blurb)}">${esc(x.title)}</option>`).join(''))
  sel.addEventListener('change', async () => {
    const id = sel.value
    if (!id) return
    try {
      const next = await loadExample(id)
      setScenario(next, { push: true })
      const ex = EXAMPLES.find((x) => x.id === id)
      flash(`<b>${esc(ex.title)}</b> loaded: ${esc(ex.blurb)} Press <b>▶ Next step</b> to play it, or act yourself.`)
    } catch (e) {
      flash(`Cannot load the example: ${esc(e.message)}`, 'error')
    }
    sel.value = ''
  })
  $('#share').addEventListener('click', async () => {
    const url = `${location.origin}${location.pathname}#s=${await encode(S.scenario)}`
    try {
      await navigator.clipboard.writeText(url)
      flash('Link copied: it reproduces this scenario step by step.')
    } catch {
      flash(`Copy this link: <input class="share-url" value="${esc(url)}" readonly>`)
    }
  })
  $('#new-scenario').addEventListener('click', () => {
    setScenario(emptyScenario(), { push: true })
    flash('New scenario: the default workflows, an empty workspace.')
  })
  window.addEventListener('popstate', async () => {
    const h = hashState()
    if (!h) return
    try {
      setScenario(await decode(h))
    } catch (e) {
      flash(`Cannot restore that link: ${esc(e.message)}`, 'error')
    }
  })
}

function registerServiceWorker() {
  const state = $('#offline-state')
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    state.textContent = ''
    return
  }
  navigator.serviceWorker.register('sw.js').then(
    () => navigator.serviceWorker.ready.then(() => {
      state.textContent = '● available offline'
      state.className = 'ok'
      document.body.dataset.offline = 'ready'
    }),
    (e) => {
      // Offline, the update check of an installed worker fails: the cached page still runs.
      if (navigator.serviceWorker.controller) {
        state.textContent = '● running from the offline cache'
        state.className = 'ok'
      } else {
        state.textContent = `offline mode unavailable (${e.message})`
      }
    },
  )
}

async function boot() {
  try {
    await init()
    S.c = core
    S.DEFAULTS = S.c.defaultWorkflows()
    $('#core-version').textContent = `agentx-clarify-core ${S.c.version().version}`
  } catch (e) {
    document.body.dataset.ready = 'error'
    flash(`The WebAssembly core could not start: ${esc(e.message)}`, 'error')
    return
  }
  S.render = renderAll
  wireTabs()
  wireForms()
  wireClock()
  wireTimeline()
  wireViews()
  wireScenarios()
  wireEditor()
  const restored = await restoreSaved()
  setScenario(restored ?? emptyScenario(), { save: !restored })
  document.body.dataset.ready = 'true'
  registerServiceWorker()
}

// For tests and the curious: the page's state from the console.
window.playground = {
  get scenario() { return S.scenario },
  get results() { return S.rt?.results },
  MUTATIONS,
  Workspace,
}

boot()
