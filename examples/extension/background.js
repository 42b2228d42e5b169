// The background script: Chrome runs it as the extension's service worker,
// Firefox (which has no extension service workers) as its event page; the
// manifest names it for both. The toolbar button opens the session page;
// and the background runs the agent for panel.html (or any extension page)
// that connects a port named "floe". floe.mjs loads in a module service
// worker ("type": "module" in the manifest; a classic one cannot import
// it) and in an event page, with IndexedDB and Web Locks as in a page, so
// its Trace is stored as a page's.
//
// The run belongs to the background, not to a page: closing the page that
// started it does not stop it, and a page that connects later gets the
// messages so far and then the rest. Chrome stops an idle worker, and
// Firefox suspends an idle event page, after 30 s without events or
// extension API calls, so while a run is in flight the background calls
// one every 20 s; one stopped anyway (the extension is updated, or a
// model's response takes more than 30 s to start) resumes the stored
// session at the next run.
import { load } from "./floe.mjs";
import { openSession } from "./agent.js";

const SESSION_ID = "session-2026-01-01-00-00-00-b0b0b0b0";

chrome.action.onClicked.addListener(() => {
  chrome.tabs.create({ url: chrome.runtime.getURL("session.html") });
});

const ports = new Set();
let current = null; // the run in flight: { id, resumed, messages, approvals, stop }

// A message of session.run() is plain JSON: it crosses a port as it is.
// A page closed a moment ago may not have said so yet: posting to its port
// throws, which must not end the run for the others.
function send(msg) {
  for (const port of ports) {
    try {
      port.postMessage(msg);
    } catch {
      ports.delete(port);
    }
  }
}

// The extension's own pages (panel.html) drive the run: start it, answer
// its calls, stop it. A content script connects from a web page's
// process, which Chrome and Firefox do not trust with the extension's
// powers: it follows, and what it sends is ignored, so a page that takes
// over its process (or a script that relays the page's messages) cannot
// allow a tool call.
const OWN = chrome.runtime.getURL("");

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== "floe") return;
  const drives = typeof port.sender?.url === "string" && port.sender.url.startsWith(OWN);
  ports.add(port);
  port.onDisconnect.addListener(() => ports.delete(port));
  port.onMessage.addListener((msg) => {
    if (!drives) return;
    if (typeof msg?.run === "string" && !current) start(msg.run);
    else if (msg?.decision && current) current.approvals.get(msg.decision.key)?.decide(msg.decision.decision);
    else if (msg?.stop && current) current.stop.abort();
  });
  port.postMessage({ state: { running: current != null, id: current?.id, resumed: current?.resumed } });
  if (current) {
    for (const m of current.messages) port.postMessage({ message: m });
    for (const [key, { call }] of current.approvals) port.postMessage({ approve: { key, call } });
  }
});

async function start(prompt) {
  const run = { messages: [], approvals: new Map(), stop: new AbortController() };
  current = run;
  const keepAlive = setInterval(() => chrome.runtime.getPlatformInfo(), 20_000);
  let keys = 0;
  // There is no confirm() in a worker: each call is asked of the pages.
  const approve = (call) =>
    new Promise((resolve) => {
      const key = ++keys;
      const decide = (decision) => {
        run.approvals.delete(key);
        resolve(decision);
      };
      run.approvals.set(key, { call, decide });
      send({ approve: { key, call } });
    });
  try {
    const floe = await load();
    const { session, resumed } = await openSession(floe, SESSION_ID);
    Object.assign(run, { id: session.id, resumed });
    send({ state: { running: true, id: session.id, resumed } });
    try {
      for await (const m of session.run(prompt, { approve, signal: run.stop.signal })) {
        run.messages.push(m);
        send({ message: m });
      }
    } finally {
      await session.close();
    }
    send({ end: { id: session.id } });
  } catch (e) {
    send({ error: String(e?.message ?? e) });
  } finally {
    clearInterval(keepAlive);
    current = null;
  }
}
