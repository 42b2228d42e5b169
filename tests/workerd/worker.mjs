// A Cloudflare Worker with Floe (the README's example): the wasm module
// comes from the Worker's module map and goes to load({ wasm }); workerd
// has neither setImmediate nor (without a compatibility flag) MessageChannel.
import { load, tool, transcript } from "./floe.mjs";
import { mockModel, checkStream } from "./test.mjs";
import wasm from "./floe.wasm";

export default {
  async fetch() {
    const floe = await load({ wasm });
    const clock = tool({ name: "clock", execute: () => "12:00" });
    const session = floe.createSession({
      llm: mockModel([{ toolCall: { name: "clock", id: "t" } }, "It is 12:00."]),
      tools: [clock],
      store: "memory",
    });
    const view = transcript();
    const messages = [];
    for await (const m of session.run("What time is it?", { approve: () => "allow" })) {
      messages.push(m);
      view.push(m);
    }
    return Response.json({
      text: view.text,
      output: view.card("t")?.output,
      problems: checkStream(messages),
      messageChannel: typeof MessageChannel,
      setImmediate: typeof setImmediate,
    });
  },
};
