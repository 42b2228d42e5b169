// The helpers for a model of your own (static/http.mjs): httpOutcome,
// readLines and readEvents, with real bytes through a loopback HTTP server
// and Node's fetch (every status class, JSON, text and HTML error bodies, a
// huge one, Retry-After, a refused connection, chunks cut inside a UTF-8
// character and a CRLF, an abort mid-stream, a body cut mid-event), and
// every split of a body into three reads through a stream made here; and
// the README's model of your own built on them, run as written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpOutcome, readLines, readEvents } from "../../static/floe-node.mjs";
import { checkStream } from "../../static/test.mjs";
import { floe, instantClock, collect as collectRun, find } from "./helpers.mjs";
import { replayServer } from "./replay.mjs";

const collect = async (it) => {
  const out = [];
  for await (const x of it) out.push(x);
  return out;
};

/** A gate: open() lets wait() go on. */
function gate() {
  let open;
  const p = new Promise((r) => (open = r));
  return { open, wait: () => p };
}

/** A ReadableStream of exactly these chunks (strings are UTF-8 encoded). */
function streamOf(chunks) {
  const enc = new TextEncoder();
  const bytes = chunks.map((c) => (typeof c === "string" ? enc.encode(c) : c));
  return new ReadableStream({
    pull(c) {
      if (bytes.length) c.enqueue(bytes.shift());
      else c.close();
    },
  });
}

// A reader or a connection that never lets go fails its test in 20 s (a
// bound, not a wait: every test ends in well under a second).
const BOUND = { timeout: 20_000 };

/** Writes each piece, waiting for the socket to take it. */
const write = (res, piece) => new Promise((r) => res.write(piece, r));

test("httpOutcome: each HTTP status is the outcome Floe's adapters give, naming the adapter, the status and the server's message", BOUND, async (t) => {
  const cases = [
    // [status, content-type, body, headers, want]
    [401, "application/json", { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }, {}, { status: "auth", errorMessage: "x: HTTP 401: invalid_request_error: Incorrect API key provided" }],
    [403, "application/json", { type: "error", error: { type: "permission_error", message: "not allowed" } }, {}, { status: "auth", errorMessage: "x: HTTP 403: permission_error: not allowed" }],
    [400, "application/json", [{ error: { code: 400, message: "Invalid JSON payload", status: "INVALID_ARGUMENT" } }], {}, { status: "failed", errorMessage: "x: HTTP 400: INVALID_ARGUMENT: Invalid JSON payload", permanent: true }],
    [404, "application/json", { error: "model 'qwen9' not found" }, {}, { status: "failed", errorMessage: "x: HTTP 404: model 'qwen9' not found", permanent: true }],
    [402, "application/json", { error: { message: "Insufficient credits", code: 402 } }, {}, { status: "failed", errorMessage: "x: HTTP 402: 402: Insufficient credits", permanent: true }],
    [405, "text/plain", "Method Not Allowed", {}, { status: "failed", errorMessage: "x: HTTP 405: Method Not Allowed", permanent: true }],
    [413, "text/plain", "", {}, { status: "failed", errorMessage: "x: HTTP 413", permanent: true }],
    [415, "application/json", { code: "unsupported_media_type", message: "want JSON" }, {}, { status: "failed", errorMessage: "x: HTTP 415: unsupported_media_type: want JSON", permanent: true }],
    [422, "application/json", { detail: "bad" }, {}, { status: "failed", errorMessage: 'x: HTTP 422: {"detail":"bad"}', permanent: true }],
    [410, "text/plain", "Gone\nfor good", {}, { status: "failed", errorMessage: "x: HTTP 410: Gone" }],
    [418, "text/plain", "  I'm a teapot  \r\n", {}, { status: "failed", errorMessage: "x: HTTP 418: I'm a teapot" }],
    [408, "text/plain", "Request Timeout", {}, { status: "timeout", errorMessage: "x: HTTP 408: Request Timeout" }],
    [409, "application/json", { error: { type: "conflict", message: "busy" } }, {}, { status: "timeout", errorMessage: "x: HTTP 409: conflict: busy" }],
    [429, "application/json", { error: { message: "Rate limit reached", type: "requests" } }, { "retry-after": "7" }, { status: "timeout", errorMessage: "x: HTTP 429: requests: Rate limit reached (Retry-After: 7)", retryAfterMs: 7000 }],
    [500, "application/json", { error: "llama runner process has terminated: exit status 2" }, {}, { status: "timeout", errorMessage: "x: HTTP 500: llama runner process has terminated: exit status 2" }],
    [502, "text/html", "<!DOCTYPE html>\n<html><head><TITLE>502 Bad Gateway</TITLE></head><body><h1>Bad Gateway</h1></body></html>", {}, { status: "timeout", errorMessage: "x: HTTP 502: 502 Bad Gateway" }],
    [503, "text/plain", "upstream connect error or disconnect/reset before headers\nreset reason: overflow", { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" }, { status: "timeout", errorMessage: "x: HTTP 503: upstream connect error or disconnect/reset before headers (Retry-After: Wed, 21 Oct 2015 07:28:00 GMT)", retryAfterMs: 0 }],
    [529, "application/json", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, {}, { status: "timeout", errorMessage: "x: HTTP 529: overloaded_error: Overloaded" }],
    [301, "text/html", "", { location: "https://elsewhere.example/v1" }, { status: "failed", errorMessage: "x: HTTP 301: the server redirected to https://elsewhere.example/v1, not followed: the request goes only to the URL it was sent to", permanent: true }],
    // OpenAI's spent quota: a 429 a retry cannot help.
    [429, "application/json", { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } }, {}, { status: "failed", errorMessage: "x: HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan and billing details.", permanent: true }],
  ];
  const srv = await replayServer(t, (req, res) => {
    const [status, type, body, headers] = cases[Number(req.url.slice(1))];
    res.writeHead(status, { "content-type": type, ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  });
  for (const [i, [status, , , , want]] of cases.entries()) {
    const res = await fetch(`${srv.url}/${i}`, { method: "POST", redirect: "manual" });
    assert.deepEqual(await httpOutcome(res, "x"), want, `HTTP ${status}`);
  }
  // Without a name the message starts at the status.
  const res = await fetch(`${srv.url}/13`, { method: "POST" });
  assert.deepEqual(await httpOutcome(res), { status: "timeout", errorMessage: "HTTP 429: requests: Rate limit reached (Retry-After: 7)", retryAfterMs: 7000 });
});

// A 408, 409, 429 or 5xx's asked wait is its retryAfterMs, read as the
// adapters read it: retry-after-ms first, then Retry-After (seconds or an
// HTTP date in any of its three forms, asctime's in GMT), then Gemini's
// retryDelay in the body; anything else is no wait. The model's outcome
// takes it as it is (a wait past 120 s then fails the request).
test("httpOutcome: the wait a failed response asks for is retryAfterMs", BOUND, async (t) => {
  const gemini = (delay) => JSON.stringify([{ error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: delay }] } }]);
  const cases = [
    [429, { "retry-after-ms": "1500", "retry-after": "2" }, "", 1500],
    [503, { "retry-after": " 20 " }, "", 20000],
    [429, { "retry-after": "Sun, 06 Nov 1994 08:49:37 GMT" }, "", 0],
    [429, { "retry-after": "Sunday, 06-Nov-94 08:49:37 GMT" }, "", 0],
    [429, { "retry-after": "Sun Nov  6 08:49:37 1994" }, "", 0],
    [429, {}, gemini("30s"), 30000],
    [429, {}, gemini("1.5s"), 1500],
    [429, {}, gemini("0.0001s"), 1],
    [429, { "retry-after": "3" }, gemini("30s"), 3000],
    [429, { "retry-after": "soon" }, "", undefined],
    [429, { "retry-after": "1.5" }, "", undefined],
    [429, { "retry-after": "2026-03-02" }, "", undefined],
    [429, {}, gemini("30"), undefined],
    [400, { "retry-after": "20" }, "", undefined],
  ];
  const srv = await replayServer(t, (req, res) => {
    const [status, headers, body] = cases[Number(req.url.slice(1))];
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  });
  for (const [i, [status, headers, body, want]] of cases.entries()) {
    const got = await httpOutcome(await fetch(`${srv.url}/${i}`, { method: "POST" }), "x");
    assert.equal(got.retryAfterMs, want, `${status} ${JSON.stringify(headers)} ${body}`);
    assert.equal("retryAfterMs" in got, want !== undefined);
  }
  // A date ahead: its distance from now, in GMT in each form (a local
  // time zone's hours apart would show).
  const ahead = async (v) => (await httpOutcome(new Response("", { status: 429, headers: { "retry-after": v } }))).retryAfterMs;
  const imf = await ahead("Thu, 01 Jan 2099 00:00:00 GMT");
  assert.ok(imf > 2e12, String(imf));
  assert.ok(Math.abs((await ahead("Thu Jan  1 00:00:00 2099")) - imf) < 60_000);
  assert.equal(await ahead("Thursday, 01-Jan-99 00:00:00 GMT"), 0); // 1999
});

test("httpOutcome: an ok response is null and its body is left unread; an aborted signal makes any response aborted", BOUND, async (t) => {
  const srv = await replayServer(t, (req, res) => {
    res.writeHead(req.url === "/ok" ? 200 : 500, { "content-type": "application/x-ndjson" });
    res.end('{"a":1}\n');
  });
  const ok = await fetch(`${srv.url}/ok`);
  assert.equal(await httpOutcome(ok, "x"), null);
  assert.equal(ok.bodyUsed, false);
  assert.deepEqual(await collect(readLines(ok.body)), ['{"a":1}']);
  const ac = new AbortController();
  const bad = await fetch(`${srv.url}/bad`, { signal: ac.signal });
  ac.abort();
  assert.deepEqual(await httpOutcome(bad, "x", ac.signal), { status: "aborted", errorMessage: "x: aborted" });
});

test("httpOutcome: a huge error body is read to 64 KiB and let go (the connection closes), its message clipped", BOUND, async (t) => {
  let written = 0;
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(500, { "content-type": "text/plain" });
    const piece = "é".repeat(32 << 10); // 64 KiB a write, no line end
    while (written < 64 << 20 && !res.destroyed) {
      await write(res, piece);
      written += 64 << 10;
    }
    res.end();
  });
  const res = await fetch(srv.url);
  const out = await httpOutcome(res, "x");
  assert.equal(out.status, "timeout");
  assert.equal(out.errorMessage, `x: HTTP 500: ${"é".repeat(300)}…`);
  assert.equal(await srv.requests[0].closed, true, "the server saw the connection close before the body's end");
  assert.ok(written < 64 << 20, `the server wrote ${written} bytes`);
});

test("httpOutcome: what a fetch or a read threw — a refused connection is timeout naming the cause, an abort aborted, bad JSON and a cut event stream malformed, a misuse permanent", BOUND, async (t) => {
  const srv = await replayServer(t, () => {});
  const url = srv.url;
  await srv.close();
  let thrown;
  try {
    await fetch(url);
  } catch (e) {
    thrown = e;
  }
  const refused = await httpOutcome(thrown, "x");
  assert.equal(refused.status, "timeout");
  assert.match(refused.errorMessage, /^x: TypeError: fetch failed \(ECONNREFUSED .*ECONNREFUSED/);

  const ac = new AbortController();
  ac.abort();
  try {
    await fetch(url, { signal: ac.signal });
  } catch (e) {
    thrown = e;
  }
  assert.deepEqual(await httpOutcome(thrown, "x"), { status: "aborted", errorMessage: "x: aborted" }, "an AbortError");
  assert.deepEqual(await httpOutcome(new Error("whatever"), "x", ac.signal), { status: "aborted", errorMessage: "x: aborted" }, "anything once the signal aborted");

  try {
    JSON.parse("{nope");
  } catch (e) {
    thrown = e;
  }
  assert.deepEqual(await httpOutcome(thrown, "x"), { status: "malformed", errorMessage: `x: malformed stream: ${thrown.message}` });
  try {
    await collect(readEvents(streamOf(["data: 1\n\ndata: {"])));
  } catch (e) {
    thrown = e;
  }
  assert.equal(thrown.code, "truncated");
  assert.deepEqual(await httpOutcome(thrown, "x"), { status: "malformed", errorMessage: 'x: malformed stream: readEvents: the body ended in the middle of an event (its last line "data: {" has no line end)' });
  try {
    readLines(null);
  } catch (e) {
    thrown = e;
  }
  assert.deepEqual(await httpOutcome(thrown, "x"), { status: "failed", errorMessage: "x: readLines: body: want a ReadableStream (a fetch Response's body), got null (the response has no body)", permanent: true });
  assert.deepEqual(await httpOutcome("a string", "x"), { status: "timeout", errorMessage: "x: a string" });
  assert.deepEqual(await httpOutcome(undefined), { status: "timeout", errorMessage: "undefined" });
});

test("httpOutcome, readLines, readEvents: a bad argument is bad_argument naming it, thrown by the call", async () => {
  const bad = (f, re) => assert.throws(f, (e) => e.name === "FloeError" && e.code === "bad_argument" && re.test(e.message), String(f));
  await assert.rejects(httpOutcome(new Response("x", { status: 500 }), 5), (e) => e.code === "bad_argument" && /^httpOutcome: name: want a string, got a number$/.test(e.message));
  await assert.rejects(httpOutcome(new Response("x", { status: 500 }), "x", "signal"), (e) => e.code === "bad_argument" && /^httpOutcome: signal: want an AbortSignal, got a string$/.test(e.message));
  bad(() => readLines(null), /^readLines: body: want a ReadableStream \(a fetch Response's body\), got null \(the response has no body\)$/);
  bad(() => readEvents("data: x\n\n"), /^readEvents: body: want a ReadableStream .*got a string$/);
  bad(() => readLines(streamOf([]), { sigal: AbortSignal.abort() }), /^readLines: options\.sigal: unknown option \(did you mean signal\?\)/);
  bad(() => readEvents(streamOf([]), []), /^readEvents: options: want an object, got an array$/);
  bad(() => readEvents(streamOf([]), { signal: true }), /^readEvents: options\.signal: want an AbortSignal, got a boolean$/);
  bad(() => readLines(streamOf([]), { get signal() { throw new Error("no"); } }), /^readLines: options\.signal: reading it threw: no$/);
});

test("readLines: real fetch, reads cut inside a UTF-8 character and inside a CRLF, blank lines skipped, a last line without LF", BOUND, async (t) => {
  const gates = [gate(), gate()];
  const e = new TextEncoder().encode("é");
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    await write(res, Buffer.concat([Buffer.from('\uFEFF{"n":1}\r\n\n  \r\n{"s":"'), e.subarray(0, 1)]));
    await gates[0].wait();
    await write(res, Buffer.concat([e.subarray(1), Buffer.from('"}\n{"n":3}\r')]));
    await gates[1].wait();
    res.end('\n{"n":4}');
  });
  const res = await fetch(srv.url);
  const got = [];
  for await (const line of readLines(res.body)) {
    got.push(line);
    gates[got.length - 1]?.open();
  }
  assert.deepEqual(got, ['{"n":1}', '{"s":"é"}', '{"n":3}', '{"n":4}']);
});

test("readEvents: real fetch, the WHATWG framing across reads cut inside a character and a CRLF, a last event without its blank line", BOUND, async (t) => {
  const gates = [gate(), gate()];
  const e = new TextEncoder().encode("é");
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    await write(res, Buffer.concat([Buffer.from('\uFEFF: a comment\r\nevent: start\r\ndata: {"a":1}\r\n\r\nevent: ping\n\ndata: line1\ndata:'), e.subarray(0, 1)]));
    await gates[0].wait();
    await write(res, Buffer.concat([e.subarray(1), Buffer.from("\nid: 7\n\ndata: x\r")]));
    await gates[1].wait();
    res.end("\n\nretry: 10\nfoo: bar\ndata\n\nid: 8\0\nevent: done\ndata: [DONE]\n");
  });
  const res = await fetch(srv.url);
  const got = [];
  for await (const ev of readEvents(res.body)) {
    got.push(ev);
    gates[got.length - 1]?.open();
  }
  assert.deepEqual(got, [
    { event: "start", data: '{"a":1}', id: "" },
    { event: "message", data: "line1\né", id: "7" },
    { event: "message", data: "x", id: "7" },
    { event: "message", data: "", id: "7" },
    { event: "done", data: "[DONE]", id: "7" },
  ]);
});

test("readLines and readEvents: the same items for every split of the body into three reads", async () => {
  const ndjson = '\uFEFF{"a":"é😀"}\r\n\n{"b":2}\n \r\n{"c":"\u00e9"}';
  const sse = '\uFEFF:c\r\nevent: e\rdata: é😀\r\ndata:2\n\n\r\nid: 1\ndata: x\r\rdata:y\n';
  const bytes = (s) => new TextEncoder().encode(s);
  const cases = [
    [readLines, bytes(ndjson), ['{"a":"é😀"}', '{"b":2}', '{"c":"é"}']],
    [readEvents, bytes(sse), [{ event: "e", data: "é😀\n2", id: "" }, { event: "message", data: "x", id: "1" }, { event: "message", data: "y", id: "1" }]],
  ];
  for (const [read, b, want] of cases) {
    for (let i = 0; i <= b.length; i++) {
      for (let j = i; j <= b.length; j++) {
        const got = await collect(read(streamOf([b.subarray(0, i), b.subarray(i, j), b.subarray(j)])));
        assert.deepEqual(got, want, `${read.name}: reads cut at ${i} and ${j}`);
      }
    }
  }
});


// The rules of the HTML standard's event stream the cases above leave out:
// only one space after the colon is dropped; a byte order mark only opens
// the stream (one later is part of its line, an unknown field); an id
// moves the last event id even in a block that is not dispatched, and an
// empty one clears it.
test("readEvents: one space after the colon dropped, not two; a BOM only at the start; an id taken from an undispatched block, cleared by an empty one", async () => {
  const body = "\uFEFFdata:  two\n\n\uFEFFdata: after a BOM\n\nid: 5\n\ndata: a\n\nid\ndata: b\n\n";
  assert.deepEqual(await collect(readEvents(streamOf([new TextEncoder().encode(body)]))), [
    { event: "message", data: " two", id: "" },
    { event: "message", data: "a", id: "5" },
    { event: "message", data: "b", id: "" },
  ]);
});

// llama.cpp's server sends an error that happens while it streams as a
// line "error: {…}", then "data: [DONE]": the standard drops the unknown
// field, and the stream looked complete, its reply cut short. It is the
// data of an event of type "error", as Floe's Go adapters read it
// (provider/sse); an event line of the block names it instead.
test("readEvents: llama.cpp's error line is an event of type error", async () => {
  const body =
    'data: {"choices":[{"delta":{"content":"The"}}]}\n\n' +
    'error: {"code":500,"message":"Failed to decode the batch: KV cache is full","type":"server_error"}\n\n' +
    "data: [DONE]\n\n" +
    "event: failure\nerror: a\nerror: b\n\n";
  assert.deepEqual(await collect(readEvents(streamOf([new TextEncoder().encode(body)]))), [
    { event: "message", data: '{"choices":[{"delta":{"content":"The"}}]}', id: "" },
    { event: "error", data: '{"code":500,"message":"Failed to decode the batch: KV cache is full","type":"server_error"}', id: "" },
    { event: "message", data: "[DONE]", id: "" },
    { event: "failure", data: "a\nb", id: "" },
  ]);
});

// A read of many lines is framed in time linear in its size: a search for
// the next CR at every line of a body of LF alone read the rest of the read
// again (quadratic: a read of 4 MiB took 15 s). Counted, not timed: the
// characters String.prototype.indexOf looks at while the events are read.
test("readEvents and readLines: a read of many lines ended by LF alone is scanned once, not once a line", async () => {
  const line = 'data: {"type":"content_block_delta","delta":{"text":"hello"}}\n\n';
  const text = line.repeat(1000);
  const body = () => streamOf([text]);
  const indexOf = String.prototype.indexOf;
  let scanned = 0;
  String.prototype.indexOf = function (s, from = 0) {
    const at = indexOf.call(this, s, from);
    scanned += (at < 0 ? this.length : at + 1) - Math.min(from, this.length);
    return at;
  };
  let events, lines;
  try {
    events = await collect(readEvents(body()));
    lines = await collect(readLines(body()));
  } finally {
    String.prototype.indexOf = indexOf;
  }
  assert.equal(events.length, 1000);
  assert.equal(lines.length, 1000);
  assert.ok(scanned <= 4 * 2 * text.length, `${scanned} characters looked at for two reads of ${text.length}`);
});
test("readEvents: a body that ends mid-line throws code truncated after the events before it; a reset connection throws the network's error; a clean end ends", BOUND, async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (req.url === "/cut") res.end('data: {"a":1}\n\ndata: {"b"');
    else if (req.url === "/reset") {
      await write(res, 'data: {"a":1}\n\ndata: {"b"');
      res.socket.destroy();
    } else res.end('data: {"a":1}\n\n: bye\n');
  });
  for (const [path, check] of [
    ["/cut", (e) => e.code === "truncated" && /the body ended in the middle of an event \(its last line "data: \{\\"b\\"" has no line end\)/.test(e.message)],
    ["/reset", (e) => e.name === "TypeError" && e.code !== "truncated"],
  ]) {
    const got = [];
    const res = await fetch(srv.url + path);
    await assert.rejects(async () => {
      for await (const ev of readEvents(res.body)) got.push(ev.data);
    }, check, path);
    assert.deepEqual(got, ['{"a":1}'], path);
  }
  let thrown;
  try {
    for await (const ev of readEvents((await fetch(srv.url + "/reset")).body)) void ev;
  } catch (e) {
    thrown = e;
  }
  assert.equal((await httpOutcome(thrown, "x")).status, "timeout", "a connection reset is the network failing");
  assert.deepEqual(await collect(readEvents((await fetch(srv.url + "/end")).body)), [{ event: "message", data: '{"a":1}', id: "" }]);
});

test("readLines and readEvents: an abort mid-stream ends the loop at once with the signal's reason and closes the connection; so does leaving the loop", BOUND, async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    await write(res, req.url === "/sse" ? "data: one\n\n" : '{"n":1}\n');
    // and nothing more: the client goes away
  });
  for (const [path, read] of [["/lines", readLines], ["/sse", readEvents]]) {
    // The signal given to the reader only (not to fetch).
    const ac = new AbortController();
    const res = await fetch(srv.url + path);
    const got = [];
    await assert.rejects(async () => {
      for await (const x of read(res.body, { signal: ac.signal })) {
        got.push(x);
        queueMicrotask(() => ac.abort()); // while the reader waits for more
      }
    }, (e) => e.name === "AbortError", `${path}: the loop ends with the abort`);
    assert.equal(got.length, 1);
    assert.equal(await srv.requests.at(-1).closed, true, `${path}: the connection was closed`);

    // The same signal to fetch and the reader, as an adapter passes it: httpOutcome says aborted.
    const ac2 = new AbortController();
    const res2 = await fetch(srv.url + path, { signal: ac2.signal });
    let thrown;
    try {
      for await (const x of read(res2.body, { signal: ac2.signal })) void x, ac2.abort();
    } catch (e) {
      thrown = e;
    }
    assert.deepEqual(await httpOutcome(thrown, "x", ac2.signal), { status: "aborted", errorMessage: "x: aborted" });
    assert.equal(await srv.requests.at(-1).closed, true, `${path}: the connection was closed`);

    // An abort before the first read.
    const res3 = await fetch(srv.url + path);
    await assert.rejects(collect(read(res3.body, { signal: AbortSignal.abort() })), (e) => e.name === "AbortError");
    assert.equal(await srv.requests.at(-1).closed, true);

    // break.
    const res4 = await fetch(srv.url + path);
    for await (const x of read(res4.body)) {
      void x;
      break;
    }
    assert.equal(await srv.requests.at(-1).closed, true, `${path}: break closed the connection`);
  }
});

// ---- the README's model of your own ----------------------------------------------------------

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const models = readme.slice(readme.indexOf("\n### A model of your own\n"), readme.indexOf("\n### Testing: `floe/test`"));
const EXAMPLE = models.match(/```js\n(import [^\n]*\n\n(?:\/\*\*[^\n]*\n)?function ollamaChat[\s\S]*?)```/)?.[1];
const CALL = 'ollamaChat({ model: "llama3.2" })';

/** Writes the README's example (its import pointed at this checkout, its model at baseURL) and runs it. */
async function runExample(baseURL) {
  const entry = JSON.stringify(new URL("../../static/floe-node.mjs", import.meta.url).href);
  // What the example leaves to its reader, render, goes first (its imports are hoisted).
  const code =
    "export const rendered = [];\nfunction render(m) { rendered.push(m); }\n" +
    EXAMPLE.replace(/from "@floehq\/floe";/, `from ${entry};`).replace(CALL, `ollamaChat({ baseURL: ${JSON.stringify(baseURL)}, model: "llama3.2" })`) +
    "\nexport { ollamaChat, session };\n";
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-adapter-"));
  try {
    writeFileSync(join(dir, "example.mjs"), code);
    return await import(join(dir, "example.mjs"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Ollama's /api/chat lines.
const chunkLine = (content) => JSON.stringify({ model: "llama3.2", created_at: "2025-05-27T22:54:57Z", message: { role: "assistant", content }, done: false }) + "\n";
const doneLine = JSON.stringify({ model: "llama3.2", message: { role: "assistant", content: "" }, done_reason: "stop", done: true, prompt_eval_count: 26, eval_count: 4 }) + "\n";

/** A loopback Ollama answering request k with script[k](req, res); bodies recorded parsed. */
async function ollamaServer(t, script) {
  const srv = await replayServer(t, async (req, res, body, entry) => {
    entry.json = JSON.parse(body);
    const k = srv.requests.length - 1;
    if (req.url !== "/api/chat" || !script[k]) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `no script for request ${k} to ${req.url}` }));
      return;
    }
    await script[k](req, res);
  });
  return srv;
}
const answer = (...pieces) => (req, res) => {
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.end(pieces.map(chunkLine).join("") + doneLine);
};
const fail = (status, error, headers = {}) => (req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error }));
};
const ends = (msgs) => find(msgs, "request_end").map((m) => [m.payload.status, m.payload.error_message ?? ""]);

test("README: the model of your own runs as written against a loopback Ollama", BOUND, async (t) => {
  assert.ok(EXAMPLE, "the README's Models section has the ollamaChat example");
  assert.ok(EXAMPLE.includes(CALL), "the example makes its model with " + CALL);
  assert.ok(EXAMPLE.split("\n").filter((l) => l.trim()).length <= 50, "the example is at most 50 lines");
  const srv = await ollamaServer(t, [answer("Rayleigh ", "scattering.")]);
  const ex = await runExample(srv.url);
  await ex.session.close();
  assert.deepEqual(checkStream(ex.rendered), []);
  assert.deepEqual(ends(ex.rendered), [["completed", ""]]);
  assert.deepEqual(find(ex.rendered, "text").map((m) => m.payload.text), ["Rayleigh scattering."]);
  assert.deepEqual(find(ex.rendered, "partial_text").map((m) => m.payload.text), ["", "Rayleigh ", "scattering.", ""]);
  assert.deepEqual(find(ex.rendered, "token_usage").map((m) => [m.payload.request.total, m.payload.session.output]), [[30, 4]]);
  assert.deepEqual(srv.requests[0].json, { model: "llama3.2", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Why is the sky blue?" }] });

  // Its failures, through the helpers: a 429 is retried, the conversation
  // keeps what completed, a 404 stops at once, a cut stream and an error
  // line fail the attempt, an abort ends it aborted and closes the connection.
  const gone = gate();
  const held = (req, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.write(chunkLine("Half"));
    res.on("close", gone.open);
  };
  const srv2 = await ollamaServer(t, [
    fail(429, "too many requests", { "retry-after": "2" }),
    answer("Blue."),
    fail(404, "model 'llama3.2' not found, try pulling it first"),
    (req, res) => (res.writeHead(200, { "content-type": "application/x-ndjson" }), res.end(chunkLine("Cut"))),
    (req, res) => (res.writeHead(200, { "content-type": "application/x-ndjson" }), res.end(chunkLine("Hm") + '{"error":"an error was encountered while running the model: unexpected EOF"}\n')),
    (req, res) => (res.writeHead(200, { "content-type": "application/x-ndjson" }), res.end('{"message":{"content":"x"}')),
    answer("Red."),
    held,
  ]);
  const s = floe.createSession({ llm: ex.ollamaChat({ baseURL: srv2.url, model: "llama3.2" }), clock: instantClock(), store: false, config: { maxReconnects: 1 } });
  t.after(() => s.close());
  let msgs = await collectRun(s.run("Why?"));
  assert.deepEqual(ends(msgs), [["timeout", "ollama: HTTP 429: too many requests (Retry-After: 2)"], ["completed", ""]]);
  msgs = await collectRun(s.run("Really?"));
  assert.deepEqual(ends(msgs), [["failed", "ollama: HTTP 404: model 'llama3.2' not found, try pulling it first"]], "permanent: no retry");
  msgs = await collectRun(s.run("Again?"));
  assert.deepEqual(ends(msgs), [["malformed", "ollama: the stream ended before done"], ["failed", "ollama: an error was encountered while running the model: unexpected EOF"]]);
  assert.deepEqual(checkStream(msgs), [], "the open fragments were closed");
  msgs = await collectRun(s.run("Once more?"));
  assert.equal(ends(msgs)[0][0], "malformed");
  assert.match(ends(msgs)[0][1], /^ollama: malformed stream: .*JSON/);
  assert.deepEqual(ends(msgs)[1], ["completed", ""]);
  const bodies = srv2.requests.map((r) => r.json.messages.map((m) => `${m.role}: ${m.content}`));
  assert.deepEqual(bodies[1], bodies[0], "the retried attempt sends the same input");
  assert.deepEqual(bodies[6].slice(0, 3), ["system: ", "user: Why?", "assistant: Blue."]);
  assert.deepEqual(bodies[6].filter((l) => l.startsWith("assistant")), ["assistant: Blue."], "only completed requests joined the conversation");
  assert.ok(bodies[6].includes("user: Once more?") && bodies[6].includes("user: Again?"), "the failed runs' prompts came with the engine's notices");

  const stop = new AbortController();
  msgs = [];
  for await (const m of s.run("And now?", { signal: stop.signal })) {
    msgs.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "delta") stop.abort();
  }
  assert.deepEqual(ends(msgs), [["aborted", "ollama: aborted"]]);
  await gone.wait(); // the server saw the connection close
  assert.deepEqual(checkStream(msgs), []);
});
