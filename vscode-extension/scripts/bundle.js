#!/usr/bin/env node
// Copies the built Node addon (bindings-node) into native/ and the wasm package's Node build
// (bindings-wasm/pkg/node) into wasm/, so the .vsix carries both. Run by `vscode:prepublish`.
'use strict'
const fs = require('node:fs')
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
