// The playground's service worker: it precaches the app's files on install
// and answers every request for them from the network first, falling back
// to the cache — so a rebuild is picked up at once, and the page loads with
// no network after the first visit. "The network" is the host, asked again
// each time (cache: "no-cache", a 304 when nothing changed): the browser's
// HTTP cache would answer for as long as the host's max-age lets it
// (GitHub Pages': 10 minutes), with the app of before the rebuild.
const CACHE = "floe-playground-v2";
const FILES = ["./", "index.html", "app.js", "connect.mjs", "playground.css", "wasm_exec.js", "playground.wasm", "eval-frame.html"];

self.addEventListener("install", (e) => {
  const fresh = FILES.map((f) => new Request(f, { cache: "no-cache" }));
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(fresh)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// The policy of the run_js sandbox (floe-serve's FrameCSP), for a host
// that serves eval-frame.html without one (a static host sends no headers
// of ours): sandbox allow-scripts puts the frame at an opaque origin, also
// when it comes from this cache with no network. The page falls back to a
// frame with the sandbox attribute when no policy arrives (the first
// visit, before this worker controls the page).
const FRAME_POLICY = "default-src 'none'; script-src 'sha256-9DbCcHIO3g7rc63p9gzd3JPaba/WXskqqPvcTQQoADk=' 'unsafe-eval'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts";

const scope = new URL("./", self.location.href);
const frame = new URL("eval-frame.html", scope).href;

// withPolicy gives the sandbox's response the policy when it has none.
function withPolicy(href, res) {
  if (href !== frame || !res.ok || res.headers.has("content-security-policy")) return res;
  const headers = new Headers(res.headers);
  headers.set("Content-Security-Policy", FRAME_POLICY);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

const cached = new Set(FILES.map((f) => new URL(f, scope).href));

self.addEventListener("fetch", (e) => {
  const req = e.request;
  const url = new URL(req.url);
  url.search = "";
  if (req.method !== "GET" || !cached.has(url.href)) return;
  e.respondWith(
    fetch(req, { cache: "no-cache" }).then(
      (res) => {
        if (res.ok) {
          const copy = res.clone();
          e.waitUntil(caches.open(CACHE).then((c) => c.put(url.href, copy)));
        }
        return withPolicy(url.href, res);
      },
      () => caches.open(CACHE).then((c) => c.match(url.href)).then((r) => (r ? withPolicy(url.href, r) : Response.error())),
    ),
  );
});
