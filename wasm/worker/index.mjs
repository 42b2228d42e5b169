// The Worker's main module: the Go front Worker (syumai/workers' generated
// worker.mjs) and the session Durable Object class. A FLOE_ variable the
// Worker does not read (FLOE_TOKN for FLOE_TOKEN), or a FLOE_TOKEN no
// request can match, answers every request with a 500 naming it, before
// the front Worker runs. /healthz and
// /readyz, as floe-server's, are answered here, without a token, whatever
// the Origin.
import worker from "./worker.mjs";
import { unknownVar, tokenProblem } from "./session_object.mjs";
export { SessionObject } from "./session_object.mjs";

export default front();

// front is the Worker's fetch handler. readyTTL is how long /readyz
// answers with its last check's finding (a probe wants no token: anyone
// may ask, and each check is a request to the object "index");
// readyTimeout how long a check waits for the object. (The tests' main
// modules set them: production has the defaults.)
export function front({ readyTTL = 1000, readyTimeout = 2000 } = {}) {
  // last is the last check's finding, {at, why} ("" ready), kept by the
  // isolate; checking is the check in flight, which the /readyz requests
  // that come meanwhile wait for rather than each asking the object.
  let last = null;
  let checking = null;
  let wasReady = true; // the finding before, so that the log says a failure once, when it begins
  let warnedOpen = false; // the log said once that the API has no FLOE_TOKEN

  async function probe(request, env, ctx, pathname) {
    const head = request.method === "HEAD";
    if (!head && request.method !== "GET") return text(405, "method not allowed; use GET or HEAD", false, { Allow: "GET, HEAD" });
    if (pathname === "/healthz") return text(200, "ok", head);
    let why = last && Date.now() - last.at < readyTTL ? last.why : null;
    if (why === null) why = await shared(env, ctx);
    if (why) {
      if (wasReady) console.error(`floe: not ready: ${why}`);
      wasReady = false;
      return text(503, "not ready: the Worker cannot serve sessions (its log says why)", head);
    }
    if (!wasReady) console.log("floe: ready");
    wasReady = true;
    return text(200, "ready", head);
  }

  // shared is the check in flight, or a new one. The request that starts
  // it keeps it alive past its own end (waitUntil: its client may leave);
  // each waits at most readyTimeout of its own, since a promise another
  // request started may still never settle in this one.
  function shared(env, ctx) {
    if (!checking) {
      const c = check(env, readyTimeout).then((why) => {
        last = { at: Date.now(), why };
        if (checking === c) checking = null;
        return why;
      });
      checking = c;
      ctx?.waitUntil?.(c);
    }
    const c = checking;
    return within(c, readyTimeout, () => {
      if (checking === c) checking = null; // the next asks again
      return `the Durable Object did not answer within ${readyTimeout} ms`;
    });
  }

  return {
    fetch(request, env, ctx) {
      const { pathname } = new URL(request.url);
      if (pathname === "/healthz" || pathname === "/readyz") return probe(request, env, ctx, pathname);
      const problem = unknownVar(env) || tokenProblem(env);
      if (problem) return Response.json({ error: { code: "configuration", message: `the Worker cannot start: ${problem}` } }, { status: 500 });
      if (!warnedOpen && !env.FLOE_TOKEN) {
        // Open, as the README says, and the log says so once per isolate,
        // as floe-server's does off loopback without a --token.
        warnedOpen = true;
        console.warn("floe: FLOE_TOKEN is unset: the API answers whoever has the Worker's URL (npx wrangler secret put FLOE_TOKEN)");
      }
      return worker.fetch(request, env, ctx);
    },
  };
}

function text(status, body, head, headers = {}) {
  return new Response(head ? null : body + "\n", { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...headers } });
}

// within is p's value, or late()'s once ms have passed.
async function within(p, ms, late) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(late()), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// check says why the Worker cannot serve sessions, or "": a variable it
// does not read, a FLOE_TOKEN no request can match, no SESSIONS binding, or the object "index" not answering
// within timeout ms or refusing the configuration (open's checks of the
// variables, FLOE_MODEL and the rest) or its storage.
async function check(env, timeout) {
  const problem = unknownVar(env) || tokenProblem(env);
  if (problem) return problem;
  const ns = env.SESSIONS;
  if (!ns || typeof ns.idFromName !== "function") return "no SESSIONS binding (a Durable Object namespace of SessionObject)";
  const asked = (async () => {
    try {
      const resp = await ns.get(ns.idFromName("index")).fetch("https://session.floe/_index/ready");
      if (resp.status === 204) return "";
      const body = await resp.text();
      try {
        return JSON.parse(body).error.message;
      } catch {
        return `the Durable Object answered ${resp.status}`;
      }
    } catch (e) {
      return `the Durable Object: ${e.message}`;
    }
  })();
  return within(asked, timeout, () => `the Durable Object did not answer within ${timeout} ms`);
}
