// A tiny static server for the playground, on the loopback interface only:
//   /            → bindings-wasm/playground/   (the page, its modules, the service worker)
//   /pkg/…       → bindings-wasm/pkg/web/      (the wasm package, ES module build)
//   /vectors/…   → tests/vectors/              (the conformance vectors the examples replay)
// No directory listings, nothing outside those roots, correct MIME types (application/wasm).
// `scripts/playground [port]` runs it; the browser test imports startServer().
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const MOUNTS = [
  ['/pkg/', path.join(ROOT, 'bindings-wasm/pkg/web')],
  ['/vectors/', path.join(ROOT, 'tests/vectors')],
  ['/', path.join(ROOT, 'bindings-wasm/playground')],
]

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
}

/** Maps a request path to a file inside one of the roots, or null. */
export function resolvePath(urlPath) {
  let decoded
  try {
    decoded = decodeURIComponent(urlPath)
  } catch {
    return null
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null
  if (decoded.split('/').some((seg) => seg === '..' || seg === '.')) return null
  for (const [prefix, dir] of MOUNTS) {
    if (!decoded.startsWith(prefix)) continue
    let rel = decoded.slice(prefix.length)
    if (rel === '' || rel.endsWith('/')) rel += 'index.html'
    const file = path.resolve(dir, rel)
    if (file !== dir && !file.startsWith(dir + path.sep)) return null
    return file
  }
  return null
}

function send(res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff' })
  res.end(body)
}

function handle(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD')
    return send(res, 405, 'method not allowed\n')
  }
  const url = new URL(req.url, 'http://localhost')
  const file = resolvePath(url.pathname)
  if (!file) return send(res, 404, 'not found\n')
  fs.stat(file, (err, st) => {
    // Symlinks are followed only when they stay inside the root (realpath check).
    if (err || !st.isFile()) return send(res, 404, 'not found\n')
    fs.realpath(file, (err2, real) => {
      const inside = !err2 && MOUNTS.some(([, dir]) => real === dir || real.startsWith(fs.realpathSync(dir) + path.sep))
      if (!inside) return send(res, 404, 'not found\n')
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': st.size,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        // The service worker lives at /sw.js and controls the whole origin.
        ...(url.pathname === '/sw.js' ? { 'Service-Worker-Allowed': '/' } : {}),
      })
      if (req.method === 'HEAD') return res.end()
      fs.createReadStream(file).on('error', () => res.destroy()).pipe(res)
    })
  })
}

/** Builds the wasm package when bindings-wasm/pkg/web is missing (scripts/build-wasm). */
export function ensureWasmBuilt({ log = console.error } = {}) {
  const entry = path.join(ROOT, 'bindings-wasm/pkg/web/clarify.mjs')
  if (fs.existsSync(entry)) return
  log('bindings-wasm/pkg/web is missing: running scripts/build-wasm')
  const r = spawnSync(path.join(ROOT, 'scripts/build-wasm'), { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  if (!fs.existsSync(entry)) throw new Error(`scripts/build-wasm did not produce ${entry} (exit ${r.status})`)
  // build-wasm also fails when the module is over its size budget; the page still works.
  if (r.status !== 0) log(`scripts/build-wasm exited ${r.status}, but the package is there: serving it`)
}

/** Starts the server on 127.0.0.1 (port 0 = a free one). Resolves to {url, port, close()}. */
export function startServer({ port = 0, host = '127.0.0.1' } = {}) {
  const server = http.createServer(handle)
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      const { port: actual } = server.address()
      resolve({
        url: `http://${host}:${actual}/`,
        port: actual,
        server,
        close: () => new Promise((done) => {
          server.closeAllConnections?.()
          server.close(() => done())
        }),
      })
    })
  })
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = process.argv[2]
  const port = arg === undefined ? 0 : Number(arg)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`usage: scripts/playground [port]   (port must be 0-65535, not ${arg})`)
    process.exit(2)
  }
  try {
    ensureWasmBuilt()
    const { url } = await startServer({ port })
    console.log(`AgentX Clarify playground: ${url}`)
    console.log('(serving bindings-wasm/playground, bindings-wasm/pkg/web and tests/vectors; Ctrl+C stops)')
  } catch (e) {
    console.error(`playground: ${e.message}`)
    process.exit(1)
  }
}
