// Floe's remote client: a session hosted by a Floe server (floe-server, or
// the Cloudflare Worker target), followed and driven over HTTP and SSE
// (TRANSPORT.md). It needs no WebAssembly: import it alone, or call
// floe.connect() after load().
//
// The stream is read with fetch, so a bearer token travels in the
// Authorization header (EventSource cannot send one). The client follows
// TRANSPORT.md §7: it connects the stream first and buffers, fetches
// /messages, drops buffered fragments the history's live snapshot already
// covers and seeds that snapshot's open fragments, skips complete messages
// already in history, then goes live; on resync_required it fetches
// /messages again and hands over only what it had not yet delivered. A
// dropped connection is reopened with Last-Event-ID.

function floeError(code, message) {
  const e = new Error(message);
  e.name = "FloeError";
  e.code = code;
  return e;
}

// knownKeys refuses an option object's own keys that are not in known (a
// misspelt option would be ignored without a word), naming the known ones.
// (connect.mjs imports nothing: the playground loads it alone.)
// isOptions reports whether v is an options object: not an array, Map,
// Date or other built-in collection.
const isOptions = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Object.prototype.toString.call(v) === "[object Object]";

function knownKeys(obj, known, name) {
  for (const k of Object.keys(obj)) {
    if (known.includes(k)) continue;
    const near = known.find((c) => editDistance(k.toLowerCase(), c.toLowerCase()) <= 2);
    throw floeError("bad_argument", `${name}.${k}: unknown option${near ? ` (did you mean ${near}?)` : ""}; known: ${known.join(", ")}`);
  }
}

function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

const isPartial = (m) => typeof m?.payload?.type === "string" && m.payload.type.startsWith("partial_");
const canonical = (m) => JSON.stringify(m);
const seqOf = (id) => {
  const i = id.lastIndexOf("-");
  return i < 0 ? -1 : Number(id.slice(i + 1));
};
const epochOf = (id) => id.slice(0, Math.max(0, id.lastIndexOf("-")));
const transient = (status) => status === 502 || status === 503 || status === 504;

// parseJSON returns the value of a JSON text, or undefined when text is
// empty or not JSON (a proxy's error page).
function parseJSON(text) {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// onAbortOf calls fn when the user's signal aborts and returns what stops
// it. The runs listening to one signal share one listener, removed with
// the last: one each made Node warn of a leak when a signal (a Stop
// button's, a server's shutdown) aborted more than ten runs at once.
const signalRuns = new WeakMap(); // signal → Set of fns
function onAbortOf(signal, fn) {
  if (!signal) return () => {};
  let fns = signalRuns.get(signal);
  if (!fns) {
    fns = new Set();
    const listener = () => {
      signalRuns.delete(signal);
      for (const f of [...fns]) f();
    };
    fns.listener = listener;
    signalRuns.set(signal, fns);
    signal.addEventListener("abort", listener, { once: true });
  }
  fns.add(fn);
  return () => {
    if (!fns.delete(fn) || fns.size > 0 || signalRuns.get(signal) !== fns) return;
    signalRuns.delete(signal);
    signal.removeEventListener("abort", fns.listener);
  };
}

// excerpt quotes the start of an answer that is not the API's JSON, for an
// error message: ` "<html>…"`, cut on a whole character (half an emoji was
// quoted as "\ud83d").
const excerpt = (text) =>
  text ? " " + JSON.stringify(text.length > 80 ? text.slice(0, /[\ud800-\udbff]/.test(text[79]) ? 79 : 80) + "…" : text) : "";

// sseEvents parses a text/event-stream body into {id, event, data} objects,
// as the HTML standard's event stream says: any of CRLF, LF and CR ends a
// line (a CR ending one read and an LF opening the next are one line end),
// a line starting with ":" is a comment, one space after the field's
// colon is dropped, data lines are joined with "\n", an id holding U+0000
// is ignored, other fields are ignored, and a block not ended by a blank
// line when the body ends is dropped.
// A body that brings nothing, not even the server's ": ping" (every 20 s,
// TRANSPORT.md T-11), for stallMs is a connection that went silent (a lost
// link drops no FIN): it ends with an error, and the follower reconnects.
// Any of signals cancels the body and its timer, wherever the reading
// stands (an event yielded that no one takes included).
async function* sseEvents(body, signals, stallMs) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = ""; // the start of a line not yet ended
  let skipLF = false; // the last read ended with CR: an LF next belongs to it
  let ev = { id: "", event: "", data: [] };
  let stalled = false;
  let timer = null;
  const onAbort = () => {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  };
  for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      reader.cancel().catch(() => {});
    }, stallMs);
  };
  const field = (line) => {
    if (line.startsWith(":")) return;
    const c = line.indexOf(":");
    const name = c < 0 ? line : line.slice(0, c);
    let value = c < 0 ? "" : line.slice(c + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "id") {
      if (!value.includes("\0")) ev.id = value;
    } else if (name === "event") ev.event = value;
    else if (name === "data") ev.data.push(value);
  };
  try {
    for (;;) {
      arm();
      const { value, done } = await reader.read();
      if (stalled) throw floeError("network", `stream: nothing came for ${stallMs} ms`);
      if (done) return;
      const text = decoder.decode(value, { stream: true });
      if (text === "") continue;
      let from = skipLF && text[0] === "\n" ? 1 : 0;
      skipLF = false;
      // The next CR and LF at or after from, each looked for again only
      // once passed: a stream of LF alone has no CR to look for at each line.
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
        if (line !== "") {
          field(line);
          continue;
        }
        // A block without data is no event (HTML's event stream): an
        // id alone still moves the last event id (data null).
        const e = ev;
        ev = { id: "", event: "", data: [] };
        if (e.data.length > 0) yield { id: e.id, event: e.event, data: e.data.join("\n") };
        else if (e.id !== "") yield { id: e.id, event: "", data: null };
      }
      rest += text.slice(from);
    }
  } finally {
    clearTimeout(timer);
    for (const s of signals) s.removeEventListener("abort", onAbort);
    reader.releaseLock?.();
  }
}

/**
 * Connects to session sessionId of the Floe server at baseURL. Options:
 * token (bearer token), fetch (a fetch implementation; default
 * globalThis.fetch), reconnectDelayMs (wait before reopening a dropped
 * stream, or posting a decision again; default 1000), stallMs (a stream
 * that brings nothing for that long, pings included, is reopened, a
 * first connection that meets only a gateway's 502–504 for that long ends,
 * and a request not answered within it is a timeout; default 45000, two
 * of the server's pings).
 */
export function connect(baseURL, sessionId, options = {}) {
  if (typeof baseURL !== "string" || baseURL === "") throw floeError("bad_argument", "connect: baseURL: want a URL string");
  // "localhost:8787" (no scheme) was fetched as a URL of scheme localhost:,
  // or as a path of the page's own server: an error that named neither. A
  // path ("/", the page's own server) is taken.
  if (!/^(https?:\/\/[^/?#]|\/)/i.test(baseURL)) throw floeError("bad_argument", `connect: baseURL: want an http or https URL such as http://127.0.0.1:8787 (or a path on the page's own server), got ${JSON.stringify(baseURL)}`);
  if (typeof sessionId !== "string" || sessionId === "") throw floeError("bad_argument", "connect: sessionId: want a non-empty string");
  if (!isOptions(options)) throw floeError("bad_argument", "connect: options: want an object, not an array or other collection");
  knownKeys(options, ["token", "fetch", "reconnectDelayMs", "stallMs"], "connect: options");
  const { token, reconnectDelayMs = 1000, stallMs = 45000 } = options;
  if (token !== undefined && typeof token !== "string") throw floeError("bad_argument", "connect: token: want a string");
  if (options.fetch != null && typeof options.fetch !== "function") throw floeError("bad_argument", "connect: fetch: want a function (url, init) → Promise<Response>");
  for (const [k, v] of [["reconnectDelayMs", reconnectDelayMs], ["stallMs", stallMs]]) {
    if (!(Number.isFinite(v) && v >= 0 && v <= 2 ** 31 - 1)) throw floeError("bad_argument", `connect: ${k}: want a number of milliseconds from 0 to 2147483647`);
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  let path;
  try {
    path = encodeURIComponent(sessionId);
  } catch {
    // Half a surrogate pair (URIError: URI malformed).
    const half = JSON.stringify(sessionId.match(/[\uD800-\uDFFF]/u)?.[0] ?? "").slice(1, -1);
    throw floeError("bad_argument", `connect: sessionId: ${JSON.stringify(sessionId)} holds half a surrogate pair (${half}), which no URL can name`);
  }
  const base = baseURL.replace(/\/+$/, "") + "/api/sessions/" + path;
  const headers = (extra = {}) => (token ? { ...extra, Authorization: `Bearer ${token}` } : extra);

  // answered fetches url and resolves to read(resp)'s value, within
  // stallMs: past it, the fetch is aborted and answered rejects with a
  // timeout FloeError naming what was asked (a server or a proxy that
  // takes a request and never answers held it, and a run waiting on its
  // POST, for ever). close() aborts it. A fetch function that does not
  // heed the signal is not waited for either; a Response it gives late
  // has its body cancelled. leave, an AbortSignal, gives it up too: its
  // connection was left, and nothing of its answer is taken.
  async function answered(what, url, init, read, leave) {
    const ctl = new AbortController();
    let late = false;
    let timer;
    let onStop, onLeave;
    const given = new Promise((_, reject) => {
      timer = setTimeout(() => {
        late = true;
        ctl.abort();
        const posted = init.method !== undefined && init.method !== "GET";
        reject(floeError("timeout", `${what}: no answer within ${stallMs} ms (stallMs)${posted ? ": given up, though it may have reached the server" : ""}`));
      }, stallMs);
      onStop = () => {
        ctl.abort();
        reject(floeError("closed", "remote session: closed"));
      };
      onLeave = () => {
        ctl.abort();
        reject(floeError("network", `${what}: given up: its connection was left`));
      };
      stop.signal.addEventListener("abort", onStop, { once: true });
      if (leave?.aborted) onLeave();
      leave?.addEventListener("abort", onLeave, { once: true });
    });
    const answer = (async () => {
      const resp = await doFetch(url, { ...init, signal: ctl.signal });
      if (late || stop.signal.aborted || leave?.aborted) {
        resp?.body?.cancel?.()?.catch?.(() => {});
        throw floeError("timeout", `${what}: answered too late`);
      }
      return read(resp);
    })();
    answer.catch(() => {}); // (given rejected first)
    try {
      return await Promise.race([answer, given]);
    } finally {
      clearTimeout(timer);
      stop.signal.removeEventListener("abort", onStop);
      leave?.removeEventListener("abort", onLeave);
    }
  }

  // request calls the server; close() aborts the requests in flight, and
  // one not answered within stallMs is a timeout, one whose leave aborts
  // given up (answered).
  async function request(method, path, body, leave) {
    if (closed) throw floeError("closed", "remote session: closed");
    const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    let resp, text;
    try {
      ({ resp, text } = await answered(`${method} ${path}`, base + path, init, async (r) => ({ resp: r, text: await r.text() }), leave));
    } catch (e) {
      if (closed) throw floeError("closed", "remote session: closed");
      if (e?.name === "FloeError" && e.code === "timeout") throw e;
      if (leave?.aborted) throw floeError("network", `${method} ${path}: given up: its connection was left`);
      // The request did not reach the server, or its answer did not come
      // back: a FloeError like the server's refusals, the cause kept.
      throw Object.assign(floeError("network", `${method} ${path}: ${e?.message ?? String(e)}`), { cause: e });
    }
    const json = parseJSON(text);
    if (!resp.ok) {
      const err = json?.error ?? {};
      throw Object.assign(floeError(err.code ?? `http_${resp.status}`, err.message ?? `${method} ${path}: ${resp.status}${excerpt(text)}`), {
        status: resp.status,
      });
    }
    if (text && json === undefined) {
      throw Object.assign(floeError("bad_response", `${method} ${path}: ${resp.status}: want a JSON answer, got${excerpt(text)}`), { status: resp.status });
    }
    return { status: resp.status, json };
  }

  // ---- the follower: one stream for the session, shared by every iterator ----

  const listeners = new Set(); // each gets {kind:"message"|"state"|"approval"|"history", ...}
  // Approvals: pending holds the tool calls awaiting a decision, by
  // tool_call_id, from their approval_request until the stream shows them
  // decided (approval_decision, tool_call_output) or the run idle; a
  // request for an id already pending is the server re-sending it to a
  // reconnecting subscriber, not a new call. answering marks the ids this
  // client is answering ("asking") or has answered ("decided") while they
  // are pending, so each is answered at most once.
  const pending = new Map();
  const answering = new Map();
  let state = "idle";
  let lastId = null;
  let closed = false;
  let started = null;
  let loaded = false; // history applied once: the stream is open
  const stop = new AbortController();

  const emit = (ev) => {
    if (ev.kind === "message") track(ev.message);
    for (const l of listeners) l(ev);
  };

  // Fragments this client has handed over and not yet closed, by key
  // (P-8: type and tool_call_id), with the body delivered so far. After a
  // resync the history's live snapshot and fresh messages are reconciled
  // with them, so that what the iterators see keeps P-6: one start, the
  // deltas, one stop, then the complete message.
  const bodyKey = { partial_text: "text", partial_thinking: "thinking", partial_tool_call: "arguments", partial_tool_call_output: "output" };
  const fragKey = (p) => p.type + "\u0000" + (p.tool_call_id ?? "");
  const openFrags = new Map();
  function track(m) {
    const p = m?.payload;
    if (!p || typeof p.type !== "string") return;
    const field = bodyKey[p.type];
    if (field) {
      const k = fragKey(p);
      if (p.event_type === "start") openFrags.set(k, { start: m, body: typeof p[field] === "string" ? p[field] : "" });
      else if (p.event_type === "delta") {
        const f = openFrags.get(k);
        if (f && typeof p[field] === "string") f.body += p[field];
      } else if (p.event_type === "stop") openFrags.delete(k);
    } else if (bodyKey["partial_" + p.type]) openFrags.delete(fragKey({ type: "partial_" + p.type, tool_call_id: p.tool_call_id }));
  }
  // closing is the stop of an open fragment that ended while the stream
  // was away (its stop fell in the gap): stop_reason from its complete
  // message when known.
  function closing(f, complete) {
    const p = f.start.payload;
    const payload = { ...p, event_type: "stop", [bodyKey[p.type]]: "" };
    delete payload.images;
    if (complete?.payload?.stop_reason !== undefined) payload.stop_reason = complete.payload.stop_reason;
    return { ...f.start, timestamp: complete?.timestamp ?? f.start.timestamp, payload };
  }
  // seed hands over the live snapshot's fragments after a history: a
  // fragment this client already opened gets only what it has not seen (a
  // delta with the rest of the body), not a second start.
  function seed(fragments) {
    for (const f of fragments) {
      const p = f.payload;
      const field = bodyKey[p?.type];
      const open = field ? openFrags.get(fragKey(p)) : undefined;
      const body = typeof p?.[field] === "string" ? p[field] : "";
      if (open && body.startsWith(open.body)) {
        const rest = body.slice(open.body.length);
        if (rest !== "" || p.images !== undefined) emit({ kind: "message", message: { ...f, payload: { ...p, event_type: "delta", [field]: rest } } });
        continue;
      }
      if (open) emit({ kind: "message", message: closing(open) });
      emit({ kind: "message", message: f });
    }
  }

  // A run's stream ends with its last request's request_end, an abort, the
  // max_turns notice (a failed text) or a compaction_end (ENGINE.md E-3.5).
  const terminal = (m) => {
    const p = m?.payload;
    return p?.type === "request_end" || p?.type === "abort" || p?.type === "compaction_end" || (p?.type === "text" && p.role === "assistant" && p.stop_reason === "failed");
  };
  const cutOff = "the run was cut off: the server stopped before it ended";

  const log = []; // complete messages delivered so far, in order
  let expected = []; // keys of history's unpublished tail, which the stream may still bring

  function settle(id) {
    pending.delete(id);
    answering.delete(id);
  }
  function settleAll() {
    pending.clear();
    answering.clear();
  }

  function deliver(msg) {
    const t = msg?.payload?.type;
    if ((t === "approval_decision" || t === "tool_call_output") && typeof msg.payload.tool_call_id === "string") settle(msg.payload.tool_call_id);
    if (!isPartial(msg)) {
      const i = expected.indexOf(canonical(msg));
      if (i >= 0) {
        expected.splice(0, i + 1); // already delivered from history
        return;
      }
      log.push(msg);
    }
    emit({ kind: "message", message: msg });
  }

  function serverEvent(data) {
    switch (data.type) {
      case "task_state":
        state = data.state;
        if (state === "idle") settleAll(); // an ended run leaves nothing pending
        emit({ kind: "state", state: data.state, event: data });
        break;
      case "approval_request": {
        const id = data.toolCall?.payload?.tool_call_id;
        if (id && !pending.has(id)) {
          pending.set(id, data.toolCall);
          emit({ kind: "approval", toolCall: data.toolCall });
        }
        break;
      }
    }
  }

  // history fetches /messages (§7): it delivers the complete messages not
  // yet delivered (counted, so repeated identical messages stay apart) and
  // returns the cursor and the live snapshot. leave is its connection's
  // signal: an answer that comes after the connection was left is not
  // applied (an older snapshot than the next connection's: its state and
  // pending approvals would undo what the stream since brought).
  async function history(leave) {
    const { json } = await request("GET", "/messages", undefined, leave);
    if (leave.aborted) throw floeError("network", "GET /messages: given up: its connection was left");
    const wasBusy = state !== "idle";
    const counts = new Map();
    for (const m of log) counts.set(canonical(m), (counts.get(canonical(m)) ?? 0) + 1);
    const fresh = [];
    for (const m of json.messages) {
      if (m.type === "session_meta") continue;
      const key = canonical(m);
      const c = counts.get(key) ?? 0;
      if (c > 0) counts.set(key, c - 1);
      else {
        // A fragment this client left open ended while the stream was
        // away: its stop comes before its complete message.
        const f = bodyKey["partial_" + m.payload?.type] && openFrags.get(fragKey({ type: "partial_" + m.payload.type, tool_call_id: m.payload.tool_call_id }));
        if (f) {
          // The deltas it missed, then its stop (P-6, P-7).
          const field = bodyKey[f.start.payload.type];
          const body = m.payload[field];
          if (typeof body === "string" && body.startsWith(f.body) && body.length > f.body.length) {
            fresh.push({ ...f.start, timestamp: m.timestamp, payload: { ...f.start.payload, event_type: "delta", [field]: body.slice(f.body.length) } });
          }
          fresh.push(closing(f, m));
        }
        fresh.push(m);
      }
    }
    // A run this client saw in flight that the history shows idle and
    // ended on none of a run's last messages was cut off (a crash or a
    // restart of the server): its open fragments are closed, as the engine
    // closes an aborted run's (a stop and the complete message, both
    // "aborted"), and it ends with an abort that says so, for run() and
    // messages() alike.
    if (wasBusy && json.state === "idle" && !terminal(json.messages.filter((m) => m.type !== "session_meta").at(-1))) {
      const now = new Date().toISOString();
      const stopped = new Set(fresh.filter(isPartial).map((m) => fragKey(m.payload)));
      for (const [k, f] of openFrags) {
        if (stopped.has(k)) continue;
        const p = f.start.payload;
        fresh.push({ ...closing(f), timestamp: now, payload: { ...closing(f).payload, stop_reason: "aborted" } });
        const { event_type, images, ...rest } = p;
        fresh.push({ ...f.start, timestamp: now, payload: { ...rest, type: p.type.slice("partial_".length), [bodyKey[p.type]]: f.body, stop_reason: "aborted" } });
      }
      fresh.push({ timestamp: now, type: "event_msg", payload: { type: "abort", reason: cutOff } });
    }
    const u = json.unpublished ?? { from: 0, count: 0 };
    expected = json.messages.slice(u.from, u.from + u.count).map(canonical);
    state = json.state;
    // The snapshot's pending approvals replace the stream's view; the ones
    // not known before (requested while the stream was away) are announced.
    const announce = [];
    const now = new Map();
    for (const call of json.pendingApprovals ?? []) {
      const id = call?.payload?.tool_call_id;
      if (typeof id !== "string") continue;
      now.set(id, call);
      if (!pending.has(id)) announce.push(call);
    }
    for (const id of [...answering.keys()]) if (!now.has(id)) answering.delete(id);
    pending.clear();
    for (const [id, call] of now) pending.set(id, call);
    log.push(...fresh.filter((m) => !isPartial(m)));
    loaded = true;
    emit({ kind: "history", messages: fresh, state: json.state });
    for (const m of fresh) emit({ kind: "message", message: m, history: true });
    for (const call of announce) emit({ kind: "approval", toolCall: call });
    return { cursor: json.cursor, live: json.live ?? null };
  }

  // handle takes one event of the stream: a session message unnamed (or
  // named "message", the HTML standard's name for an unnamed one), a
  // server event named server_event (TRANSPORT.md T-1); an event of
  // another name is neither, and ignored, as EventSource's onmessage
  // ignores it. Data that is not JSON (a proxy's page, a server that is
  // not Floe's) ends the follower with an error naming the event, not
  // JSON.parse's bare SyntaxError.
  function handle(e) {
    if (e.event !== "" && e.event !== "message" && e.event !== "server_event") return;
    const data = parseJSON(e.data);
    if (data === undefined) throw Object.assign(floeError("bad_response", `stream: event ${e.id || "without an id"}: want JSON, got${excerpt(e.data) || " nothing"}`), { fatal: true });
    if (e.event === "server_event") serverEvent(data);
    else deliver(data);
  }

  // Known by its type, not its bytes: a server of the contract may write
  // its JSON with spaces ({"type": "resync_required"}, Python's json.dumps).
  const isResync = (e) => e.event === "server_event" && parseJSON(e.data)?.type === "resync_required";

  // open connects the stream, with Last-Event-ID after the first time;
  // leave (an AbortSignal) cancels it.
  async function open(leave) {
    const h = headers({ Accept: "text/event-stream" });
    if (lastId !== null) h["Last-Event-ID"] = lastId;
    // Its head within stallMs, as any request's answer: a proxy that
    // holds the request left the follower, and every run, waiting for ever.
    const resp = await answered("GET /stream", base + "/stream", { headers: h }, (r) => r).catch((e) => {
      throw e?.name === "FloeError" && e.code === "timeout" ? floeError("network", `no answer within ${stallMs} ms (stallMs)`) : e;
    });
    if (!resp.ok) {
      const text = await resp.text().catch(() => "");
      const err = parseJSON(text)?.error;
      // A gateway that cannot reach the server (it restarts, or a Durable
      // Object is being replaced) answers 502, 503 or 504: wait and
      // reconnect, as after a network error. Any other refusal is final.
      throw Object.assign(floeError(err?.code ?? `http_${resp.status}`, err?.message ?? `stream: ${resp.status}${excerpt(text)}`), {
        status: resp.status,
        fatal: !transient(resp.status),
      });
    }
    // Another type is no event stream (T-1): a site that serves its page
    // at every path, say. Read as one, it brought no event and was opened
    // again for ever; EventSource fails such a connection too.
    const type = resp.headers.get("Content-Type") ?? "";
    if (type.split(";")[0].trim().toLowerCase() !== "text/event-stream") {
      const text = await resp.text().catch(() => "");
      throw Object.assign(floeError("bad_response", `GET /stream: ${resp.status}: want text/event-stream, got ${type || "no Content-Type"}${excerpt(text)}`), {
        status: resp.status,
        fatal: true,
      });
    }
    return sseEvents(resp.body, [stop.signal, leave], stallMs)[Symbol.asyncIterator]();
  }

  // follow keeps the stream open for as long as the session is not closed.
  async function follow() {
    let resync = true; // the first connection fetches history
    // covered: the cursor of the last history. The stream may bring events
    // up to it after history answered (they were on their way); they are
    // dropped as the buffered ones are.
    let covered = null;
    const isCovered = (e) => epochOf(e.id) === covered.epoch && seqOf(e.id) <= covered.upTo;
    let gateway = null; // when a first connection met a gateway's 502–504 since the stream last opened
    while (!closed) {
      let events;
      // A connection left for another (its /messages failed, its data
      // was not JSON) is cancelled: it held a subscriber on the server,
      // and its stall timer outlived close().
      const conn = new AbortController();
      try {
        events = await open(conn.signal);
        gateway = null;
      } catch (e) {
        if (e.fatal) throw e;
        if (closed) return;
        // A first connection that reaches no server ends the iterators
        // with a network error, rather than waiting for ever: the server
        // is down, or this page's origin is not allowed (a browser hides
        // which). Once connected, a dropped stream is reopened.
        if (!loaded && e.status === undefined) {
          const page = globalThis.location?.origin;
          const why = page && page !== "null" ? `is it running, and does it allow this page's origin ${page} (--origin, FLOE_ORIGINS)?` : "is it running?";
          throw Object.assign(floeError("network", `GET /stream: ${e?.message ?? String(e)}: no answer from ${baseURL}: ${why}`), { cause: e });
        }
        // A proxy whose server is down answers for it: waited out for
        // stallMs (a restart), not for ever.
        if (!loaded && (gateway ??= Date.now()) + stallMs <= Date.now()) {
          throw Object.assign(e, { message: `${e.message}: ${baseURL} answered only a gateway's ${e.status} for ${stallMs} ms: is the server behind it running?` });
        }
        await wait(reconnectDelayMs);
        continue;
      }
      try {
        let next = events.next();
        for (;;) {
          if (resync) {
            // Fetch history while the stream buffers (connect first, §7).
            // resync stays set until history is applied: a connection that
            // fails before then (the /messages request, or the stream)
            // fetches it again on the next one.
            const buffered = [];
            const hist = history(conn.signal);
            const histIn = hist.then(() => null);
            for (;;) {
              const r = await Promise.race([histIn, next]);
              if (r === null || r.done) break;
              if (r.value.id) lastId = r.value.id;
              if (r.value.data !== null) buffered.push(r.value);
              next = events.next();
            }
            const { cursor, live } = await hist;
            resync = false;
            // No event came before history answered: history's cursor is
            // where this connection stands. Without it, a connection that
            // dropped before its first event would reconnect as a new
            // subscriber, and what was published meanwhile would be lost.
            if (lastId === null && cursor) lastId = cursor;
            // History is the session as of the cursor: its messages, the
            // fragments in the live snapshot, the run state and the pending
            // approvals. Drop what the buffer holds up to the cursor (an
            // older task_state or an approval_request settled since would
            // otherwise undo it), except a resync_required.
            covered = { epoch: epochOf(cursor), upTo: seqOf(cursor) };
            const rest = buffered.filter((e) => isResync(e) || !isCovered(e));
            if (live) seed(live.fragments);
            for (const e of rest) {
              if (isResync(e)) resync = true;
              else handle(e);
            }
            if (resync) continue;
          }
          const r = await next;
          if (r.done) break;
          next = events.next();
          const e = r.value;
          if (e.id) lastId = e.id;
          if (e.data === null) continue; // an id alone
          if (isResync(e)) resync = true;
          else if (!(covered && e.id && isCovered(e))) handle(e);
        }
      } catch (e) {
        if (closed) return;
        if (e?.fatal) throw e;
      } finally {
        conn.abort();
      }
      if (!closed) await wait(reconnectDelayMs);
    }
  }

  // wait resolves after ms, or at once when the session is (or gets) closed:
  // no timer outlives close().
  function wait(ms) {
    if (stop.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        stop.signal.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      stop.signal.addEventListener("abort", done, { once: true });
    });
  }

  function ensureStarted() {
    if (closed) throw floeError("closed", "remote session: closed");
    if (!started) {
      started = follow().catch((e) => {
        // The next call connects again (a server started since, a token
        // fixed): the follower is not left dead.
        started = null;
        if (!loaded) readyPromise = null;
        emit({ kind: "error", error: e });
      });
    }
  }

  // A queue-backed async iterator fed by the follower. Each next() not yet
  // answered waits in line: two next() calls made without awaiting get the
  // next two messages (one slot for them left the first waiting forever).
  // onFinish runs once, when the iterator ends for whatever reason.
  function iterator(accept, onReturn, onFinish) {
    const queue = [];
    const waiting = [];
    let done = false;
    let failure = null;
    const push = (v) => {
      if (waiting.length > 0) waiting.shift().resolve({ value: v, done: false });
      else queue.push(v);
    };
    const finish = (err) => {
      if (done) return;
      done = true;
      failure = err ?? null;
      listeners.delete(listener);
      onFinish?.();
      for (const w of waiting.splice(0)) {
        if (failure) w.reject(failure);
        else w.resolve({ value: undefined, done: true });
      }
    };
    const listener = (ev) => {
      if (done) return;
      if (ev.kind === "error") return finish(ev.error);
      accept(ev, push, finish);
    };
    listeners.add(listener);
    const it = {
      next() {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
        if (done) return failure ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
      },
      async return() {
        if (!done) {
          await onReturn?.();
          finish();
        }
        queue.length = 0;
        return { value: undefined, done: true };
      },
      async throw(err) {
        await it.return();
        throw err;
      },
      [Symbol.asyncIterator]() {
        return it;
      },
    };
    return { it, finish, push };
  }

  const session = {
    id: sessionId,
    /** The run state as last reported: "idle", "running" or "compacting". */
    get state() {
      return state;
    },
    /** Tool calls awaiting a decision, oldest first. */
    get pendingApprovals() {
      return [...pending.values()].filter((call) => answering.get(call.payload.tool_call_id) !== "decided");
    },

    /**
     * Every message of the session: the complete messages delivered so far
     * (on first use: the history), then the live stream, each complete
     * message once. Never ends on its own; break (or close()) to stop.
     * approve(toolCall), when given, answers the approval requests of every
     * run while it follows ("allow"/"deny"), each pending call once.
     */
    messages(opts = {}) {
      if (!isOptions(opts)) throw floeError("bad_argument", "messages: options: want an object, not an array or other collection");
      knownKeys(opts, ["approve"], "messages: options");
      const { approve } = opts;
      if (approve !== undefined && typeof approve !== "function") throw floeError("bad_argument", "messages: approve: want a function");
      // approve answers the approval requests of every run while it
      // follows (another device's too), each pending call once.
      let following = true;
      const answer = (call) => approve && answerCall(approve, call, () => following);
      const { it, push } = iterator(
        (ev, push) => {
          if (ev.kind === "message") push(ev.message);
          else if (ev.kind === "approval") answer(ev.toolCall);
        },
        () => void (following = false),
      );
      for (const m of log) push(m);
      ensureStarted();
      for (const call of pending.values()) answer(call);
      return it;
    },

    /**
     * Starts a task and yields its messages, like a local session.run():
     * from the run's first streamed message to its last (the prompt itself
     * is not yielded). approve(toolCall) answers approval requests
     * ("allow"/"deny"); without it they stay pending for another client.
     * signal aborts the run; breaking out of the loop aborts it too.
     */
    run(prompt, opts = {}) {
      const input = typeof prompt === "string" ? prompt : Array.isArray(prompt) ? prompt : null;
      if (input === null) throw floeError("bad_argument", "run: prompt: want a string or an array of messages");
      if (!isOptions(opts)) throw floeError("bad_argument", "run: options: want an object, not an array or other collection");
      knownKeys(opts, ["approve", "signal", "thinkingLevel"], "run: options");
      const { approve, signal, thinkingLevel } = opts;
      if (approve !== undefined && typeof approve !== "function") throw floeError("bad_argument", "run: approve: want a function");
      if (signal != null && (typeof signal !== "object" || typeof signal.addEventListener !== "function")) throw floeError("bad_argument", "run: signal: want an AbortSignal");
      if (thinkingLevel !== undefined && typeof thinkingLevel !== "string") throw floeError("bad_argument", "run: thinkingLevel: want a string");
      let phase = "before"; // before -> running -> done
      let posted = false; // the task's POST went out
      let accepted = false; // and the server took it
      let returned = false; // return() was called: the task is not posted, or its run is aborted
      let sawEnd = null;
      const ended = new Promise((r) => (sawEnd = r));
      const answer = (call) => answerCall(approve, call, () => phase !== "done");
      // ours returns the messages of a history's fresh ones that follow
      // this task's prompt (the server records it; a run never streams
      // it), or null when the prompt is not among them.
      // The prompt's last message is found by its text, or by its URL when
      // it is an image (a prompt of a text and a screenshot): taken for a
      // text of none, an image's own slice held the prompt's image.
      const ours = (messages) => {
        const tail = typeof input === "string" ? { type: "text", text: input } : input.at(-1)?.payload ?? {};
        const image = tail.type === "image_url";
        const last = image ? tail.image_url : tail.text;
        for (let i = messages.length - 1; i >= 0; i--) {
          const p = messages[i].payload;
          if (p?.role !== "user" || p.type !== (image ? "image_url" : "text")) continue;
          if (last === undefined || (image ? p.image_url : p.text) === last) return messages.slice(i + 1);
        }
        return null;
      };
      // A run's stream ends with its last request's request_end, an abort,
      // the max_turns notice (a failed text) or a compaction_end (ENGINE.md
      // E-3.5). One that ended on none of them was cut off (a crash of the
      // server: its Trace ends mid-run, and the restarted server is idle):
      // the run ends with an abort that says so, as a local run cut off by
      // its abort does, so that it is not taken for a run that ended.
      let last = null; // the run's last complete message handed over
      // What the run would yield, answer or end with before the server
      // has taken its task waits for its answer: the run the stream shows
      // may be another's (two run()s at once, another client's), and a
      // refusal drops it. (Handed over at once, a refused run yielded the
      // other run as its own, ended with it without its refusal, and its
      // approve answered the other run's calls.)
      let held = [];
      const later = (fn) => (accepted ? fn() : held.push(fn));
      const end = (fin, reason = cutOff) => {
        if (phase === "done") return;
        phase = "done";
        sawEnd();
        const out = [];
        if (!terminal(last)) {
          // Its open fragments are closed first, as the engine closes the
          // fragments of a run it aborts: a stop and the complete message
          // of what was streamed, both "aborted".
          const now = new Date().toISOString();
          for (const f of openFrags.values()) {
            const p = f.start.payload;
            const field = bodyKey[p.type];
            out.push({ ...closing(f), timestamp: now, payload: { ...closing(f).payload, stop_reason: "aborted" } });
            const { event_type, images, ...rest } = p;
            out.push({ ...f.start, timestamp: now, payload: { ...rest, type: p.type.slice("partial_".length), [field]: f.body, stop_reason: "aborted" } });
          }
          // (A run ended here while the server may go on keeps them
          // open for the stream to close when it comes back.)
          if (reason === cutOff) openFrags.clear();
          out.push({ timestamp: now, type: "event_msg", payload: { type: "abort", reason } });
        }
        later(() => {
          for (const m of out) pushTo(m);
          fin();
        });
      };
      // The signal aborts the task once the server took it: an abort posted
      // while the task's POST is on its way could reach the server first,
      // find it idle, and leave the run going. Its listener goes when the
      // iterator ends, however it ends (a run refused as busy kept it, and
      // a later abort of the signal aborted the run that refused it).
      // stopRun asks the server to abort the run; when the request does not
      // get through (the server is down, or the network), the run ends
      // here, its fragments closed, rather than waiting for an end the
      // stream may never bring: the server may still be running it.
      const stopRun = () =>
        session.abort().catch((e) => end(finish, `aborted by user, but the server did not take the abort (${e.message}): the run may go on there`));
      const onAbort = () => {
        if (!posted) abortedFirst(); // still connecting: the task is never posted
        else if (accepted) stopRun(); // else its POST is on its way: aborted once taken
      };
      let posting; // the task's POST once it went out: settles, never rejects
      let unlisten = () => {}; // stops onAbort
      const take = (push, m) => {
        if (!isPartial(m)) last = m;
        later(() => push(m));
      };
      const { it, finish, push: pushTo } = iterator(
        (ev, push, fin) => {
          if (ev.kind === "state") {
            // (Not a task_state running: after the POST went out, a
            // reconnect's initial task_state may show another client's
            // run, which the server ends before it takes this task.)
            if (ev.state === "idle" && phase === "running") end(fin);
          } else if (ev.kind === "message" && phase === "before" && posted && !ev.history) {
            // The run's prompt, which the server publishes before the run
            // (T-4) and the run does not yield: this run from here on.
            if (ours([ev.message]) !== null) phase = "running";
          } else if (ev.kind === "message" && phase === "running" && !ev.history) {
            take(push, ev.message); // live (history's are taken with its event, below)
          } else if (ev.kind === "approval" && phase === "running" && approve) {
            const call = ev.toolCall;
            later(() => !returned && answer(call)); // (return() aborts the run: its calls are denied)
          } else if (ev.kind === "history" && phase === "running") {
            // After a resync: what the stream missed of the run, then its
            // end if the session is idle.
            for (const m of ours(ev.messages) ?? ev.messages) take(push, m);
            if (ev.state === "idle") end(fin);
          } else if (ev.kind === "history" && phase === "before" && posted) {
            // The run started while the stream was away (its prompt is in
            // history): what it streamed so far, and its end if it ended
            // there too (a resync after the whole run, which may come
            // before the task's POST has answered).
            // A history running without it shows another client's run.
            const mine = ours(ev.messages);
            if (mine !== null) {
              phase = "running";
              for (const m of mine) take(push, m);
              if (ev.state === "idle") end(fin);
            }
          }
        },
        async () => {
          returned = true;
          // A task whose POST is on its way may still start: its answer
          // says whether there is a run of ours to abort.
          await posting;
          if (accepted && phase !== "done") {
            await session.abort().catch(() => {});
            await Promise.race([ended, wait(30000)]);
          }
        },
        () => unlisten(),
      );
      // A run aborted before its task was posted never starts: it yields
      // only its abort, as a local run does.
      const abortedFirst = () => {
        if (phase === "done" || returned) return;
        phase = "done";
        sawEnd();
        pushTo({ timestamp: new Date().toISOString(), type: "event_msg", payload: { type: "abort", reason: "aborted by user" } });
        finish();
      };
      if (signal?.aborted) {
        abortedFirst();
        return it;
      }
      ensureStarted();
      unlisten = onAbortOf(signal, onAbort);
      (async () => {
        try {
          // Connect first, so the run's first event is not missed.
          await ready();
          if (returned || phase === "done") return;
          if (signal?.aborted) return abortedFirst();
          posted = true;
          const body = { input };
          if (thinkingLevel !== undefined) body.thinkingLevel = thinkingLevel;
          const post = request("POST", "/tasks", body);
          posting = post.catch(() => {});
          await post;
          accepted = true;
          // What the stream brought of the run before the answer, in order:
          // its messages, its approval requests still pending, its end.
          for (const fn of held.splice(0)) fn();
          if (!returned && signal?.aborted) stopRun(); // (return() aborts it itself)
        } catch (e) {
          held = [];
          finish(e.code === "task_in_progress" ? Object.assign(floeError("session_busy", e.message), { status: 409 }) : e);
        }
      })();
      return it;
    },

    /** Queues steering text for the run in flight; false when none is. */
    async steer(text, images) {
      try {
        await request("POST", "/steer", images === undefined ? { text } : { text, images });
        return true;
      } catch (e) {
        if (e.code === "not_running") return false;
        throw e;
      }
    },
    /** Aborts the run in flight; false when the session is idle. */
    async abort() {
      const { status } = await request("POST", "/abort");
      return status === 202;
    },
    /** Answers a pending approval by tool_call_id. */
    async approve(toolCallId, decision) {
      if (typeof toolCallId !== "string" || toolCallId === "") throw floeError("bad_argument", "approve: toolCallId: want a non-empty string");
      if (decision !== "allow" && decision !== "deny") throw floeError("bad_argument", 'approve: decision: want "allow" or "deny"');
      await decide(toolCallId, decision);
    },
    /** Skips a pending reconnect wait of the engine; false when none was pending. */
    async retryNow() {
      const { json } = await request("POST", "/retry-now");
      return json.skipped;
    },
    /** Starts a manual compaction. */
    async compact() {
      await request("POST", "/compact");
    },
    /** The session's history and live snapshot, as GET /messages answers. */
    async history() {
      return (await request("GET", "/messages")).json;
    },
    /** Closes the stream; iterators end. */
    close() {
      closed = true;
      stop.abort();
      for (const l of [...listeners]) l({ kind: "error", error: null });
      listeners.clear();
    },
  };

  // answerCall asks approve() once per pending call, however many times the
  // call is announced (the stream, a resync, the sweep after the POST), and
  // posts the decision until it lands: a network failure or a gateway's
  // 502–504 is retried while the call is pending and live() holds, so a
  // lost POST never leaves the run waiting for a decision made.
  async function answerCall(approve, call, live) {
    const id = call.payload.tool_call_id;
    if (answering.has(id) || !pending.has(id)) return;
    answering.set(id, "asking");
    let d = "deny";
    try {
      d = (await approve(call)) === "allow" ? "allow" : "deny";
    } catch {}
    for (;;) {
      if (answering.get(id) !== "asking" || closed || !live()) return; // settled meanwhile (an abort, another client)
      try {
        await decide(id, d);
        return;
      } catch (e) {
        if (e.code !== "network" && !transient(e.status)) return;
      }
      await wait(reconnectDelayMs);
    }
  }

  // decide posts a decision. The call stays pending (marked decided) until
  // the stream shows it settled, so that a re-sent approval_request for it
  // is not taken for a new one.
  async function decide(id, decision) {
    const was = answering.get(id);
    answering.set(id, "asking");
    try {
      await request("POST", "/approvals/" + encodeURIComponent(id), { decision });
    } catch (e) {
      if (answering.get(id) === "asking") {
        if (was === undefined) answering.delete(id);
        else answering.set(id, was);
      }
      throw e;
    }
    if (answering.has(id) || pending.has(id)) answering.set(id, "decided");
  }

  // ready resolves once the stream is open and history applied.
  let readyPromise = null;
  function ready() {
    if (!readyPromise) {
      // messages() may have opened the stream and applied history already.
      if (loaded) return (readyPromise = Promise.resolve());
      readyPromise = new Promise((resolve, reject) => {
        const l = (ev) => {
          if (ev.kind === "history") {
            listeners.delete(l);
            resolve();
          } else if (ev.kind === "error") {
            listeners.delete(l);
            reject(ev.error ?? floeError("closed", "remote session: closed"));
          }
        };
        listeners.add(l);
      });
    }
    return readyPromise;
  }

  return session;
}
