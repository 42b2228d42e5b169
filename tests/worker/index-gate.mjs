// A main module for the tests of a session deleted while it is made, or
// made again while it is deleted: the object "index" holds each request
// of the route TEST_HOLD (/_index/add or /_index/remove) to the session
// list until the test opens its gate (POST /_test/open). GET /_test/held
// answers 204 once one such request waits there.
import front from "./index.mjs";
import { SessionObject as Base } from "./session_object.mjs";

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/_test/")) return env.SESSIONS.get(env.SESSIONS.idFromName("index")).fetch("https://session.floe" + pathname);
    return front.fetch(request, env, ctx);
  },
};

let open;
const gate = new Promise((resolve) => (open = resolve));
let arrived;
const held = new Promise((resolve) => (arrived = resolve));

export class SessionObject extends Base {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/_test/open") {
      open();
      return new Response(null, { status: 204 });
    }
    if (pathname === "/_test/held") {
      await held;
      return new Response(null, { status: 204 });
    }
    if (pathname === (this.env.TEST_HOLD || "/_index/add")) {
      arrived();
      await gate;
    }
    return super.fetch(request);
  }
}
