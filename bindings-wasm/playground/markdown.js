// A small, safe markdown → HTML converter for what the core's renderMarkdown emits (docs/protocol.md §11.2):
// paragraphs, hard breaks (two trailing spaces), **bold**, *italic* / _italic_, `code`,
// blockquotes (nested), "-" lists (nested by indentation), pipe tables and backslash escapes.
// Every piece of text is HTML-escaped before it is wrapped in tags; no raw HTML, no links, no
// attributes come from the input, so a body can never inject markup.

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c])

const PUNCT = /[!-/:-@[-`{-~]/

/** Inline markdown → HTML (the text is escaped here). */
export function inline(src) {
  // 1. Tokens: text, code spans, emphasis markers; backslash escapes become literal text.
  const tokens = []
  let text = ''
  const flush = () => {
    if (text) tokens.push({ t: 'text', v: text })
    text = ''
  }
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]
    if (ch === '\\' && i + 1 < src.length && PUNCT.test(src[i + 1])) {
      text += src[++i]
    } else if (ch === '`') {
      let n = 1
      while (src[i + n] === '`') n++
      const fence = '`'.repeat(n)
      const end = src.indexOf(fence, i + n)
      if (end < 0) {
        text += fence
        i += n - 1
      } else {
        flush()
        tokens.push({ t: 'code', v: src.slice(i + n, end).replace(/^ (.*) $/, '$1') })
        i = end + n - 1
      }
    } else if (ch === '*' && src[i + 1] === '*') {
      flush()
      tokens.push({ t: 'mark', v: '**' })
      i++
    } else if (ch === '*' || ch === '_') {
      // `_` only opens/closes at a word boundary (snake_case stays literal).
      const prev = src[i - 1] ?? ' '
      const next = src[i + 1] ?? ' '
      if (ch === '_' && /[\p{L}\p{N}]/u.test(prev) && /[\p{L}\p{N}]/u.test(next)) {
        text += ch
      } else {
        flush()
        tokens.push({ t: 'mark', v: ch })
      }
    } else {
      text += ch
    }
  }
  flush()
  // 2. Pair the markers (nearest unmatched opener of the same kind); the rest stay literal.
  const open = []
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].t !== 'mark') continue
    const j = open.findLastIndex((k) => tokens[k].v === tokens[i].v)
    if (j >= 0 && j === open.length - 1 && i > open[j] + 1) {
      tokens[open[j]].pair = i
      tokens[i].closes = true
      open.splice(j, 1)
    } else {
      open.push(i)
    }
  }
  let html = ''
  for (const tok of tokens) {
    if (tok.t === 'text') html += escapeHtml(tok.v)
    else if (tok.t === 'code') html += `<code>${escapeHtml(tok.v)}</code>`
    else if (tok.pair !== undefined) html += tok.v === '**' ? '<strong>' : '<em>'
    else if (tok.closes) html += tok.v === '**' ? '</strong>' : '</em>'
    else html += escapeHtml(tok.v)
  }
  return html
}

/** Splits a table row on unescaped pipes. */
function cells(line) {
  let s = line.trim()
  if (s.startsWith('|')) s = s.slice(1)
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1)
  const out = []
  let cur = ''
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) {
      cur += s[i] + s[i + 1]
      i++
    } else if (s[i] === '|') {
      out.push(cur.trim())
      cur = ''
    } else {
      cur += s[i]
    }
  }
  out.push(cur.trim())
  return out
}

const isTableSep = (line) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)
const LIST = /^(\s*)[-+*] (.*)$/
const indentOf = (line) => line.match(/^\s*/)[0].length

/** Paragraph lines → HTML: a line ending in two spaces (or a backslash) is a hard break. */
function paragraph(lines) {
  let html = ''
  lines.forEach((line, i) => {
    const last = i === lines.length - 1
    const hard = / {2,}$/.test(line) || /\\$/.test(line)
    const content = line.replace(/ {2,}$/, '').replace(/\\$/, '').trim()
    html += inline(content)
    if (!last) html += hard ? '<br>' : '\n'
  })
  return `<p>${html}</p>`
}

/** A list starting at lines[i] with the given indentation; returns [html, next index]. */
function list(lines, i, indent) {
  let html = '<ul>'
  while (i < lines.length) {
    const m = LIST.exec(lines[i])
    if (!m || m[1].length !== indent) break
    const item = [m[2]]
    i++
    let children = ''
    while (i < lines.length && lines[i].trim() !== '') {
      const sub = LIST.exec(lines[i])
      if (sub && sub[1].length > indent) {
        const [h, next] = list(lines, i, sub[1].length)
        children += h
        i = next
      } else if (!sub && indentOf(lines[i]) > indent) {
        item.push(lines[i])
        i++
      } else {
        break
      }
    }
    const body = item.map((l, k) => {
      const hard = / {2,}$/.test(l) && k < item.length - 1
      return inline(l.replace(/ {2,}$/, '').trim()) + (k < item.length - 1 ? (hard ? '<br>' : '\n') : '')
    }).join('')
    html += `<li>${body}${children}</li>`
  }
  return [html + '</ul>', i]
}

/** Block markdown → HTML. */
export function markdownToHtml(src) {
  const lines = String(src).replace(/\r\n?/g, '\n').split('\n')
  let html = ''
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    if (line.trim() === '') {
      i++
    } else if (/^\s{0,3}>/.test(line)) {
      const inner = []
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) {
        inner.push(lines[i].replace(/^\s{0,3}> ?/, ''))
        i++
      }
      html += `<blockquote>${markdownToHtml(inner.join('\n'))}</blockquote>`
    } else if (line.trim().startsWith('|') && i + 1 < lines.length && isTableSep(lines[i + 1])) {
      const head = cells(line)
      i += 2
      let body = ''
      while (i < lines.length && lines[i].trim().startsWith('|')) {
        body += `<tr>${cells(lines[i]).map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`
        i++
      }
      html += `<table><thead><tr>${head.map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`
    } else if (LIST.test(line)) {
      const [h, next] = list(lines, i, LIST.exec(line)[1].length)
      html += h
      i = next
    } else if (/^ {0,3}(#{1,6}) (.*)$/.test(line)) {
      const [, hashes, text] = /^ {0,3}(#{1,6}) (.*)$/.exec(line)
      html += `<h${hashes.length}>${inline(text)}</h${hashes.length}>`
      i++
    } else {
      const para = []
      while (i < lines.length && lines[i].trim() !== '' && !/^\s{0,3}>/.test(lines[i]) && !LIST.test(lines[i])) {
        if (lines[i].trim().startsWith('|') && i + 1 < lines.length && isTableSep(lines[i + 1])) break
        para.push(lines[i])
        i++
      }
      html += paragraph(para)
    }
  }
  return html
}
