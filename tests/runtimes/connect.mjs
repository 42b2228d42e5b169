// floe.connect as a Deno or Bun user writes it from the README, run by
// runtimes.test.mjs in the project where the packed @floehq/floe is
// installed, against a floe-server (the scripted model, --token tok).
// Prints one JSON line of what it saw, then must end on its own.
// Argument: the server's base URL.
import { connect } from "@floehq/floe/connect.mjs";

const [base] = globalThis.Deno ? Deno.args : process.argv.slice(2);
const token = "tok";

async function create() {
  const r = await fetch(base + "/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ approvalMode: "ask" }),
  });
  if (r.status !== 201) throw new Error(`POST /api/sessions: ${r.status} ${await r.text()}`);
  return (await r.json()).id;
}

const out = {};

// A run whose two tool calls are approved, one by a Promise.
{
  const s = connect(base, await create(), { token });
  const asked = [];
  const types = [];
  const approve = (call) => (asked.push(call.payload.name), asked.length === 1 ? Promise.resolve("allow") : "allow");
  for await (const m of s.run("Count the lines of main.go", { approve })) types.push(m.payload.type);
  const history = (await s.history()).messages;
  out.run = {
    asked,
    outputs: types.filter((t) => t === "tool_call_output").length,
    last: types.at(-1),
    state: s.state,
    history: history.filter((m) => m.payload.type === "tool_call_output").length,
  };
  s.close();
}

// An abort (the run's signal) while an approval waits: the approver's
// Promise never settles.
{
  const s = connect(base, await create(), { token });
  const ac = new AbortController();
  const asked = [];
  const got = [];
  const approve = (call) => {
    asked.push(call.payload.name);
    ac.abort();
    return new Promise(() => {});
  };
  for await (const m of s.run("Count the lines of main.go", { approve, signal: ac.signal })) got.push(m);
  const last = got.at(-1).payload;
  out.abort = {
    asked,
    last: [last.type, last.reason],
    decided: got.some((m) => m.payload.type === "approval_decision"),
    ran: got.some((m) => m.payload.type === "tool_call_output" && m.payload.status === "done"),
  };
  s.close();
}

console.log(JSON.stringify(out));
