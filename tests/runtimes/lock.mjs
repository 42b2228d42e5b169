// One process's part in a {dir} session's lock, run by runtimes.test.mjs
// under Deno, Bun or Node. Arguments: the part, the directory, the id.
//   hold: runs the session; its tool prints "holding" and ends once a line
//         comes on stdin. Prints "ended".
//   try:  resumes the session and runs it; prints "ran", or the error's
//         code and message.
import { load, tool } from "@floehq/floe";
import { mockModel } from "@floehq/floe/test";
import { createInterface } from "node:readline";

const [part, dir, id] = globalThis.Deno ? Deno.args : process.argv.slice(2);
const floe = await load();
const store = { dir };
const wait = tool({
  name: "wait",
  parameters: { type: "object" },
  execute: () => {
    console.log("holding");
    const lines = createInterface({ input: process.stdin });
    return new Promise((resolve) => lines.once("line", () => (lines.close(), resolve("went on"))));
  },
});

if (part === "hold") {
  const llm = mockModel([{ toolCall: { name: "wait", id: "w" } }, "held"]);
  const s = await floe.resumeSession(id, { llm, tools: [wait], store, onDiagnostic: () => {} }).catch((e) => {
    if (e.code !== "not_found") throw e;
    return floe.createSession({ llm, tools: [wait], store, meta: { session_id: id } });
  });
  for await (const m of s.run("hold", { approve: () => "allow" }));
  await s.close();
  console.log("ended");
} else {
  try {
    const s = await floe.resumeSession(id, { llm: mockModel(["mine now"]), store, onDiagnostic: () => {} });
    for await (const m of s.run("try"));
    await s.close();
    console.log("ran");
  } catch (e) {
    console.log(JSON.stringify({ code: e.code, message: e.message }));
  }
}
