// The playground's JavaScript sandbox: a dedicated Worker that runs one
// piece of code and posts back its console output and its completion value
// (or the exception). The page terminates the worker afterwards, on a
// timeout or on Stop. floe-serve serves this file with a
// Content-Security-Policy that allows eval here and nothing else: no
// network, no imports.
const show = (v) => {
  if (typeof v === "string") return v;
  if (typeof v === "undefined") return "undefined";
  if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
};
// The worker runs at the page's origin: without this, code could read
// every session's Trace (IndexedDB) and put a page of its own in the
// service worker's cache, which serves it, without the page's policy, when
// the network is down. The origin's storage is taken out of reach before
// any code runs; if some of it cannot be, no code runs.
const storage = [
  [self, ["indexedDB", "caches", "webkitRequestFileSystem", "webkitRequestFileSystemSync", "webkitResolveLocalFileSystemURL", "webkitResolveLocalFileSystemSyncURL"]],
  [self.navigator, ["storage", "storageBuckets"]],
];
const kept = [];
for (const [obj, names] of storage) {
  for (const k of names) {
    for (let o = obj; o; o = Object.getPrototypeOf(o)) Reflect.deleteProperty(o, k);
    if (obj && k in obj) kept.push(k);
  }
}
self.onmessage = async (e) => {
  if (kept.length) {
    postMessage({ console: [], error: `the sandbox could not take ${kept.join(", ")} out of reach, so it ran no code` });
    return;
  }
  const lines = [];
  for (const k of ["log", "info", "warn", "error", "debug"]) {
    console[k] = (...args) => lines.push((k === "log" ? "" : k + ": ") + args.map(show).join(" "));
  }
  try {
    const value = await (0, eval)(String(e.data.code));
    postMessage({ console: lines, result: show(value) });
  } catch (err) {
    postMessage({ console: lines, error: String((err && err.stack) || err) });
  }
};
