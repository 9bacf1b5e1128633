// The wait-for graph of one issue as SVG (docs/protocol.md §7, phase 3). Its edges and cycles are the
// core's (`waitForGraph`: a blocking record whose fold is pending or stale is an edge requester
// → target); one node per agent of the issue. A deadlock the monitor reported is highlighted
// (nodes and edges `in-cycle`), and the record it escalated is drawn as a dashed magenta edge
// (`escalated`). A cycle that exists right now (the next monitor run would break it) is drawn
// `in-cycle live`, the record that run would escalate `would-escalate`.
// Deterministic circle layout; stable hooks for tests: `data-agent`, `data-edge`, classes.
import { escapeHtml as esc } from './markdown.js'

const NODE_H = 44
const CHAR_W = 7.6

const issueOf = (id) => Number(/^CLR-(\d+)-/.exec(id)?.[1])

/** Orders agents by the config's priority list, unknown agents last by name. */
export function orderAgents(agents, priority = []) {
  const rank = (a) => {
    const i = priority.indexOf(a)
    return i < 0 ? priority.length : i
  }
  return [...new Set(agents)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
}

/** The deadlocks of a report that belong to one issue. */
export function deadlocksOf(report, issue) {
  return (report?.deadlocks ?? []).filter((d) => issueOf(d.escalated) === issue)
}

const boxWidth = (name, sub) => Math.max(name.length * CHAR_W, (sub ?? '').length * 6.3) + 28

function layout(agents, subs) {
  const n = agents.length
  const widest = Math.max(90, ...agents.map((a) => boxWidth(a, subs[a])))
  const R = n <= 1 ? 0 : Math.max(n === 2 ? 130 : 165, (n * (widest + 40)) / (2 * Math.PI))
  const start = n === 2 ? Math.PI : -Math.PI / 2
  const pos = new Map()
  agents.forEach((a, i) => {
    const ang = start + (2 * Math.PI * i) / n
    pos.set(a, { x: R * Math.cos(ang), y: R * Math.sin(ang), w: boxWidth(a, subs[a]), h: NODE_H })
  })
  // The view box hugs the nodes, with room for curved edges and their labels.
  const pad = 46
  const xs = [...pos.values()].flatMap((p) => [p.x - p.w / 2, p.x + p.w / 2])
  const ys = [...pos.values()].flatMap((p) => [p.y - p.h / 2, p.y + p.h / 2])
  const minX = Math.min(...xs) - pad
  const minY = Math.min(...ys) - pad
  const w = Math.max(...xs) + pad - minX
  const h = Math.max(...ys) + pad - minY
  for (const p of pos.values()) {
    p.x -= minX
    p.y -= minY
  }
  return { pos, w, h }
}

/** Distance from a box centre to its border along (dx, dy). */
function boxExit(box, dx, dy) {
  const len = Math.hypot(dx, dy) || 1
  const ux = dx / len
  const uy = dy / len
  const tx = ux === 0 ? Infinity : box.w / 2 / Math.abs(ux)
  const ty = uy === 0 ? Infinity : box.h / 2 / Math.abs(uy)
  return { ux, uy, t: Math.min(tx, ty) + 4 }
}

const fmt = (n) => Math.round(n * 10) / 10

/**
 * @param o.issue issue number
 * @param o.records the issue's clarifications (ledger records: topic, blocking for the titles)
 * @param o.graph the core's wait-for graph of the issue: `{edges: [{id, from, to, status}],
 *   cycles: [{ids, agents, escalated?}]}` (`escalated`: the record the next run would break
 *   the cycle at, when known)
 * @param o.statuses agent statuses (for the node subtitles)
 * @param o.priority the config's priority list (node order)
 * @param o.report the monitor report of the step shown (its deadlocks are highlighted)
 * @param o.selectedId the record selected in the page
 */
export function renderGraph({ issue, records, graph = { edges: [], cycles: [] }, statuses = {}, priority = [], report = null, selectedId = null }) {
  const broken = deadlocksOf(report, issue)
  const cycleIds = new Set(broken.flatMap((d) => d.cycle))
  const escalatedIds = new Set(broken.map((d) => d.escalated))
  const liveIds = new Set(graph.cycles.flatMap((c) => c.ids))
  const wouldEscalate = new Set(graph.cycles.map((c) => c.escalated).filter(Boolean))
  const cycleAgents = new Set([...broken.flatMap((d) => d.agents), ...graph.cycles.flatMap((c) => c.agents)])

  // A waiting record has the status of its fold; a record of a broken cycle is drawn too.
  const waiting = new Map(graph.edges.map((e) => [e.id, e.status]))
  const edges = records.filter((r) => waiting.has(r.id) || cycleIds.has(r.id)).map((r) => ({ ...r, status: waiting.get(r.id) ?? r.status }))
  const agents = orderAgents(records.flatMap((r) => [r.from, r.to]), priority)
  const { pos, w, h } = layout(agents, Object.fromEntries(agents.map((a) => [a, statuses[a]?.status])))
  const p = `g${issue}`

  // Parallel and opposite edges between the same two agents fan out.
  const pairs = new Map()
  for (const e of edges) {
    const key = [e.from, e.to].sort().join('\u0000')
    if (!pairs.has(key)) pairs.set(key, [])
    pairs.get(key).push(e)
  }

  const marker = (name, color) =>
    `<marker id="${p}-${name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="11" markerHeight="11" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" style="fill: ${color}"/></marker>`

  let svg = `<svg xmlns="http://www.w3.org/2000/svg" class="wait-for" data-issue="${issue}" viewBox="0 0 ${fmt(w)} ${fmt(h)}" width="${fmt(w)}" height="${fmt(h)}" role="img" aria-label="Wait-for graph of issue ${issue}">`
  svg += `<defs>${marker('pending', 'var(--pending)')}${marker('stale', 'var(--stale)')}${marker('cycle', 'var(--cycle)')}${marker('escalated', 'var(--escalated)')}${marker('other', 'var(--muted)')}</defs>`

  let edgeSvg = ''
  let labelSvg = ''
  for (const group of pairs.values()) {
    const m = group.length
    group.forEach((e, k) => {
      const a = pos.get(e.from)
      const b = pos.get(e.to)
      const [c1, c2] = [e.from, e.to].sort()
      const sign = e.from === c1 ? 1 : -1
      const offset = m === 1 ? 0 : (k - (m - 1) / 2) * 46 * sign + (e.from === c1 ? 0 : 0)
      // Control point: the midpoint pushed along the normal of the canonical direction.
      const A = pos.get(c1)
      const B = pos.get(c2)
      const nx = -(B.y - A.y)
      const ny = B.x - A.x
      const nl = Math.hypot(nx, ny) || 1
      const mx = (a.x + b.x) / 2 + (offset * nx) / nl
      const my = (a.y + b.y) / 2 + (offset * ny) / nl
      const s = boxExit(a, mx - a.x, my - a.y)
      const t = boxExit(b, mx - b.x, my - b.y)
      const x1 = a.x + s.ux * s.t
      const y1 = a.y + s.uy * s.t
      const x2 = b.x + t.ux * (t.t + 2)
      const y2 = b.y + t.uy * (t.t + 2)
      const classes = ['edge', `status-${e.status}`]
      let mk = e.status === 'stale' ? 'stale' : e.status === 'pending' ? 'pending' : 'other'
      if (cycleIds.has(e.id) || liveIds.has(e.id)) {
        classes.push('in-cycle')
        mk = 'cycle'
      }
      if (liveIds.has(e.id) && !cycleIds.has(e.id)) classes.push('live')
      if (escalatedIds.has(e.id)) {
        classes.push('escalated')
        mk = 'escalated'
      }
      if (wouldEscalate.has(e.id)) classes.push('would-escalate')
      if (e.id === selectedId) classes.push('selected')
      const d = `M${fmt(x1)},${fmt(y1)} Q${fmt(mx)},${fmt(my)} ${fmt(x2)},${fmt(y2)}`
      const title = `${e.id}: ${e.from} waits on ${e.to} — ${e.topic} (${e.status}${e.blocking ? ', blocking' : ''})`
      edgeSvg += `<g class="${classes.join(' ')}" data-edge="${esc(e.id)}" data-from="${esc(e.from)}" data-to="${esc(e.to)}" data-status="${esc(e.status)}" tabindex="0"><title>${esc(title)}</title>`
      edgeSvg += `<path class="hit" d="${d}"/><path class="line" d="${d}" marker-end="url(#${p}-${mk})"/></g>`
      // The label sits on the curve's midpoint (t = 0.5 of the quadratic).
      const lx = 0.25 * x1 + 0.5 * mx + 0.25 * x2
      const ly = 0.25 * y1 + 0.5 * my + 0.25 * y2
      let text = e.id
      if (escalatedIds.has(e.id)) text += ' ⚑ escalated'
      else if (wouldEscalate.has(e.id)) text += ' ⚑ next'
      const lw = text.length * 6.9 + 14
      labelSvg += `<g class="${['edge-label', ...classes.slice(1)].join(' ')}" data-label="${esc(e.id)}" transform="translate(${fmt(lx)},${fmt(ly)})"><rect x="${fmt(-lw / 2)}" y="-10" width="${fmt(lw)}" height="20" rx="10"/><text text-anchor="middle" dy="4">${esc(text)}</text></g>`
    })
  }

  let nodeSvg = ''
  for (const a of agents) {
    const { x, y, w: bw } = pos.get(a)
    const st = statuses[a]?.status
    const classes = ['node']
    if (cycleAgents.has(a)) classes.push('in-cycle')
    if (st) classes.push(`agent-${st}`)
    if (graph.edges.some((e) => e.from === a)) classes.push('waiting')
    nodeSvg += `<g class="${classes.join(' ')}" data-agent="${esc(a)}" transform="translate(${fmt(x)},${fmt(y)})"><title>${esc(`${a}${st ? ` — ${st}` : ''}`)}</title>`
    nodeSvg += `<rect x="${fmt(-bw / 2)}" y="${-NODE_H / 2}" width="${fmt(bw)}" height="${NODE_H}" rx="12"/>`
    nodeSvg += `<text class="name" text-anchor="middle" dy="${st ? -2 : 5}">${esc(a)}</text>`
    if (st) nodeSvg += `<text class="sub" text-anchor="middle" dy="13">${esc(st)}</text>`
    nodeSvg += '</g>'
  }
  svg += `<g class="edges">${edgeSvg}</g><g class="nodes">${nodeSvg}</g><g class="labels">${labelSvg}</g></svg>`
  return svg
}
