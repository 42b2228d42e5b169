// The Worker's main module: the Go front Worker (syumai/workers' generated
// worker.mjs) and the session Durable Object class. A FLOE_ variable the
// Worker does not read (FLOE_TOKN for FLOE_TOKEN) answers every request
// with a 500 naming it, before the front Worker runs. /healthz and
// /readyz, as floe-server's, are answered here, without a token, whatever
// the Origin.
import worker from "./worker.mjs";
import { unknownVar } from "./session_object.mjs";
export { SessionObject } from "./session_object.mjs";

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname === "/healthz" || pathname === "/readyz") return probe(request, env, pathname);
    const problem = unknownVar(env);
    if (problem) return Response.json({ error: { code: "configuration", message: `the Worker cannot start: ${problem}` } }, { status: 500 });
    return worker.fetch(request, env, ctx);
  },
};

// READY_TTL is how long /readyz answers with its last check's finding (a
// probe wants no token: anyone may ask, and each check is a request to
// the object "index"); READY_TIMEOUT how long it waits for the object.
const READY_TTL = 1000;
const READY_TIMEOUT = 2000;

// last is the last check's finding, {at, why} ("" ready), kept by the
// isolate: a plain string, since a promise of another request's may never
// settle in this one's (that request cancelled).
let last = null;
let wasReady = true; // the finding before, so that the log says a failure once, when it begins

function text(status, body, head, headers = {}) {
  return new Response(head ? null : body + "\n", { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...headers } });
}

async function probe(request, env, pathname) {
  const head = request.method === "HEAD";
  if (!head && request.method !== "GET") return text(405, "method not allowed; use GET or HEAD", false, { Allow: "GET, HEAD" });
  if (pathname === "/healthz") return text(200, "ok", head);
  let why = last && Date.now() - last.at < READY_TTL ? last.why : null;
  if (why === null) {
    why = await check(env);
    last = { at: Date.now(), why };
  }
  if (why) {
    if (wasReady) console.error(`floe: not ready: ${why}`);
    wasReady = false;
    return text(503, "not ready: the Worker cannot serve sessions (its log says why)", head);
  }
  if (!wasReady) console.log("floe: ready");
  wasReady = true;
  return text(200, "ready", head);
}

// check says why the Worker cannot serve sessions, or "": a variable it
// does not read, no SESSIONS binding, or the object "index" not answering
// within READY_TIMEOUT or refusing the configuration (open's checks of the
// variables, FLOE_MODEL and the rest) or its storage.
async function check(env) {
  const problem = unknownVar(env);
  if (problem) return problem;
  const ns = env.SESSIONS;
  if (!ns || typeof ns.idFromName !== "function") return "no SESSIONS binding (a Durable Object namespace of SessionObject)";
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve(`the Durable Object did not answer within ${READY_TIMEOUT} ms`), READY_TIMEOUT)));
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
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}
