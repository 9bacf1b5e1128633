// Offline support: the page, its modules, the wasm package and the example vectors are cached
// when the service worker installs. Requests go to the network first (so a rebuilt package or
// an edited page is picked up at once) and fall back to the cache when offline.
const CACHE = 'agentx-clarify-playground-v1'
const PRECACHE = [
  './',
  'index.html',
  'style.css',
  'app.js',
  'session.js',
  'dom.js',
  'format.js',
  'clock.js',
  'forms.js',
  'timeline.js',
  'views.js',
  'graph-view.js',
  'editor.js',
  'engine.js',
  'markdown.js',
  'graph.js',
  'state.js',
  'examples.js',
  'pkg/clarify.mjs',
  'pkg/wrap.js',
  'pkg/agentx_clarify_wasm.js',
  'pkg/agentx_clarify_wasm_bg.wasm',
  'vectors/playground/happy_path.json',
  'vectors/playground/three_agent_deadlock.json',
  'vectors/core/follow_up_max_rounds.json',
  'vectors/monitor/stale_retry_escalate.json',
  'vectors/monitor/stuck_repeated_questions.json',
  'vectors/monitor/deadlock_three_agents.json',
  'vectors/monitor/stuck_direction_flip.json',
  'vectors/monitor/abandoned_after_state_change.json',
  'vectors/monitor/stale_max_retries_two.json',
  'vectors/core/scope_check_order.json',
  'vectors/core/events_lifecycle.json',
]

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE)
    // One missing file must not cost the rest: cache what can be fetched.
    await Promise.all(PRECACHE.map((url) => cache.add(new Request(url, { cache: 'reload' })).catch(() => {})))
    await self.skipWaiting()
  })())
})

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key)
    await self.clients.claim()
  })())
})

self.addEventListener('fetch', (event) => {
  const req = event.request
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return
  event.respondWith((async () => {
    const cache = await caches.open(CACHE)
    try {
      const res = await fetch(req)
      if (res.ok) await cache.put(req, res.clone())
      return res
    } catch (err) {
      const hit = (await cache.match(req, { ignoreSearch: true })) ?? (req.mode === 'navigate' ? await cache.match('./') : undefined)
      if (hit) return hit
      throw err
    }
  })())
})
