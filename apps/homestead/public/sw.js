// The homestead app's service worker: it keeps the app's own files (and the last answers it read) so
// that the app opens without a network. Writes are never cached or replayed here: the page keeps
// its own queue of lay reports, each with the id it chose, and sends them when the network is back.
const CACHE = 'homestead-v1';
const SHELL = './';

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const page = await fetch(SHELL, { cache: 'no-store' });
      const html = await page.clone().text();
      const assets = [...html.matchAll(/(?:src|href)="(\/homestead\/[^"]+)"/g)].map((m) => m[1]);
      await cache.put(SHELL, page);
      await cache.addAll(assets);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

// The app's files: network first (a new build shows at once), the cached copy when offline.
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (
    event.request.method !== 'GET' ||
    url.origin !== location.origin ||
    !url.pathname.startsWith('/homestead/')
  )
    return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const answer = await fetch(event.request);
        if (answer.ok) await cache.put(event.request, answer.clone());
        return answer;
      } catch (error) {
        const cached = await cache.match(event.request, { ignoreSearch: true });
        if (cached) return cached;
        throw error;
      }
    })(),
  );
});
