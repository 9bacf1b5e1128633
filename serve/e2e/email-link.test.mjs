// An emailed answer link opened signed out on a phone (issue 44, docs/protocol.md §35):
// Debian's Chromium driven by playwright-core, on a phone (390×844).
//   node --test serve/e2e/email-link.test.mjs   (needs target/debug/agentx, /usr/bin/chromium,
//   python3 with aiosmtpd, openssl and bindings-wasm's node_modules; AGENTX_BIN and CHROMIUM
//   override the paths)
// A workspace with an `email` sink (answer_links = true) to the real SMTP server of the email
// sink's tests (tests/notify/smtp_receiver.py: aiosmtpd, STARTTLS with a certificate made here
// with openssl and trusted through the sink's `ca_file`), and a real `agentx serve
// --public-url`, whose worker mails the escalation of a single choice. The test reads the
// mail's text part, takes the Redis link, and opens it in a fresh browser context — nobody
// signed in, as on the phone the mail was read on: the confirm page shows the question and a
// Confirm button big enough to tap on the first screen; the tap decides, the page says so,
// and the ledger's last entry is that value by `mail-link` via `link`.
// Any console error or failed request fails the test. Screenshots: docs/screenshots/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'

import { ROOT, BIN, CHROMIUM, SHOTS, WAIT, launch, checkTools, watcher } from './harness.mjs'
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true }

let ws
let smtp
let server
let base
let browser
const mails = []
const waiting = []
const problems = []

const agentx = (...args) => JSON.parse(execFileSync(BIN, ['--root', ws, '--json', ...args], { encoding: 'utf8' }))

const watch = watcher(problems)

// The next mail the SMTP server received (one JSON line each), within 30 s.
function nextMail() {
  if (mails.length) return Promise.resolve(mails.shift())
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no mail within 30 s')), 30000)
    waiting.push((mail) => { clearTimeout(timer); resolve(mail) })
  })
}

// A test CA the sink trusts (`ca_file`) and the SMTP server's certificate for 127.0.0.1 signed
// by it, as cli/tests/email.rs makes them (rustls takes no CA certificate as a server's own).
function certificate(dir) {
  const p = (name) => path.join(dir, name)
  const openssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=agentx test CA', '-keyout', p('ca.key'), '-out', p('ca.pem'))
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', p('smtp.key'), '-out', p('smtp.csr'))
  fs.writeFileSync(p('smtp.ext'), 'basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl('x509', '-req', '-in', p('smtp.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', p('smtp.ext'), '-out', p('smtp.pem'))
  return { ca: p('ca.pem'), cert: p('smtp.pem'), key: p('smtp.key') }
}

// The first line a child prints that `match` accepts (the SMTP server's port, the server's
// sign-in link), within 15 s.
function firstLine(lines, what, match) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within 15 s`)), 15000)
    const seen = (line) => {
      const found = match(line)
      if (found === undefined) return
      clearTimeout(timer)
      lines.off('line', seen)
      resolve(found)
    }
    lines.on('line', seen)
  })
}

// A port free now, for `--listen` and the `--public-url` that must name it before the server
// starts.
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

before(async () => {
  checkTools()
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-email-e2e-'))
  agentx('init')
  for (const a of ['agent-x', 'engineer', 'architect']) agentx('keys', 'new', a)
  const { ca, cert, key } = certificate(ws)
  smtp = spawn('python3', [path.join(ROOT, 'tests/notify/smtp_receiver.py'), cert, key], { stdio: ['pipe', 'pipe', 'inherit'] })
  const smtpLines = readline.createInterface({ input: smtp.stdout })
  const smtpPort = await firstLine(smtpLines, 'SMTP port (is aiosmtpd installed? scripts/setup)', (l) => l.match(/^port (\d+)$/)?.[1])
  smtpLines.on('line', (line) => {
    const mail = JSON.parse(line)
    const next = waiting.shift()
    if (next) next(mail)
    else mails.push(mail)
  })
  fs.appendFileSync(path.join(ws, '.agentx/config.toml'),
    `\n[[notify]]\nname = "mail"\nkind = "email"\nhost = "127.0.0.1"\nport = ${smtpPort}\n` +
    `from = "AgentX <agentx@example.com>"\nto = ["ops@example.com"]\nca_file = "${ca}"\nanswer_links = true\n`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = spawn(BIN, ['--root', ws, 'serve', '--listen', `127.0.0.1:${port}`, '--public-url', base], { stdio: ['ignore', 'pipe', 'inherit'] })
  await firstLine(readline.createInterface({ input: server.stdout }), 'sign-in link from agentx serve', (l) => (l.includes('/login?once=') ? l : undefined))
  browser = await launch()
})

after(async () => {
  await browser?.close()
  for (const child of [server, smtp]) {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.stdin?.end() // the SMTP server stops when its stdin closes
      child.kill('SIGTERM')
      await exited
    }
  }
  fs.rmSync(ws, { recursive: true, force: true })
})

test('an emailed link opened signed out on a phone confirms, and the tap decides', async () => {
  // A single choice escalated to a person: the server's worker mails it with its links.
  const asked = agentx('clarify', 'ask', '--issue', '44', '--from', 'engineer', '--to', 'architect',
    '--topic', 'Session cache', '--question', 'Redis or an in-process LRU for the session cache?',
    '--context', 'p99 budget 20 ms; sessions must survive a deploy',
    '--kind', 'choice', '--option', 'redis=Redis', '--option', 'lru=In-process LRU', '--no-other')
  const id = asked.clarification.id
  agentx('clarify', 'escalate', id, '-m', 'the team is split: a person decides')
  const mail = await nextMail()
  assert.ok(mail.tls, 'sent over STARTTLS')
  assert.ok(mail.subject.includes(id), mail.subject)
  // The text part: one line per link, "  Redis: <url>".
  const url = mail.text.split('\n').map((l) => l.trim()).find((l) => l.startsWith('Redis: '))?.slice('Redis: '.length)
  assert.ok(url && url.startsWith(`${base}/a/`), `a Redis link to the public URL in:\n${mail.text}`)
  assert.ok(mail.html.includes(url), 'the same link in the HTML part')

  const ledger = path.join(ws, '.agentx/state/clarifications/issue-44.json')
  const before = fs.readFileSync(ledger, 'utf8')
  // A fresh context: no cookie, nobody signed in, as a phone's mail app opens a link.
  const phone = await browser.newContext(PHONE)
  const page = watch(await phone.newPage())
  await page.goto(url)
  await page.locator('blockquote.question', { hasText: 'Redis or an in-process LRU for the session cache?' }).waitFor(WAIT)
  assert.equal(new URL(page.url()).pathname.startsWith('/a/'), true, 'no redirect to a sign-in page')
  const confirm = page.getByRole('button', { name: 'Confirm: Redis' })
  const box = await confirm.boundingBox()
  assert.ok(box && box.height >= 44, `Confirm is a tap target: ${JSON.stringify(box)}`)
  assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= 390 && box.y + box.height <= 844,
    `Confirm is on the first screen: ${JSON.stringify(box)}`)
  assert.equal(fs.readFileSync(ledger, 'utf8'), before, 'opening the link wrote nothing')
  await page.screenshot({ path: path.join(SHOTS, 'email-link-phone.png') })

  await confirm.click()
  await page.locator('h1', { hasText: 'Decided' }).waitFor(WAIT)
  assert.match(await page.locator('p.closed').innerText(), /^Decided by mail-link at \d\d:\d\d UTC: Redis$/)
  await page.screenshot({ path: path.join(SHOTS, 'email-link-decided-phone.png') })
  const decided = agentx('clarify', 'show', id).clarification
  assert.equal(decided.status, 'resolved')
  const last = decided.thread.at(-1)
  assert.deepEqual([last.type, last.value, last.by, last.via], ['resolution', 'redis', 'mail-link', 'link'])
  assert.deepEqual(agentx('clarify', 'verify').problems, [])
  await phone.close()
  assert.deepEqual(problems, [])
})
