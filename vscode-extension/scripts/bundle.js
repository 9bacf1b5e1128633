#!/usr/bin/env node
// Copies the built Node addon (bindings-node) into native/, the wasm package's Node build
// (bindings-wasm/pkg/node) into wasm/ and the agentx CLI (for `agentx mcp`) into bin/, so the
// .vsix carries all three. Run by `vscode:prepublish`.
'use strict'
const fs = require('node:fs')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ext = path.resolve(__dirname, '..')
const repo = path.resolve(ext, '..')

function copy(fromDir, toDir, names, hint) {
  fs.rmSync(toDir, { recursive: true, force: true })
  fs.mkdirSync(toDir, { recursive: true })
  for (const name of names) {
    const from = path.join(fromDir, name)
    if (!fs.existsSync(from)) {
      console.error(`bundle: ${path.relative(repo, from)} is missing; ${hint}`)
      process.exit(1)
    }
    fs.copyFileSync(from, path.join(toDir, name))
  }
  const bytes = names.reduce((n, name) => n + fs.statSync(path.join(toDir, name)).size, 0)
  console.log(`bundle: ${path.relative(ext, toDir)}/ ${names.length} files, ${(bytes / 1024).toFixed(0)} KB`)
}

const nodeDir = path.join(repo, 'bindings-node')
const addons = fs.existsSync(nodeDir) ? fs.readdirSync(nodeDir).filter((n) => n.endsWith('.node')) : []
copy(nodeDir, path.join(ext, 'native'), ['clarify.js', 'index.js', ...(addons.length ? addons : ['clarify-node.linux-x64-gnu.node'])],
  'build it with `cd bindings-node && npm install && npm run build`')

const wasmDir = path.join(repo, 'bindings-wasm', 'pkg', 'node')
const wasmFiles = fs.existsSync(wasmDir) ? fs.readdirSync(wasmDir).filter((n) => /\.(c?js|wasm)$/.test(n)) : []
copy(wasmDir, path.join(ext, 'wasm'), wasmFiles.length ? wasmFiles : ['clarify.cjs'], 'build it with `scripts/build-wasm`')

// The CLI: the newer of the release and debug builds, stripped (a debug build is ~100 MB with
// its symbols, ~15 MB without; the .vsix needs neither symbols nor debug info).
const builds = ['release', 'debug']
  .map((profile) => path.join(repo, 'target', profile, 'agentx'))
  .filter((file) => fs.existsSync(file))
  .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)
if (builds.length === 0) {
  console.error('bundle: target/{release,debug}/agentx is missing; build it with `cargo build -p agentx-cli`')
  process.exit(1)
}
const binDir = path.join(ext, 'bin')
fs.rmSync(binDir, { recursive: true, force: true })
fs.mkdirSync(binDir, { recursive: true })
const cli = path.join(binDir, 'agentx')
const stripped = spawnSync('strip', ['-o', cli, builds[0]], { stdio: 'inherit' })
if (stripped.status !== 0) fs.copyFileSync(builds[0], cli)
fs.chmodSync(cli, 0o755)
console.log(`bundle: bin/agentx from ${path.relative(repo, builds[0])}${stripped.status === 0 ? ' (stripped)' : ''}, ${(fs.statSync(cli).size / 1024 / 1024).toFixed(1)} MB`)
