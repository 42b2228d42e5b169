// The Worker's main module: the Go front Worker (syumai/workers' generated
// worker.mjs) and the session Durable Object class.
export { default } from "./worker.mjs";
export { SessionObject } from "./session_object.mjs";
