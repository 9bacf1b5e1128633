// What every browser test of the server shares: where the binary, Chromium and the
// screenshots are, playwright-core (from bindings-wasm's node_modules), Chromium's launch
// flags for this closed machine, and the watcher that turns a console error, a page error or
// a failed request into a test failure.
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(path.join(ROOT, 'bindings-wasm', 'package.json'))
export const { chromium } = require('playwright-core')

export const BIN = process.env.AGENTX_BIN ?? path.join(ROOT, 'target/debug/agentx')
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
export const SHOTS = path.join(ROOT, 'docs/screenshots')
export const WAIT = { timeout: 15000 }
// Without the background-networking flags Chromium keeps dialling Google's hosts, which this
// machine's closed network refuses.
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']

// Fails early, with the command that fixes it, when the binary or Chromium is missing.
export function checkTools() {
  for (const [file, hint] of [[BIN, 'cargo build -p agentx-cli'], [CHROMIUM, 'apt-get install -y --no-install-recommends chromium']]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: ${hint}`)
  }
  fs.mkdirSync(SHOTS, { recursive: true })
}

export function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
}

// Records into `problems` what goes wrong on `page`, except what `allowed` (a console text or
// a URL) says is expected.
export function watcher(problems, allowed = () => false) {
  return (page) => {
    page.on('console', (m) => { if (m.type() === 'error' && !allowed(m.text())) problems.push(`console.error: ${m.text()}`) })
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.on('response', (r) => { if (r.status() >= 400 && !allowed(r.url())) problems.push(`HTTP ${r.status()} ${r.url()}`) })
    return page
  }
}
