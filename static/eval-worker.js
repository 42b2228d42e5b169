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
self.onmessage = async (e) => {
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
