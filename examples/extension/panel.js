// Shows a run of the background (background.js: Chrome's service worker,
// Firefox's event page): starts one when none is in flight, else follows
// the one in flight from its start. Each tool call waits for Allow or Deny
// here (or in another such page).
const port = chrome.runtime.connect({ name: "floe" });
const $ = (id) => document.getElementById(id);
const messages = [];
let ended = false;
let settle;
window.floeResult = new Promise((resolve) => (settle = resolve));

function finish(state, result) {
  ended = true;
  document.body.dataset.state = state;
  settle(result);
}

port.onMessage.addListener((msg) => {
  if (msg.state) {
    if (!msg.state.running) port.postMessage({ run: "Reverse 'floe'." });
    else if (msg.state.id) $("status").textContent = `${msg.state.resumed ? "Resumed" : "Created"} ${msg.state.id}.`;
  } else if (msg.message) {
    const m = msg.message;
    messages.push(m);
    const li = document.createElement("li");
    li.textContent = m.payload.type + (m.payload.event_type ? ` ${m.payload.event_type}` : "");
    $("stream").append(li);
    if (m.payload.type === "text") $("reply").textContent = m.payload.text;
    if (m.payload.type === "approval_decision") document.querySelector(`[data-call="${CSS.escape(m.payload.tool_call_id)}"]`)?.remove();
  } else if (msg.approve) {
    const { key, call } = msg.approve;
    const div = document.createElement("div");
    div.dataset.call = call.payload.tool_call_id;
    div.append(`Run ${call.payload.name}(${call.payload.arguments})? `);
    for (const decision of ["allow", "deny"]) {
      const b = document.createElement("button");
      b.textContent = decision === "allow" ? "Allow" : "Deny";
      b.onclick = () => port.postMessage({ decision: { key, decision } });
      div.append(b, " ");
    }
    $("approvals").append(div);
  } else if (msg.end) {
    finish("done", { messages, id: msg.end.id });
  } else if (msg.error) {
    $("error").textContent = msg.error;
    finish("error", { error: msg.error, messages });
  }
});

// The background stopped: the browser ended it, or the extension was reloaded.
port.onDisconnect.addListener(() => {
  if (ended) return;
  const error = "The background stopped mid-run. Open this page again: it resumes the stored session.";
  $("error").textContent = error;
  finish("disconnected", { error, messages });
});
