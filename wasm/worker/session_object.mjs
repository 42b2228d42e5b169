// The session Durable Object: one object per session id hosts the engine
// and the SSE channel (the Go session server compiled to object.wasm), its
// Trace in the object's SQLite storage. Durable Object classes must be
// JavaScript; this one only instantiates the WebAssembly and hands it
// requests. When the object wakes after eviction (memory is gone), the
// server resumes the session from its Trace on the first request.
//
// The object named "index" keeps the list of sessions for the front
// Worker (/_index/add, /_index/remove, /_index/list) and answers its
// /readyz (/_index/ready).
import "./wasm_exec.js";
import mod from "./object.wasm";

// IDLE_MS is how long after the last request it answered ended an
// object lets its server go, when it runs nothing then (idleOver).
const IDLE_MS = 60_000;

// STREAM_MARK is how many bytes of a response may wait for a client to
// read before the server's writes wait too.
const STREAM_MARK = 8 << 20;

let api = null;
function floeObject() {
  if (!api) {
    const go = new Go();
    const instance = new WebAssembly.Instance(mod, go.importObject);
    go.run(instance); // main registers globalThis.floeObject, then blocks
    api = globalThis.floeObject;
  }
  return api;
}

// numberVar reads a numeric variable (a string, or a number in
// wrangler.toml): absent or empty is dflt; anything but a number from 0 to
// max (a whole one when whole) is an Error naming the variable, as the
// native server's flags are refused.
function numberVar(env, name, dflt, max, what, whole = false) {
  const raw = env[name];
  if (raw == null || raw === "") return dflt;
  const n = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > max || (whole && !Number.isInteger(n))) {
    throw new Error(`${name}=${JSON.stringify(raw)}: want ${whole ? "a whole number" : "a number"} from 0 to ${max}: ${what}`);
  }
  return n;
}

// VARS are the variables the Worker reads (README, "On Cloudflare"); the
// secret FLOE_API_KEY_ENV names may have any name.
const VARS = [
  "FLOE_TOKEN", "FLOE_ORIGINS", "FLOE_MODE", "FLOE_DELAY_MS", "FLOE_REPLAY_EVENTS", "FLOE_WRITE_TIMEOUT_MS",
  "FLOE_MODEL", "FLOE_MODEL_ID", "FLOE_BASE_URL", "FLOE_API_KEY_ENV", "FLOE_SYSTEM_PROMPT", "FLOE_CONTEXT_WINDOW",
  "FLOE_IDLE_TIMEOUT_MS", "FLOE_GEMINI", "FLOE_MAX_IMAGE_BYTES", "FLOE_MAX_IMAGES", "FLOE_NO_IMAGES", "FLOE_MAX_STREAMS",
  "FLOE_STARTS_IN_THINKING",
];

// unknownVar names a FLOE_ variable of env that the Worker does not read,
// a misspelling most likely (FLOE_TOKN would leave the API open), with the
// name it is nearest to; "" when there is none. Case, a hyphen or a space
// for the underscore, and spaces around the name are misspellings too:
// floe_token and "FLOE_TOKEN " are not FLOE_TOKEN either.
export function unknownVar(env) {
  for (const name of Object.keys(env)) {
    if (VARS.includes(name) || name === env.FLOE_API_KEY_ENV) continue;
    const norm = name.trim().toUpperCase().replace(/[- ]/g, "_");
    if (!norm.startsWith("FLOE_")) continue;
    let best = [];
    let bestD = 4; // at most 3 edits away
    for (const v of VARS) {
      const d = distance(norm, v);
      if (d < bestD) [best, bestD] = [[v], d];
      else if (d === bestD) best.push(v);
    }
    const shown = /^\w+$/.test(name) ? name : JSON.stringify(name); // a space in it is seen
    return `${shown}: not a variable of Floe's Worker (${best.length ? `did you mean ${best.join(" or ")}?` : `it reads ${VARS.join(", ")}`})`;
  }
  return "";
}

// tokenProblem says why FLOE_TOKEN can never match an Authorization
// header, as floe-server refuses such a --token; "" when it can, or is
// unset (the API then open to whoever has the URL). A token pasted or
// piped with its line feed refused every request, 401 "missing or wrong
// bearer token", which did not say why.
export function tokenProblem(env) {
  const t = env.FLOE_TOKEN;
  if (typeof t !== "string" || t === "") return "";
  if (t.trim() !== t) return "FLOE_TOKEN: the token starts or ends with white space (a line feed from where it was copied?), which no Authorization header carries: every request would be refused";
  if (/[\x00-\x1f\x7f]/.test(t)) return "FLOE_TOKEN: the token holds a control character, which no Authorization header carries: every request would be refused";
  return "";
}

// distance is the edit distance of a and b, a swap of two neighbours one
// edit (FLOE_MODLE is FLOE_MODEL's).
function distance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

// INDEX_WRITES are the session list's writes, by the front's route (index).
const INDEX_WRITES = {
  "/_index/making": (sql, id) => sql.exec("INSERT OR IGNORE INTO floe_sessions (id, created, pending) VALUES (?, ?, 1)", id, Date.now()),
  "/_index/deleting": (sql, id) => sql.exec("UPDATE floe_sessions SET pending = 2 WHERE id = ? AND pending = 0", id),
  "/_index/add": (sql, id) =>
    sql.exec("INSERT INTO floe_sessions (id, created, pending) VALUES (?, ?, 0) ON CONFLICT (id) DO UPDATE SET pending = 0", id, Date.now()),
  "/_index/remove": (sql, id) => sql.exec("DELETE FROM floe_sessions WHERE id = ?", id),
  "/_index/unmade": (sql, id) => sql.exec("DELETE FROM floe_sessions WHERE id = ? AND pending = 1", id),
};

// A list asks the objects of at most SETTLE_AT_ONCE marked rows, each for
// at most SETTLE_TIMEOUT ms (index).
const SETTLE_AT_ONCE = 16;
const SETTLE_TIMEOUT = 2000;

export class SessionObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.handle = null;
  }

  // options are the server's options from the Worker's variables; an
  // Error names the one that is wrong.
  options() {
    const delayMs = numberVar(this.env, "FLOE_DELAY_MS", 30, 60000, "milliseconds between two of the scripted model's deltas");
    const replayEvents = numberVar(this.env, "FLOE_REPLAY_EVENTS", 0, 1e7, "the replay buffer's bound in events (0: 10,000)", true);
    const writeTimeoutMs = numberVar(this.env, "FLOE_WRITE_TIMEOUT_MS", 0, 3600000, "milliseconds a write waits for a slow client (0: 30 s)");
    // Absent: the native server's default (1,000); 0: no bound.
    const maxStreams = numberVar(this.env, "FLOE_MAX_STREAMS", undefined, 1e6, "streams of one session open at once, past which one is refused with 429 too_many_streams (0: no bound; default 1000)", true);
    return { delayMs, mode: this.env.FLOE_MODE ?? "ask", replayEvents, writeTimeoutMs, maxStreams };
  }

  envFn() {
    return (name) => (typeof this.env[name] === "string" ? this.env[name] : "");
  }

  // server is this object's server in the isolate's object.wasm: opened
  // at the first request, and again when it was released while idle
  // (by idleOver, or by object.wasm, which keeps a few idle ones: an
  // evicted object's would stay for the isolate's life), its session
  // resumed from its Trace. Its key
  // is the object's id (a stand-in ctx, as the tests' main modules make,
  // may have none: no key).
  server() {
    if (this.handle !== null && !floeObject().live(this.handle)) this.handle = null;
    if (this.handle === null) {
      const h = floeObject().open(this.ctx.storage.sql, this.options(), this.envFn(), String(this.ctx.id ?? ""));
      if (h instanceof Error) throw h;
      this.handle = h;
    }
    return this.handle;
  }

  // idleSoon (re)arms the object's idle timer, at the end of each request
  // it answered. Cloudflare evicts an object idle for a minute or two, and
  // nothing tells the isolate, whose object.wasm would keep the server
  // (and its session's history and replay buffer) until eight others are
  // opened: let go first, its memory serves the isolate's other servers.
  idleSoon() {
    clearTimeout(this.idleTimer);
    this.idleTimer = this.afterIdle(() => this.idleOver());
  }

  // afterIdle runs f IDLE_MS from now (a test's subclass runs it when it
  // says).
  afterIdle(f) {
    return setTimeout(f, IDLE_MS);
  }

  // idleOver lets the server go, unless a request is being answered (a
  // stream) or a run goes on (awaiting an approval, say): then it waits
  // again. The next request opens another, its session resumed from its
  // Trace with a new channel epoch, as after an eviction.
  idleOver() {
    if (this.handle === null) return;
    if (floeObject().release(this.handle)) this.handle = null;
    else this.idleSoon();
  }

  // ready answers the Worker's /readyz, asked of the object "index": 204
  // when a session's object could start (its variables as open checks
  // them) and this object's storage answers, else the 500 a session's
  // request would get. The first starts object.wasm in this isolate (the
  // checks are the Go ones), which its session objects then share.
  ready() {
    try {
      const err = floeObject().check(this.options(), this.envFn());
      if (err instanceof Error) throw err;
    } catch (e) {
      return Response.json({ error: { code: "configuration", message: `the session object cannot start: ${e.message}` } }, { status: 500 });
    }
    try {
      this.ctx.storage.sql.exec("SELECT 1");
    } catch (e) {
      return Response.json({ error: { code: "storage", message: `the object's storage: ${e.message}` } }, { status: 500 });
    }
    return new Response(null, { status: 204 });
  }

  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/_index/ready") return this.ready();
    if (url.pathname.startsWith("/_index/")) return this.index(url, request);
    // The body is read first: the server is taken after, with no await
    // between, so that another object's open cannot release it meanwhile.
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    let handle;
    try {
      handle = this.server();
    } catch (e) {
      // A configuration the object cannot start with (FLOE_MODEL and the
      // rest): every request says what is wrong, until it is fixed.
      return Response.json({ error: { code: "configuration", message: `the session object cannot start: ${e.message}` } }, { status: 500 });
    }
    const object = this;
    return new Promise((resolve) => {
      let controller;
      let cancelled = null;
      // The body's queue: past STREAM_MARK bytes, write() says so and the
      // server's next write waits until the client reads (pull: the queue
      // is under its mark again), or its write deadline passes and the
      // client is disconnected (serve.go).
      let drained = null;
      let behind = false;
      const stream = new ReadableStream(
        {
          start(c) {
            controller = c;
          },
          pull() {
            if (behind) {
              behind = false;
              drained?.();
            }
          },
          cancel() {
            cancelled?.();
          },
        },
        new ByteLengthQueuingStrategy({ highWaterMark: STREAM_MARK }),
      );
      const reply = {
        head(status, headers) {
          const noBody = status === 204 || status === 304;
          resolve(new Response(noBody ? null : stream, { status, headers }));
        },
        write(bytes) {
          try {
            controller.enqueue(bytes);
          } catch {
            return true; // the stream is gone: nothing to wait for
          }
          if (controller.desiredSize > 0) return true;
          behind = true;
          return false;
        },
        onDrain(f) {
          drained = f;
        },
        end() {
          drained = null; // the server released it: no write waits any more
          try {
            controller.close();
          } catch {}
          object.idleSoon();
        },
        onCancel(f) {
          cancelled = f;
        },
      };
      const err = floeObject().fetch(handle, request.method, request.url, [...request.headers], body, reply);
      if (err instanceof Error) {
        object.idleSoon();
        resolve(Response.json({ error: { code: "internal", message: err.message } }, { status: 500 }));
      }
    });
  }

  // The session list, kept by the object named "index", newest first:
  // of sessions made in the same millisecond, the one added last (its
  // rowid, which an id made again after its deletion takes anew).
  //
  // The front marks a row before it asks the session's object to make or
  // delete the session (/_index/making: a new row, pending 1, not listed
  // yet; /_index/deleting: a listed row, pending 2), and settles it after
  // (/_index/add, /_index/remove; /_index/unmade when the object refused
  // to make it). A Worker cut off between the two (a
  // restart, a deploy, a request's CPU limit) leaves the mark, and the
  // next list asks the object of each marked row whether its session is:
  // 200 lists it for good, 404 takes the row off; unanswered, a row being
  // made stays out of the list and one being deleted stays in, and the
  // list after asks again. Before, such a cut left the list showing a
  // deleted session, whose DELETE answered 404, or never showing a made
  // one.
  async index(url, request) {
    const sql = this.ctx.storage.sql;
    this.indexTable(sql);
    if (url.pathname === "/_index/list") {
      await this.settle(sql);
      const rows = sql.exec("SELECT id, created FROM floe_sessions WHERE pending != 1 ORDER BY created DESC, rowid DESC").toArray();
      return Response.json({ sessions: rows.map((r) => ({ id: r.id, created: new Date(r.created).toISOString() })) });
    }
    const { id } = await request.json();
    // A write the storage refuses is a 500 naming why, which the front
    // logs (a full database, say).
    try {
      const write = INDEX_WRITES[url.pathname];
      if (!write) return Response.json({ error: { code: "not_found", message: url.pathname } }, { status: 404 });
      write(sql, id);
    } catch (e) {
      return Response.json({ error: { code: "storage", message: e.message } }, { status: 500 });
    }
    return new Response(null, { status: 204 });
  }

  // indexTable makes the list's table, or adds the column pending to one
  // a version before it made (its rows settled).
  indexTable(sql) {
    if (this.indexed) return;
    sql.exec("CREATE TABLE IF NOT EXISTS floe_sessions (id TEXT PRIMARY KEY, created INTEGER NOT NULL, pending INTEGER NOT NULL DEFAULT 0)");
    try {
      sql.exec("SELECT pending FROM floe_sessions LIMIT 0");
    } catch {
      sql.exec("ALTER TABLE floe_sessions ADD COLUMN pending INTEGER NOT NULL DEFAULT 0");
    }
    this.indexed = true;
  }

  // settle asks the objects of up to SETTLE_AT_ONCE marked rows whether
  // their sessions are, each within SETTLE_TIMEOUT ms, and settles the
  // rows they answer for. A row made or deleted again meanwhile is the
  // front's to settle: a 200 only clears a mark still there, a 404 only
  // takes off a row still marked.
  async settle(sql) {
    const marked = sql.exec("SELECT id FROM floe_sessions WHERE pending != 0 LIMIT ?", SETTLE_AT_ONCE).toArray();
    if (marked.length === 0 || !this.env.SESSIONS) return;
    const ns = this.env.SESSIONS;
    await Promise.all(
      marked.map(async ({ id }) => {
        let status = 0;
        try {
          const asked = ns.get(ns.idFromName(id)).fetch("https://session.floe/api/sessions/" + encodeURIComponent(id));
          let timer;
          const late = new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_TIMEOUT, null)));
          const resp = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
          if (resp) {
            status = resp.status;
            await resp.body?.cancel();
          }
        } catch {} // unanswered: the row keeps its mark
        try {
          if (status === 200) sql.exec("UPDATE floe_sessions SET pending = 0 WHERE id = ?", id);
          else if (status === 404) sql.exec("DELETE FROM floe_sessions WHERE id = ? AND pending != 0", id);
        } catch (e) {
          console.error(`floe: the session list: settling ${JSON.stringify(id)}: ${e.message}`);
        }
      }),
    );
  }
}
