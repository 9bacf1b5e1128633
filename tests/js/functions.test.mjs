// Every surface offers every function of the core's JSON API. The core names its functions
// (`api::FUNCTIONS`, through the Node addon); the package under test (AGENTX_IMPL) must export
// each, and so must the wasm package's ES module build, whose export list is written by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { load, IMPL, ROOT } from './impl.mjs'

const require = createRequire(import.meta.url)

function coreFunctions() {
  return require(path.join(ROOT, 'bindings-node/index.js')).functions()
}

test(`${IMPL}: every core function is exported`, async () => {
  const names = coreFunctions()
  assert.ok(names.includes('request') && names.includes('transitions'), names.join(', '))
  const c = load()
  assert.deepEqual(names.filter((n) => typeof c[n] !== 'function'), [], 'missing from the package')
  if (IMPL === 'wasm') {
    const esm = await import(pathToFileURL(path.join(ROOT, 'bindings-wasm/pkg/web/clarify.mjs')).href)
    assert.deepEqual(names.filter((n) => typeof esm[n] !== 'function'), [], 'missing from the ES module build')
  }
})
