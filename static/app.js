// Starts the playground: playground.wasm (Go) renders the page. Kept out of
// index.html so the page runs under a Content-Security-Policy without
// inline scripts. Registers the service worker that makes the page load
// with no network after the first visit.
import { connect } from "./connect.mjs";

const fail = (err) => {
  const banner = document.getElementById("error");
  banner.hidden = false;
  banner.textContent = "Could not start the playground: " + ((err && err.message) || err);
  document.body.dataset.state = "error";
};
if ("serviceWorker" in navigator && !new URL(location.href).searchParams.has("nosw")) {
  navigator.serviceWorker.register(new URL("sw.js", import.meta.url)).catch((e) => console.warn("service worker:", e.message));
}
try {
  const go = new Go();
  const url = new URL("playground.wasm", import.meta.url);
  const { instance } = await WebAssembly.instantiateStreaming(fetch(url), go.importObject);
  go.run(instance).then(() => fail(new Error("the Go program exited")), fail);
} catch (err) {
  fail(err);
}

// Remote session: the form attaches the page to a session hosted by a Floe
// server. The client (connect.mjs) follows it over HTTP and SSE; the Go UI
// renders its messages and drives it through this handle.
const form = document.getElementById("remote-form");
const status = document.getElementById("remote-status");
let current = null;
form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const url = document.getElementById("remote-url").value.trim();
  const id = document.getElementById("remote-session").value.trim();
  const token = document.getElementById("remote-token").value || undefined;
  let s;
  try {
    s = connect(url, id, { token });
  } catch (e) {
    status.textContent = e.message;
    return;
  }
  if (!globalThis.floePlayground) {
    status.textContent = "The playground has not started yet.";
    return;
  }
  current?.close();
  current = s;
  const report = (e) => {
    if (current === s) status.textContent = "Remote session: " + ((e && e.message) || e);
  };
  status.textContent = "Attached to " + id + ".";
  globalThis.floePlayground.attachRemote(
    {
      follow(onMessage) {
        (async () => {
          try {
            for await (const m of s.messages()) onMessage(JSON.stringify(m));
          } catch (e) {
            report(e);
          }
        })();
      },
      run(text, approve, end) {
        (async () => {
          try {
            const opts = { approve: (call) => new Promise((resolve) => approve(JSON.stringify(call), resolve)) };
            for await (const m of s.run(text, opts)) void m; // shown through follow()
            end(null);
          } catch (e) {
            end((e && e.message) || String(e));
          }
        })();
      },
      steer(text) {
        s.steer(text).catch(report);
      },
      abort() {
        s.abort().catch(report);
      },
      retryNow() {
        s.retryNow().catch(report);
      },
      close() {
        s.close();
        if (current === s) current = null;
      },
    },
    id,
    "remote · " + new URL(url).host,
  );
});
