// Loopback replay of model APIs for the provider tests (Node and Chromium):
// a node:http server that answers with recorded bytes, the reader of the
// shared provider corpus (format: shared/providers/FORMAT.md) and the check
// of what an adapter produced from a case, and SSE builders for this
// project's own scripted streams.
import { createServer } from "node:http";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Starts an HTTP server on 127.0.0.1 (port 0 = any free port) whose
 * handler(req, res, body) gets each request with its body read. Every
 * request is recorded in `requests` ({method, url, headers, body, closed}),
 * where `closed` resolves when the client's connection closes. Closed
 * after the test.
 */
export async function replayServer(t, handler, { port = 0, cors = null } = {}) {
  const requests = [];
  const sockets = new Set();
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString("utf8");
    const entry = { method: req.method, url: req.url, headers: req.headers, body };
    entry.closed = new Promise((r) => res.on("close", () => r(!res.writableFinished)));
    if (cors) {
      res.setHeader("access-control-allow-origin", cors);
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
          "access-control-max-age": "600",
        });
        res.end();
        return;
      }
    }
    requests.push(entry);
    try {
      await handler(req, res, body, entry);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(e?.stack ?? e));
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((r, j) => server.listen(port, "127.0.0.1", r).on("error", j));
  const close = () =>
    new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  t?.after(close);
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close, server };
}

/**
 * Writes a recorded response: status, headers, the body in the case's reads
 * (one write each, waiting until it is flushed), then the end: "eof" (the
 * terminating chunk) or "error" (the connection is dropped without it).
 */
export async function writeResponse(res, r) {
  const headers = { ...r.headers };
  delete headers["content-length"];
  res.writeHead(r.status, headers);
  const bytes = Buffer.from(r.body ?? "", "utf8");
  const sizes = r.chunks ?? [bytes.length];
  let off = 0;
  for (const n of sizes) {
    if (n === 0) continue;
    await new Promise((ok) => res.write(bytes.subarray(off, off + n), ok));
    off += n;
  }
  if (off < bytes.length) await new Promise((ok) => res.write(bytes.subarray(off), ok));
  if (r.end === "error") res.socket.destroy();
  else res.end();
}

/** The directory of the shared provider corpus; throws when it is missing. */
export function corpusDir() {
  const shared = process.env.FLOE_SHARED ? resolve(process.env.FLOE_SHARED) : join(ROOT, "..", "shared");
  const dir = join(shared, "providers");
  if (!existsSync(dir)) {
    throw new Error(`the shared provider corpus is missing: ${dir} (set FLOE_SHARED to the shared folder)`);
  }
  return dir;
}

/** The project's own provider cases (testdata/providers), same format. */
export const projectCasesDir = join(ROOT, "testdata", "providers");

/** Every case of the corpus, sorted by name. */
export function loadCases(dir = corpusDir()) {
  const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  if (!files.length) throw new Error(`no cases in ${dir}`);
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
}

// The message kinds a model produces (what the case checks are about).
const MODEL_TYPES = new Set(["text", "thinking", "tool_call", "partial_text", "partial_thinking", "partial_tool_call",
  "image_url", "inline_data"]);

/** The messages of a run that the model produced, in order (role assistant, and token_usage). */
export function modelMessages(msgs) {
  return msgs.filter(
    (m) =>
      (m.type === "model_msg" && MODEL_TYPES.has(m.payload.type) && m.payload.role !== "user") ||
      (m.type === "event_msg" && m.payload.type === "token_usage"),
  );
}

const BODY = { partial_text: "text", partial_thinking: "thinking", partial_tool_call: "arguments" };
const COMPLETE = { partial_text: "text", partial_thinking: "thinking", partial_tool_call: "tool_call" };

/**
 * The streaming discipline of FORMAT.md §3 over a model's messages: each
 * partial segment is start → delta* → stop followed immediately by its
 * complete message whose body is the deltas' concatenation. Returns the
 * first violation, or null.
 */
export function disciplineError(ms) {
  const open = new Map(); // key → concatenated deltas
  let expectNext = null; // [type, body, key] after a stop
  for (let i = 0; i < ms.length; i++) {
    const p = ms[i].payload;
    if (expectNext) {
      const [type, body, id] = expectNext;
      const got = p[type === "tool_call" ? "arguments" : type];
      if (p.type !== type || got !== body || (type === "tool_call" && p.tool_call_id !== id)) {
        return `[${i}] after a ${type} segment's stop: want its complete ${type} with ${JSON.stringify(body)}, got ${JSON.stringify(p)}`;
      }
      expectNext = null;
      continue;
    }
    if (!(p.type in BODY)) continue;
    const key = p.type + "/" + (p.tool_call_id ?? "");
    const piece = p[BODY[p.type]] ?? "";
    switch (p.event_type) {
      case "start":
        if (open.has(key)) return `[${i}] ${key}: start inside an open segment`;
        open.set(key, piece);
        break;
      case "delta":
        if (!open.has(key)) return `[${i}] ${key}: delta outside a segment`;
        open.set(key, open.get(key) + piece);
        break;
      case "stop":
        if (!open.has(key)) return `[${i}] ${key}: stop outside a segment`;
        expectNext = [COMPLETE[p.type], open.get(key) + piece, p.tool_call_id];
        open.delete(key);
        break;
      default:
        return `[${i}] ${key}: event_type ${p.event_type}`;
    }
  }
  if (expectNext) return `the stream ended after a ${expectNext[0]} segment's stop, before its complete message`;
  if (open.size) return `segments left open: ${[...open.keys()].join(", ")}`;
  return null;
}

const accepts = (want, got) => (Array.isArray(want) ? want.includes(got) : want === got);
const show = (v) => JSON.stringify(v);

/**
 * Checks what a run of one request gave against a case's `expect`
 * (FORMAT.md §3): msgs is the whole run stream. Returns the first
 * difference, or null.
 */
export function checkCase(expect, msgs) {
  const ends = msgs.filter((m) => m.payload.type === "request_end");
  if (ends.length !== 1) return `want one request_end, got ${ends.length}`;
  const end = ends[0].payload;
  const o = expect.outcome ?? {};
  if (o.status !== undefined && !accepts(o.status, end.status)) {
    return `outcome: status ${show(end.status)} (${end.error_message ?? ""}), want ${show(o.status)}`;
  }
  if (o.error_message_contains && !(end.error_message ?? "").includes(o.error_message_contains)) {
    return `outcome: error_message ${show(end.error_message)} does not contain ${show(o.error_message_contains)}`;
  }
  // What the model produced: the messages of the request, between its
  // request_begin and request_end (the engine's own notices come after).
  const begin = msgs.findIndex((m) => m.payload.type === "request_begin");
  const ms = modelMessages(msgs.slice(begin + 1, msgs.indexOf(ends[0])));
  const joined = (type, key) => ms.filter((m) => m.payload.type === type).map((m) => m.payload[key]).join("") || null;
  for (const [type, key] of [["text", "text"], ["thinking", "thinking"]]) {
    if (key in expect && joined(type, key) !== expect[key]) {
      return `${key}: got ${show(joined(type, key))}, want ${show(expect[key])}`;
    }
  }
  if (expect.tool_calls) {
    const first = new Map();
    ms.forEach((m, i) => {
      const id = m.payload.tool_call_id;
      if (m.payload.type.endsWith("tool_call") && !first.has(id)) first.set(id, i);
    });
    const calls = ms.filter((m) => m.payload.type === "tool_call").sort((a, b) => first.get(a.payload.tool_call_id) - first.get(b.payload.tool_call_id));
    if (calls.length !== expect.tool_calls.length) {
      return `tool_calls: got ${calls.length} (${show(calls.map((c) => c.payload.name))}), want ${expect.tool_calls.length}`;
    }
    for (let i = 0; i < calls.length; i++) {
      const got = calls[i].payload;
      const want = expect.tool_calls[i];
      for (const [k, g] of [["id", got.tool_call_id], ["name", got.name], ["arguments", got.arguments]]) {
        if (want[k] !== undefined && !accepts(want[k], g)) return `tool_calls[${i}].${k}: got ${show(g)}, want ${show(want[k])}`;
      }
    }
  }
  const usage = ms.filter((m) => m.payload.type === "token_usage");
  if (expect.usage && (end.status === "completed" || usage.length)) {
    if (!usage.length) return "usage: no token_usage";
    const req = usage[usage.length - 1].payload.request;
    for (const k of ["output", "cache_read", "cache_write"]) {
      if (k in expect.usage && req[k] !== expect.usage[k]) return `usage.${k}: got ${req[k]}, want ${expect.usage[k]}`;
    }
  }
  if (expect.discipline) {
    const d = disciplineError(ms);
    if (d) return `discipline: ${d}`;
    if (end.status === "completed" && ms.at(-1)?.payload.type !== "token_usage") {
      return `discipline: the last message of a completed request is ${ms.at(-1)?.payload.type}, want token_usage`;
    }
  }
  return null;
}

// ---- this project's own streams ---------------------------------------------

const sse = (events) => events.map((e) => (e.event ? `event: ${e.event}\n` : "") + `data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`).join("");

/**
 * An OpenAI Chat Completions stream: text in the given pieces, then tool
 * calls [{id, name, args: [pieces]}], then usage.
 */
export function openaiStream({ id = "chatcmpl-floe", text = [], calls = [], usage = { prompt_tokens: 10, completion_tokens: 5 } }) {
  const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created: 1764583200, model: "floe-test",
    choices: [{ index: 0, delta, finish_reason: finish }] });
  const ev = [{ data: chunk({ role: "assistant", content: "" }) }];
  for (const t of text) ev.push({ data: chunk({ content: t }) });
  calls.forEach((c, index) => {
    ev.push({ data: chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }) });
    for (const a of c.args) ev.push({ data: chunk({ tool_calls: [{ index, function: { arguments: a } }] }) });
  });
  ev.push({ data: chunk({}, calls.length ? "tool_calls" : "stop") });
  ev.push({ data: { id, object: "chat.completion.chunk", created: 1764583200, model: "floe-test", choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } });
  ev.push({ data: "[DONE]" });
  return sse(ev);
}

/**
 * An Anthropic Messages stream: optional thinking, text pieces, then
 * tool_use blocks [{id, name, args: [pieces]}].
 */
export function anthropicStream({ id = "msg_01Floe", thinking = null, text = [], calls = [], usage = { input_tokens: 10, output_tokens: 5 } }) {
  const ev = [{ event: "message_start", data: { type: "message_start", message: { id, type: "message", role: "assistant",
    model: "claude-floe-test", content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: usage.input_tokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } } }];
  let index = 0;
  if (thinking) {
    ev.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } } });
    ev.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } } });
    ev.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } } });
    ev.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  if (text.length) {
    ev.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } });
    for (const t of text) ev.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: t } } });
    ev.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  for (const c of calls) {
    ev.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } } });
    for (const a of c.args) ev.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: a } } });
    ev.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  ev.push({ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: calls.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output_tokens } } });
  ev.push({ event: "message_stop", data: { type: "message_stop" } });
  return sse(ev);
}

export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
