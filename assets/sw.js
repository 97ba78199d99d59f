// App-shell service worker: pages and built chunks are cached so the app opens offline.
// API, Reflex event, sign-in and Drive traffic is never cached.
// v2: pages are kept by path alone; activating it deletes v1, which kept every query string.
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
        .then((response) => remember(page, response))
        .catch(() => caches.match(page).then((hit) => hit || caches.match("/"))),
    );
  } else if (url.pathname.startsWith("/assets/")) {
    // Hashed build chunks never change: cache first.
    event.respondWith(
      caches.match(request).then((hit) => hit || fetch(request).then((response) => remember(request, response))),
    );
  }
});
