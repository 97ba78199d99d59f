// App-shell service worker: pages and built chunks are cached so the app opens offline.
// API, Reflex event, sign-in and Drive traffic is never cached.
// v2: pages are kept by path alone; activating it deletes v1, which kept every query string.
// A page of a new build drops the chunks of the builds before (dropOldBuilds).
const CACHE = "newbl-shell-v2";
const SHELL = ["/", "/manifest.webmanifest", "/icon-192.png", "/icon-512.png", "/favicon.ico"];
const NEVER = ["/api/", "/_event", "/_upload", "/_health", "/ping", "/dev-idp", "/dev-drive"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

function remember(key, response) {
  if (response.ok && response.type === "basic") {
    const copy = response.clone();
    caches.open(CACHE).then((c) => c.put(key, copy));
  }
  return response;
}

// The build a page comes from: React Router's manifest chunk, named by the build's version.
const BUILD_KEY = "/__newbl-build";
const MANIFEST = /\/assets\/manifest-[0-9a-f]+\.js/;

// A page fetched from the network names its build. When that is another build than the last one
// seen, the chunks no page names are dropped: every build's chunks were kept for good (this
// worker's file, and so its cache, does not change with a deploy), some 1.5 MB more on the phone
// for each deploy. The cache keeps one page per path, and the other cached pages (/, the offline
// fallback, /payment, /send, ...) are still an earlier build's HTML: the chunks they name stay, or
// those pages would break offline. An earlier build's chunks go once no cached page names them (a
// page fetched again replaces its HTML; the next new build's drop deletes them). A chunk of the new
// build not named by a page, or one an old tab still asks for, is fetched again when asked (the
// browser's HTTP cache keeps chunks a year).
async function dropOldBuilds(page, html) {
  const build = (html.match(MANIFEST) || [])[0];
  if (!build) return;
  const cache = await caches.open(CACHE);
  const seen = await cache.match(BUILD_KEY);
  const last = seen ? await seen.text() : null;
  if (last === build) return;
  if (last !== null) {
    const requests = await cache.keys();
    // The pages held: each cached entry but the chunks, the build mark, and this page's own path
    // (its HTML is being replaced by the new page's).
    const pages = [html];
    const pagePath = new URL(page).pathname;
    for (const request of requests) {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/assets/") || path === BUILD_KEY || path === pagePath) continue;
      const hit = await cache.match(request);
      if (hit) pages.push(await hit.text());
    }
    for (const request of requests) {
      const path = new URL(request.url).pathname;
      if (!path.startsWith("/assets/")) continue;
      if (!pages.some((text) => text.includes(path))) await cache.delete(request);
    }
  }
  await cache.put(BUILD_KEY, new Response(build));
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (NEVER.some((prefix) => url.pathname.startsWith(prefix))) return;
  if (request.mode === "navigate") {
    // Network first, so a new build and the server's redirects win; the cached shell offline.
    // Kept under its path alone: a page is the same for every query, and a query (a transaction
    // to sign, a payment link) must not stay on the device after sign-out, one entry per link.
    const page = url.origin + url.pathname;
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok && response.type === "basic") {
            const html = response.clone().text();
            event.waitUntil(html.then((text) => dropOldBuilds(page, text)).catch(() => {}));
          }
          return remember(page, response);
        })
        .catch(() => caches.match(page).then((hit) => hit || caches.match("/"))),
    );
  } else if (url.pathname.startsWith("/assets/")) {
    // Hashed build chunks never change: cache first.
    event.respondWith(
      caches.match(request).then((hit) => hit || fetch(request).then((response) => remember(request, response))),
    );
  }
});
