// A main module for the tests of servers let go in an isolate: POST
// /_test/abort/{id} resets the session object of that id (ctx.abort: the
// next request makes a new instance, as after an eviction, in the same
// isolate); GET /_test/servers/{id} answers, from that session's object,
// how many servers the isolate's object.wasm keeps; and POST
// /_test/idle/{id} runs that object's idle timer now, if one is armed
// (it answers {fired, servers}), which otherwise never fires.
import front from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    const m = /^\/_test\/(abort|servers|idle)\/(.+)$/.exec(pathname);
    if (m) return env.SESSIONS.get(env.SESSIONS.idFromName(m[2])).fetch("https://session.floe/_test/" + m[1]);
    return front.fetch(request, env, ctx);
  },
};

export class SessionObject extends Base {
  afterIdle(f) {
    this.idleFn = f;
  }

  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/_test/abort") {
      this.ctx.abort("reset by the test"); // this request fails with it
      return new Response(null, { status: 204 });
    }
    if (pathname === "/_test/servers") return Response.json({ servers: globalThis.floeObject.count() });
    if (pathname === "/_test/idle") {
      const f = this.idleFn;
      this.idleFn = null;
      f?.();
      return Response.json({ fired: !!f, servers: globalThis.floeObject.count() });
    }
    return super.fetch(request);
  }
}
