// Every surface offers every function of the core's JSON API. The core names its functions in
// the error for an unknown one (asked through the Node addon's raw call); the package under
// test (AGENTX_IMPL) must export each, and so must the wasm package's ES module build.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { load, IMPL, ROOT } from './impl.mjs'

const require = createRequire(import.meta.url)

function coreFunctions() {
  const native = require(path.join(ROOT, 'bindings-node/index.js'))
  const envelope = JSON.parse(native.callJson('noSuchFunction', '{}'))
  assert.equal(envelope.error?.code, 'INVALID_INPUT')
  const known = /known: (.*)$/.exec(envelope.error.message)
  assert.ok(known, envelope.error.message)
  return known[1].split(', ')
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
