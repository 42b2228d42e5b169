// A session opened at a module's top level, as a store module does: a
// hot update of this module evaluates it again while the old instance's
// session may still run (module.js closes that one).
import { load } from "@floehq/floe";
import { echoModel } from "./model.js";
import { events } from "./shared.js";

const floe = await load();
export let session;
try {
  session = await floe.resumeSession("module-chat", { llm: echoModel() });
  events.push("ready resumed");
} catch (e) {
  if (e.code !== "not_found") throw e;
  session = floe.createSession({ llm: echoModel(), meta: { session_id: "module-chat" } });
  events.push("ready created");
}
