// The playground's service worker: it precaches the app's files on install
// and answers every request for them from the network first, falling back
// to the cache — so a rebuild is picked up at once, and the page loads with
// no network after the first visit.
const CACHE = "floe-playground-v2";
const FILES = ["./", "index.html", "app.js", "connect.mjs", "playground.css", "wasm_exec.js", "playground.wasm", "eval-frame.html"];

self.addEventListener("install", (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

const scope = new URL("./", self.location.href);
const cached = new Set(FILES.map((f) => new URL(f, scope).href));

self.addEventListener("fetch", (e) => {
  const req = e.request;
  const url = new URL(req.url);
  url.search = "";
  if (req.method !== "GET" || !cached.has(url.href)) return;
  e.respondWith(
    fetch(req).then(
      (res) => {
        if (res.ok) {
          const copy = res.clone();
          e.waitUntil(caches.open(CACHE).then((c) => c.put(url.href, copy)));
        }
        return res;
      },
      () => caches.open(CACHE).then((c) => c.match(url.href)).then((r) => r || Response.error()),
    ),
  );
});
