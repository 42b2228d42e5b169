// The Worker's main module: the Go front Worker (syumai/workers' generated
// worker.mjs) and the session Durable Object class. A FLOE_ variable the
// Worker does not read (FLOE_TOKN for FLOE_TOKEN) answers every request
// with a 500 naming it, before the front Worker runs.
import worker from "./worker.mjs";
import { unknownVar } from "./session_object.mjs";
export { SessionObject } from "./session_object.mjs";

export default {
  fetch(request, env, ctx) {
    const problem = unknownVar(env);
    if (problem) return Response.json({ error: { code: "configuration", message: `the Worker cannot start: ${problem}` } }, { status: 500 });
    return worker.fetch(request, env, ctx);
  },
};
