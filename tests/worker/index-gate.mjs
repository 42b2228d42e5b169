// A main module for the test of a session deleted while its creation is
// answered: the object "index" holds each add to the session list until
// the test opens its gate (POST /_test/open).
import front from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/_test/open") return env.SESSIONS.get(env.SESSIONS.idFromName("index")).fetch("https://session.floe/_test/open");
    return front.fetch(request, env, ctx);
  },
};

let open;
const gate = new Promise((resolve) => (open = resolve));

export class SessionObject extends Base {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/_test/open") {
      open();
      return new Response(null, { status: 204 });
    }
    if (pathname === "/_index/add") await gate;
    return super.fetch(request);
  }
}
