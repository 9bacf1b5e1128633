// The inbox's session cookie in a real browser (issue 48, docs/security-serve.md): Debian's
// Chromium driven by playwright-core, a real `agentx serve`, and a second listener on another
// port of this machine — what any local process can open.
//   node --test serve/e2e/cookie.test.mjs   (needs target/debug/agentx and /usr/bin/chromium;
//   AGENTX_BIN and CHROMIUM override the paths)
// Browsers keep cookies per host, not per port: a cookie set by http://127.0.0.1:7700 goes to
// every port of 127.0.0.1. The inbox therefore has a name of its own, <label>.localhost:<port>
// (browsers resolve *.localhost to loopback); its cookie never reaches 127.0.0.1 or
// localhost on another port, and replayed to the server on 127.0.0.1 it is nobody's.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, execFileSync } from 'node:child_process'

import { chromium, BIN, CHROMIUM, WAIT, checkTools, CHROMIUM_ARGS } from './harness.mjs'

let ws
let server
let link
let context
let profile
let listener
const seen = []

before(async () => {
  checkTools()
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-serve-cookie-'))
  execFileSync(BIN, ['--root', ws, '--json', 'init'], { encoding: 'utf8' })
  server = spawn(BIN, ['--root', ws, 'serve', '--listen', '127.0.0.1:0', '--no-worker'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: server.stdout })
  link = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agentx serve printed no sign-in link')), 15000)
    lines.on('line', (line) => {
      if (line.includes('/login?once=')) {
        clearTimeout(timer)
        resolve(line.trim())
      }
    })
  })
  // The other local process: it records the Cookie header of every request it gets.
  listener = http.createServer((req, res) => {
    seen.push({ host: req.headers.host, cookie: req.headers.cookie ?? '' })
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>another local server</title><p>hello')
  })
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve))
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-serve-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  })
})

after(async () => {
  await context?.close()
  listener?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)))
    server.kill('SIGTERM')
    assert.equal(await exited, 0, 'agentx serve exits 0 on SIGTERM')
  }
  fs.rmSync(profile, { recursive: true, force: true })
  fs.rmSync(ws, { recursive: true, force: true })
})

/** GET `url` from Node (not a browser): any Host, any Cookie. */
function get(port, pathname, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, location: res.headers.location }))
    })
    req.on('error', reject)
    req.end()
  })
}

test('the session cookie never reaches another port, and replayed on 127.0.0.1 it is nobody\'s', async () => {
  const inbox = new URL(link)
  const page = context.pages()[0] ?? (await context.newPage())
  await page.goto(link)
  assert.equal(new URL(page.url()).pathname, '/', 'the link lands on the inbox')
  await page.waitForSelector('text=Nothing waits here', WAIT)
  const cookies = await context.cookies()
  const session = cookies.find((c) => c.name === 'agentx')
  assert.ok(session, `a session cookie: ${JSON.stringify(cookies)}`)
  assert.equal(session.domain, inbox.hostname, 'host-only, for the link\'s host')
  assert.equal(session.httpOnly, true)
  assert.equal(session.sameSite, 'Strict')

  // The browser visits the other local server, by every name a page could send it to.
  const port = listener.address().port
  for (const host of ['127.0.0.1', 'localhost']) {
    await page.goto(`http://${host}:${port}/`)
    await page.waitForSelector('text=hello', WAIT)
    // A same-site navigation too (a page there reloading itself: SameSite does not hold it back).
    await page.goto(`http://${host}:${port}/again`)
  }
  assert.ok(seen.length >= 4, `the listener was visited: ${JSON.stringify(seen)}`)
  for (const { host, cookie } of seen) {
    assert.ok(!cookie.includes(session.value) && !cookie.includes('agentx='), `the session reached ${host}: ${cookie}`)
  }

  assert.match(inbox.hostname, /^agentx-[0-9a-f]{20}\.localhost$/, 'the link names the inbox\'s own host')

  // Had another process got it anyway, the cookie is nobody's on 127.0.0.1 (only the inbox's
  // name honours it), and still the person's on that name.
  const served = Number(inbox.port)
  const replayed = await get(served, '/', { Host: `127.0.0.1:${served}`, Cookie: `agentx=${session.value}` })
  assert.equal(replayed.status, 303)
  assert.equal(replayed.location, '/login')
  const own = await get(served, '/', { Host: inbox.host, Cookie: `agentx=${session.value}` })
  assert.equal(own.status, 200)
})
