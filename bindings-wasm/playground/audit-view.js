// The "Audit" view: verify a ledger offline — the scenario's, or one pasted or loaded from a
// file — with the core's pure `audit` (docs/protocol.md §16): its hash chains, snapshots and signatures
// against the public keys given, Layer 4's ask/answer chain, and each entry a problem names
// marked. Nothing leaves the page; nothing here decides what verifies.
import { S, shownSnapshot } from './session.js'
import { ledgerTexts } from './engine.js'
import { $, esc, flash, emptyState, refusalHtml } from './dom.js'

// `text`: the ledger in the box (null: the shown issue's file); `keys`: the public keys box.
const A = { text: null, keys: '', require: false, outcome: null }

/** The shown issue's ledger file text, if there is one. */
function scenarioLedger() {
  const files = ledgerTexts(shownSnapshot())
  const names = Object.keys(files)
  const wanted = S.ui.issue !== null && S.ui.issue !== 'all' ? `issue-${S.ui.issue}.json` : names[names.length - 1]
  return files[wanted] === undefined ? null : { name: wanted, text: files[wanted] }
}

/** Runs the core's `audit` on what the boxes hold; the outcome is kept until the next run. */
function runAudit() {
  const input = { ledger: A.text ?? '', requireSignatures: A.require }
  let keys
  if (A.keys.trim()) {
    try {
      keys = JSON.parse(A.keys)
    } catch (e) {
      A.outcome = { error: { code: 'INVALID_INPUT', message: `public keys: ${e.message}` } }
      return
    }
    input.publicKeys = keys
  }
  let ledger = null
  try {
    ledger = JSON.parse(A.text ?? '')
  } catch {
    // The core reports a ledger that does not parse, with its own message.
  }
  try {
    A.outcome = { audit: S.c.audit(input), ledger }
  } catch (e) {
    A.outcome = { error: { code: e.code ?? 'ERROR', message: e.message } }
  }
}

// The core's problem messages name the entry they are about ("entry 2 (answer by …)", "hash
// chain broken at entry 2"); a problem without one is about the whole record.
const entryOf = (message) => Number(/\bentry (\d+)\b/.exec(message)?.[1] ?? 0)

const short = (sig) => (sig ? `<code class="sig" title="${esc(sig)}">${esc(sig.slice(8, 20))}…</code>` : '<span class="muted">unsigned</span>')

function resultHtml() {
  const o = A.outcome
  if (!o) return ''
  if (o.error) return refusalHtml(o.error)
  const a = o.audit
  const problemsOf = (id) => a.problems.filter((p) => p.id === id)
  let html = `<p class="audit-verdict ${a.verified ? 'ok' : 'bad'}" data-verified="${a.verified}">${a.verified ? '✓ verified' : '✗ not verified'}
    <span class="muted small">${a.total_rounds} round${a.total_rounds === 1 ? '' : 's'}${a.all_resolved ? ' · all resolved' : ''}${a.session_id ? ` · session <code>${esc(a.session_id)}</code>` : ''}</span></p>`
  if (a.problems.length) {
    html += `<ul class="audit-problems">${a.problems.map((p) => `<li data-problem="${esc(p.code)}" data-id="${esc(p.id ?? '')}"><code class="code">${esc(p.code)}</code> ${p.id ? `<code>${esc(p.id)}</code> ` : ''}${esc(p.message)}</li>`).join('')}</ul>`
  }
  html += `<h3>Chain <span class="muted small">(Layer 4's ask/answer rounds)</span></h3>
    <table class="data audit-chain"><thead><tr><th>#</th><th>record</th><th>gap</th><th>asked</th><th>answer</th><th>resolved</th></tr></thead><tbody>
    ${a.chain.map((r) => `<tr data-round="${r.round}" data-id="${esc(r.clarificationId)}"><td>${r.round}</td><td><code>${esc(r.clarificationId)}</code></td>
      <td>${r.gap.field ? `<code>${esc(r.gap.field)}</code> ` : ''}${esc(r.gap.question)}</td>
      <td>${esc(r.ask_timestamp)}<br>${short(r.ask_signature)}</td>
      <td>${r.answer === null ? '<span class="muted">—</span>' : `${esc(r.answer)}<br>${esc(r.answer_timestamp)} ${short(r.answer_signature)}`}</td>
      <td>${r.resolved ? '✓' : ''}</td></tr>`).join('')}</tbody></table>`
  const records = Array.isArray(o.ledger?.clarifications) ? o.ledger.clarifications : []
  if (records.length) {
    html += '<h3>Entries</h3>'
    for (const rec of records) {
      const found = problemsOf(rec.id)
      const marked = new Set(found.map((p) => entryOf(p.message)))
      const thread = Array.isArray(rec.thread) ? rec.thread : []
      html += `<section class="audit-record ${found.length ? 'tampered' : ''}" data-id="${esc(rec.id)}"><h4><code>${esc(rec.id)}</code> ${found.length ? '<span class="badge st-escalated">problem</span>' : '<span class="badge st-resolved">intact</span>'}</h4><ol class="audit-entries">
        ${thread.map((e, i) => {
          const bad = marked.has(i + 1)
          const why = found.filter((p) => entryOf(p.message) === i + 1).map((p) => p.message).join('; ')
          return `<li class="entry ${bad ? 'tampered' : ''}" data-entry="${i + 1}" ${bad ? `title="${esc(why)}"` : ''}><b>${esc(e.type)}</b> by ${esc(e.from)} <span class="muted">${esc(e.timestamp)}</span> ${short(e.signature)}<div class="body">${esc(e.body)}</div>${bad ? `<div class="why">${esc(why)}</div>` : ''}</li>`
        }).join('')}</ol></section>`
    }
  }
  return html
}

export function auditView() {
  if (A.text === null) {
    const shown = scenarioLedger()
    if (shown) A.text = shown.text
  }
  const shown = scenarioLedger()
  if (A.text === null && !shown) {
    return emptyState('Nothing to audit yet', 'Paste a ledger file (<code>.agentx/state/clarifications/issue-&lt;n&gt;.json</code>) or load one, or ask something first: the audit verifies its hash chain and signatures here, offline.') + inputHtml()
  }
  return inputHtml() + `<div id="audit-result" class="audit-result">${resultHtml()}</div>`
}

function inputHtml() {
  const shown = scenarioLedger()
  return `<section class="audit-input">
    <div class="audit-sources">
      ${shown ? `<button type="button" id="audit-scenario">Use ${esc(shown.name)} of this scenario</button>` : ''}
      <label class="file-pick">Load a file <input type="file" id="audit-file" accept=".json,application/json"></label>
    </div>
    <label for="audit-ledger">Ledger (the file's text; edit it to see what verify catches)</label>
    <textarea id="audit-ledger" rows="10" spellcheck="false">${esc(A.text ?? '')}</textarea>
    <label for="audit-keys">Public keys <span class="muted small">(optional JSON: {"agent": "ed25519:…"}, as in <code>.agentx/keys/&lt;agent&gt;.pub</code>)</span></label>
    <textarea id="audit-keys" rows="3" spellcheck="false">${esc(A.keys)}</textarea>
    <label><input type="checkbox" id="audit-require" ${A.require ? 'checked' : ''}> Require signatures <span class="muted small">([audit] require_signatures)</span></label>
    <button type="button" id="audit-run" class="primary">Verify offline</button>
  </section>`
}

function rerender() {
  $('#view-audit').innerHTML = auditView()
}

/** The boxes, the file picker and the Verify button. */
export function wireAudit() {
  const view = $('#view-audit')
  view.addEventListener('input', (e) => {
    if (e.target.id === 'audit-ledger') A.text = e.target.value
    if (e.target.id === 'audit-keys') A.keys = e.target.value
    if (e.target.id === 'audit-require') A.require = e.target.checked
  })
  view.addEventListener('click', (e) => {
    if (e.target.id === 'audit-run') {
      runAudit()
      rerender()
    } else if (e.target.id === 'audit-scenario') {
      A.text = scenarioLedger()?.text ?? ''
      A.outcome = null
      rerender()
    }
  })
  view.addEventListener('change', async (e) => {
    if (e.target.id !== 'audit-file' || !e.target.files?.length) return
    const file = e.target.files[0]
    try {
      A.text = await file.text()
      runAudit()
      rerender()
    } catch (err) {
      flash(`Cannot read ${esc(file.name)}: ${esc(err.message)}`, 'error')
    }
  })
}

