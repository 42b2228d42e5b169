// A main module for the tests of /readyz's check: the front with its
// check's bounds from the bindings TEST_READY_TTL_MS and
// TEST_READY_TIMEOUT_MS, and a session object whose /_index/ready counts
// the checks that reach it and waits, each, until the test opens its gate
// (GET /_test/open). GET /_test/probes?arrived=N&probes=M answers
// {probes, arrived} (the checks the object "index" was asked, the /readyz
// requests the front got) once there are at least that many of each.
import { front } from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

// counter is a count whose atLeast(n) resolves once it is n or more.
function counter() {
  let n = 0;
  let waiters = [];
  return {
    get: () => n,
    bump() {
      n++;
      for (const w of waiters.splice(0)) w();
    },
    async atLeast(want) {
      while (n < want) await new Promise((resolve) => waiters.push(resolve));
    },
  };
}

let fronts = null;
const arrived = counter();
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const { pathname } = url;
    if (pathname.startsWith("/_test/")) {
      await arrived.atLeast(Number(url.searchParams.get("arrived") ?? 0));
      return env.SESSIONS.get(env.SESSIONS.idFromName("index")).fetch("https://session.floe" + pathname + url.search, { headers: { "x-arrived": String(arrived.get()) } });
    }
    if (pathname === "/readyz") arrived.bump();
    fronts ??= front({ readyTTL: Number(env.TEST_READY_TTL_MS), readyTimeout: Number(env.TEST_READY_TIMEOUT_MS) });
    return fronts.fetch(request, env, ctx);
  },
};

const probes = counter();
let open;
const gate = new Promise((resolve) => (open = resolve));

export class SessionObject extends Base {
  async fetch(request) {
    const url = new URL(request.url);
    const { pathname } = url;
    if (pathname === "/_test/probes") {
      await probes.atLeast(Number(url.searchParams.get("probes") ?? 0));
      return Response.json({ probes: probes.get(), arrived: Number(request.headers.get("x-arrived")) });
    }
    if (pathname === "/_test/open") {
      open();
      return new Response(null, { status: 204 });
    }
    if (pathname === "/_index/ready") {
      probes.bump();
      await gate;
    }
    return super.fetch(request);
  }
}
