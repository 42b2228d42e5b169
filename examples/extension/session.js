// Runs the session in this extension page. floe.mjs, floe.wasm and
// wasm_exec.js are copied next to this file from the build (see README.md);
// the manifest's CSP allows them with 'wasm-unsafe-eval' and nothing looser.
// Opened again, the page resumes the session it stored.
import { load } from "./floe.mjs";
import { openSession } from "./agent.js";

const SESSION_ID = "session-2026-01-01-00-00-00-e0e0e0e0";

async function main() {
  const floe = await load();
  const { session, resumed } = await openSession(floe, SESSION_ID);
  document.getElementById("status").textContent = resumed ? `Resumed ${session.id}.` : `Created ${session.id}.`;
  const list = document.getElementById("stream");
  const messages = [];
  try {
    // A real extension would ask the user; this example allows every call.
    for await (const m of session.run("Reverse 'floe'.", { approve: async () => "allow" })) {
      messages.push(m);
      const li = document.createElement("li");
      li.textContent = m.payload.type + (m.payload.event_type ? ` ${m.payload.event_type}` : "");
      list.append(li);
      if (m.payload.type === "text") document.getElementById("reply").textContent = m.payload.text;
    }
  } finally {
    await session.close();
  }
  return { messages, resumed, id: session.id };
}

// The error and where it came from. Chromium's stack starts with the
// error's name and message; Firefox's lists only the frames, and is empty
// for some of its own DOMExceptions.
function describe(err) {
  const head = String(err);
  const stack = typeof err?.stack === "string" ? err.stack : "";
  if (stack.startsWith(head)) return stack;
  return stack ? `${head}\n${stack}` : head;
}

window.floeResult = main().then(
  (result) => {
    document.body.dataset.state = "done";
    return result;
  },
  (err) => {
    document.body.dataset.state = "error";
    document.getElementById("error").textContent = describe(err);
    return { error: describe(err) };
  },
);
