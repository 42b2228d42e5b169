// Helpers for a model of your own that speaks HTTP (README: A model of your
// own): the outcome of a failed request, and the lines of an NDJSON
// body or the events of a Server-Sent Events body read from fetch. Plain
// JavaScript, no floe.wasm: what Floe's Go adapters do (provider/failure.go,
// provider/sse), for a stream read in JavaScript.
import { badArg, describe, errMessage, floeError, isObject, knownKeys, plainObject, retryWait } from "./internal.mjs";

// The most of an error body read for its message (the rest is cancelled).
const ERROR_BODY_MAX = 64 << 10;
// The most of the server's message quoted, in UTF-16 units.
const DETAIL_MAX = 300;

/**
 * The outcome of a failed request, as Floe's adapters give it: for a fetch
 * Response, null when it is ok, else by its status (401, 403 auth; 408, 409,
 * 429, 5xx timeout, but a 429 of insufficient_quota, a spent quota, failed,
 * permanent; another 4xx or a redirect not followed failed, permanent
 * for 400, 402, 404, 405, 413, 415, 422 and a redirect), the message naming
 * name, the status, the server's own message (read from at most 64 KiB of
 * the body) and Retry-After, a timeout's retryAfterMs the wait the server
 * asked for (retryWait); for anything else (what a fetch or a read of
 * its body threw), aborted once signal aborted (or for an AbortError),
 * malformed for a SyntaxError (JSON.parse) or a cut event stream, else
 * timeout (the network failed).
 */
export async function httpOutcome(what, name, signal) {
  if (name !== undefined && typeof name !== "string") throw badArg("httpOutcome: name", "a string", name);
  if (signal !== undefined && !(isObject(signal) && typeof signal.aborted === "boolean")) throw badArg("httpOutcome: signal", "an AbortSignal", signal);
  const prefix = name ? `${name}: ` : "";
  const aborted = () => ({ status: "aborted", errorMessage: `${prefix}aborted` });
  if (signal?.aborted) {
    if (isResponse(what) && !what.bodyUsed) what.body?.cancel?.().catch(() => {});
    return aborted();
  }
  if (!isResponse(what)) {
    const e = what;
    const ename = isObject(e) ? safe(() => e.name) : undefined;
    if (ename === "AbortError") return aborted();
    if (ename === "FloeError") return { status: "failed", errorMessage: prefix + errMessage(e), permanent: true };
    if (ename === "SyntaxError" || (isObject(e) && safe(() => e.code) === "truncated")) return { status: "malformed", errorMessage: `${prefix}malformed stream: ${errMessage(e)}` };
    return { status: "timeout", errorMessage: prefix + errorText(e) };
  }
  const res = what;
  const status = res.status;
  if (typeof res.ok === "boolean" ? res.ok : status >= 200 && status <= 299) return null;
  const redirect = res.type === "opaqueredirect" || (status >= 300 && status <= 399);
  let body = "";
  try {
    body = await readStart(res, signal);
  } catch {
    if (signal?.aborted) return aborted();
  }
  if (signal?.aborted) return aborted();
  let message = `${prefix}HTTP ${status}`;
  let detail = errorDetail(body);
  if (redirect && detail === "") {
    const to = header(res, "location");
    detail = `the server redirected${to ? ` to ${to}` : ""}, not followed: the request goes only to the URL it was sent to`;
  }
  if (detail) message += `: ${detail}`;
  const retryAfter = header(res, "retry-after");
  if (retryAfter) message += ` (Retry-After: ${retryAfter})`;
  if (status === 401 || status === 403) return { status: "auth", errorMessage: message };
  // OpenAI answers 429 to an account whose quota or credit is spent
  // (insufficient_quota) as to one past a rate limit: a retry cannot help.
  const spent = status === 429 && detail.includes("insufficient_quota");
  if (!spent && (status === 408 || status === 409 || status === 429 || status >= 500)) {
    const wait = retryWait((key) => header(res, key), body);
    return wait === undefined ? { status: "timeout", errorMessage: message } : { status: "timeout", errorMessage: message, retryAfterMs: wait };
  }
  const permanent = spent || redirect || [400, 402, 404, 405, 413, 415, 422].includes(status);
  return permanent ? { status: "failed", errorMessage: message, permanent: true } : { status: "failed", errorMessage: message };
}

// A Response, or an object shaped like one: a numeric status.
const isResponse = (v) => isObject(v) && typeof safe(() => v.status) === "number";

function safe(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function header(res, key) {
  const v = safe(() => (typeof res.headers?.get === "function" ? res.headers.get(key) : res.headers?.[key]));
  return typeof v === "string" ? v.trim() : "";
}

// readStart reads the start of an error body: at most ERROR_BODY_MAX
// bytes of its stream, the rest cancelled (the connection is let go).
async function readStart(res, signal) {
  if (res.bodyUsed) return "";
  const body = res.body;
  if (!body || typeof body.getReader !== "function") return typeof res.text === "function" ? String(await res.text()).slice(0, ERROR_BODY_MAX) : "";
  const reader = body.getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener?.("abort", onAbort, { once: true });
  const dec = new TextDecoder();
  let text = "";
  let n = 0;
  try {
    while (n < ERROR_BODY_MAX) {
      const { value, done } = await reader.read();
      if (done) return text + dec.decode();
      const chunk = value.subarray(0, ERROR_BODY_MAX - n);
      n += chunk.length;
      text += dec.decode(chunk, { stream: true });
    }
    reader.cancel().catch(() => {});
    return text + dec.decode();
  } finally {
    signal?.removeEventListener?.("abort", onAbort);
  }
}

// errorDetail reads the server's message from an error body: the type (or
// Google's status, or the code) and message of a JSON error in the shapes
// the providers use ({"error":{…}}, {"type":"error","error":{…}},
// {"code","message"}, {"error":"text"}, any of them first in a list), else
// the title of an HTML page, else the body's first line, clipped.
function errorDetail(body) {
  let j;
  try {
    j = JSON.parse(body);
  } catch {}
  if (Array.isArray(j)) j = j[0];
  if (isObject(j)) {
    const e = isObject(j.error) ? j.error : j;
    const str = (v) => (typeof v === "string" ? v : "");
    const message = str(e.message) || str(j.error) || str(j.message);
    const type = [e.type, e.status, j.type].map(str).find((t) => t !== "" && t !== "error") ?? "";
    const code = typeof e.code === "number" ? String(e.code) : str(e.code);
    const kind = type || code;
    if (kind || message) return clip(kind && message ? `${kind}: ${message}` : kind + message);
  }
  let s = body;
  const t = /<title[^>]*>([^<]*)/i.exec(s);
  if (t) s = t[1];
  return clip(s.split(/\r\n|\r|\n/, 1)[0].trim());
}

function clip(s) {
  if (s.length <= DETAIL_MAX) return s;
  let n = DETAIL_MAX;
  if (/[\uD800-\uDBFF]/.test(s[n - 1])) n--; // not half a surrogate pair
  return s.slice(0, n) + "…";
}

// errorText renders a network error: "Name: message", with the cause
// Node's fetch gives (ECONNREFUSED and the like).
function errorText(e) {
  if (!(e instanceof Error)) return errMessage(e);
  let s = `${e.name}: ${e.message}`;
  const c = safe(() => e.cause);
  if (isObject(c)) {
    const detail = [safe(() => c.code), safe(() => c.message)].filter((x) => typeof x === "string" && x !== "");
    if (detail.length) s += ` (${[...new Set(detail)].join(" ")})`;
  }
  return s;
}

function checkBody(body, fn) {
  if (!isObject(body) || typeof body.getReader !== "function") {
    throw floeError("bad_argument", `${fn}: body: want a ReadableStream (a fetch Response's body), got ${describe(body)}${body === null ? " (the response has no body)" : ""}`);
  }
}

const READ_OPTIONS = new Set(["signal"]);

function checkOptions(options, fn) {
  if (options === undefined) return undefined;
  plainObject(options, `${fn}: options`);
  knownKeys(options, READ_OPTIONS, `${fn}: options`);
  let signal;
  try {
    signal = options.signal;
  } catch (e) {
    throw floeError("bad_argument", `${fn}: options.signal: reading it threw: ${errMessage(e)}`);
  }
  if (signal !== undefined && !(isObject(signal) && typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function")) {
    throw badArg(`${fn}: options.signal`, "an AbortSignal", signal);
  }
  return signal;
}

// chunks yields the text of a byte stream, decoded as UTF-8 (a character
// split across reads comes whole; a leading BOM is dropped). An abort of
// signal cancels the stream and throws its reason; so does leaving early
// (break, a throw in the loop): the connection is closed.
async function* chunks(body, signal) {
  const reader = body.getReader();
  const onAbort = () => reader.cancel(signal.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  const dec = new TextDecoder();
  let finished = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      signal?.throwIfAborted();
      if (done) {
        finished = true;
        const rest = dec.decode();
        if (rest) yield rest;
        return;
      }
      const text = dec.decode(value, { stream: true });
      if (text) yield text;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {}
  }
}

/**
 * The lines of an NDJSON (JSON Lines) body: split at LF, a CR before it
 * dropped, a last line without its LF yielded too; lines of only
 * whitespace are skipped.
 */
export function readLines(body, options) {
  checkBody(body, "readLines");
  return lines(body, checkOptions(options, "readLines"));
}

async function* lines(body, signal) {
  let rest = ""; // the start of a line not yet ended
  for await (const text of chunks(body, signal)) {
    let from = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
      let line = rest + text.slice(from, nl);
      rest = "";
      from = nl + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.trim() !== "") yield line;
    }
    rest += text.slice(from);
  }
  if (rest.endsWith("\r")) rest = rest.slice(0, -1);
  if (rest.trim() !== "") yield rest;
}

/**
 * The events of a text/event-stream body, framed as the WHATWG HTML
 * standard says: any of CRLF, LF and CR ends a line; a line starting with
 * ":" is a comment; "field: value" (one space after the colon dropped);
 * data lines joined with "\n"; an event is dispatched at a blank line when
 * it has data; event "message" when it named none; id the last id seen
 * (it persists from event to event); retry and unknown fields ignored,
 * but llama.cpp's "error: {…}" line, data of an event of type "error". A
 * last event whose blank line never came is yielded (many servers leave
 * it out); a body that ends inside a line throws an Error whose code is
 * "truncated" (httpOutcome reads it as malformed).
 */
export function readEvents(body, options) {
  checkBody(body, "readEvents");
  return events(body, checkOptions(options, "readEvents"));
}

async function* events(body, signal) {
  let data = [];
  let event = "";
  let id = "";
  let fields = false; // a field of this event was seen
  let rest = ""; // the start of a line not yet ended
  let skipLF = false; // the last line ended with CR: an LF next belongs to it
  const field = (line) => {
    if (line.startsWith(":")) return;
    fields = true;
    const c = line.indexOf(":");
    const name = c < 0 ? line : line.slice(0, c);
    let value = c < 0 ? "" : line.slice(c + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "error") {
      // Not a field of the standard: llama.cpp's server sends an error
      // in a stream as a line "error: {…}", which the standard drops (the
      // stream then looked complete). It is data of an event of type
      // "error", as provider/sse reads it.
      if (event === "") event = "error";
      data.push(value);
    } else if (name === "event") event = value;
    else if (name === "id" && !value.includes("\0")) id = value;
  };
  const take = () => {
    const ev = { event: event || "message", data: data.join("\n"), id };
    const had = data.length > 0;
    data = [];
    event = "";
    fields = false;
    return had ? ev : null;
  };
  for await (const text of chunks(body, signal)) {
    let from = 0;
    if (skipLF && text.startsWith("\n")) from = 1;
    skipLF = false;
    // The next CR and LF at or after from, each looked for again only
    // once passed: a body of LF alone (most) has no CR, and a search for
    // one at every line read the rest of the chunk again (a chunk of
    // 4 MiB took 15 s).
    let cr = -2;
    let lf = -2;
    for (;;) {
      if (cr !== -1 && cr < from) cr = text.indexOf("\r", from);
      if (lf !== -1 && lf < from) lf = text.indexOf("\n", from);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      const line = rest + text.slice(from, end);
      rest = "";
      from = end + 1;
      if (text[end] === "\r") {
        if (from === text.length) skipLF = true;
        else if (text[from] === "\n") from++;
      }
      if (line !== "") field(line);
      else if (fields) {
        const ev = take();
        if (ev) yield ev;
      }
    }
    rest += text.slice(from);
  }
  if (rest !== "") {
    const e = new Error(`readEvents: the body ended in the middle of an event (its last line ${JSON.stringify(rest.length > 80 ? rest.slice(0, 80) + "…" : rest)} has no line end)`);
    e.code = "truncated";
    throw e;
  }
  if (fields) {
    const ev = take();
    if (ev) yield ev;
  }
}
