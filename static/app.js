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
// Keys of the side panel (the Go UI draws it; this only moves the focus).
// Its tabs are one stop of Tab: the arrow keys, Home and End choose one
// and show its panel, as the WAI-ARIA tabs pattern says. The Stream and
// Trace lists are one stop each (not one a row, of a thousand): from the
// list the arrow keys go to its first or last row, then from row to row.
const moveKey = (ev, items, at, wrap) => {
  const n = items.length;
  const to = { ArrowRight: at + 1, ArrowDown: at < 0 ? 0 : at + 1, ArrowLeft: at - 1, ArrowUp: at < 0 ? n - 1 : at - 1, Home: 0, End: n - 1 }[ev.key];
  if (to === undefined || !n) return null;
  ev.preventDefault();
  return items[wrap ? (to + n) % n : Math.max(0, Math.min(n - 1, to))];
};
document.querySelector('[role="tablist"]')?.addEventListener("keydown", (ev) => {
  if (ev.key === "ArrowUp" || ev.key === "ArrowDown") return;
  const tabs = [...ev.currentTarget.querySelectorAll('[role="tab"]')];
  const tab = moveKey(ev, tabs, tabs.indexOf(ev.target), true);
  tab?.focus();
  tab?.click();
});
for (const id of ["stream", "trace"]) {
  document.getElementById(id)?.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") return;
    const rows = [...ev.currentTarget.querySelectorAll("button.row")];
    moveKey(ev, rows, rows.indexOf(ev.target), false)?.focus();
  });
}

if ("serviceWorker" in navigator && !new URL(location.href).searchParams.has("nosw")) {
  navigator.serviceWorker.register(new URL("sw.js", import.meta.url)).catch((e) => console.warn("service worker:", e.message));
}
try {
  const go = new Go();
  const url = new URL("playground.wasm", import.meta.url);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetching ${url.href}: HTTP ${res.status}`);
  // A host that serves .wasm as application/octet-stream (not
  // application/wasm) gets the bytes compiled whole instead of streamed.
  const { instance } = (res.headers.get("content-type") ?? "").startsWith("application/wasm")
    ? await WebAssembly.instantiateStreaming(res, go.importObject)
    : await WebAssembly.instantiate(await res.arrayBuffer(), go.importObject);
  go.run(instance).then(() => fail(new Error("the Go program exited")), fail);
} catch (err) {
  fail(err);
}

// Remote session: the form attaches the page to a session hosted by a Floe
// server. The client (connect.mjs) follows it over HTTP and SSE; the Go UI
// renders its messages and drives it through this handle. The server URL
// and the session id are remembered in this browser (never the token), so
// that a reload offers to attach again.
const REMEMBER = "floe.remote";
const form = document.getElementById("remote-form");
const status = document.getElementById("remote-status");
const field = (id) => document.getElementById(id);
let current = null;
try {
  const last = JSON.parse(localStorage.getItem(REMEMBER) ?? "null");
  if (last && typeof last.url === "string" && typeof last.session === "string") {
    field("remote-url").value = last.url;
    field("remote-session").value = last.session;
  }
} catch {}

// A fetch the page's Content-Security-Policy blocks fails like an
// unreachable server. blockedByPolicy reads the policies the page runs
// under (its meta elements', and its header's: a HEAD of the page itself)
// and matches origin against their connect-src: true when one of them
// blocks it, false otherwise.
async function blockedByPolicy(origin) {
  const policies = [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')].map((m) => m.content);
  try {
    const header = (await fetch(location.href, { method: "HEAD", cache: "no-store" })).headers.get("content-security-policy");
    if (header) policies.push(...header.split(","));
  } catch {}
  return policies.some((policy) => blocks(policy, origin));
}

// blocks tells whether policy's connect-src (or default-src) leaves out origin.
function blocks(policy, origin) {
  const directives = new Map(
    policy.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...sources]) => [name.toLowerCase(), sources]),
  );
  const sources = directives.get("connect-src") ?? directives.get("default-src");
  if (!sources) return false;
  const u = new URL(origin);
  const allows = (src) => {
    if (src === "*") return u.protocol === "http:" || u.protocol === "https:";
    if (src === "'self'") return origin === location.origin;
    if (/^[a-z][a-z0-9+.-]*:$/i.test(src)) return u.protocol === src.toLowerCase();
    const m = src.match(/^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*\.)?([^:/]+|\*)(?::(\d+|\*))?$/i);
    if (!m) return false;
    const [, scheme, sub, host, port] = m;
    if (scheme && u.protocol !== scheme.toLowerCase() + ":") return false;
    if (!scheme && u.protocol !== location.protocol && !(location.protocol === "http:" && u.protocol === "https:")) return false;
    const h = host.toLowerCase();
    if (h !== "*" && (sub ? !u.hostname.endsWith("." + h) : u.hostname !== h)) return false;
    const want = u.port || (u.protocol === "https:" ? "443" : "80");
    return port === "*" || (port ?? (u.protocol === "https:" ? "443" : "80")) === want;
  };
  return !sources.some(allows);
}

// notAPI says what an answer that is not the Floe API's means, without the
// page it came with (a proxy's HTML error page, say); null for another error.
function notAPI(e, origin) {
  const gateway = { 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" }[e?.status];
  if (gateway && /^http_/.test(e.code)) {
    return `The proxy at ${origin} answers ${e.status} (${gateway}) but the Floe server behind it does not: is floe-server running, and is the proxy pointed at it?`;
  }
  if (/^http_/.test(e?.code) || e?.code === "bad_response") {
    return `${origin} answers ${e.status} with a page that is not the Floe API's JSON: is this the Floe server's URL (with the path a proxy mounts it under)?`;
  }
  return null;
}

// explain turns a failed first request into what to check.
async function explain(e, origin, id) {
  switch (e?.code) {
    case "unauthorized":
      return `${origin} refused the token (401 unauthorized): check the token, or leave it empty for a server started without --token.`;
    case "session_not_found":
      return `${origin} has no session ${id}: check the session id (POST /api/sessions creates one).`;
    case "session_busy":
      return `${origin}: a task of another client is running on ${id}; send again when it ends (or stop it from that client).`;
  }
  // A request that did not reach the server: the client's FloeError
  // "network", with fetch's TypeError as its cause.
  const net = e?.code === "network" ? e.cause : e;
  if (net instanceof TypeError || e?.code === "network") {
    if (String(net?.message).includes("Content-Security-Policy") || (await blockedByPolicy(origin))) {
      return `This page's Content-Security-Policy blocks ${origin} (its connect-src): reach the server over https:, or over http://127.0.0.1 or http://localhost.`;
    }
    return `No answer from ${origin}: is floe-server running there, and does it allow this page's origin (--origin ${location.origin})?`;
  }
  return notAPI(e, origin) ?? `${origin}: ${(e && e.message) || e}`;
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const url = field("remote-url").value.trim();
  const id = field("remote-session").value.trim();
  const token = field("remote-token").value || undefined;
  let origin;
  try {
    origin = new URL(url).origin;
  } catch {
    status.textContent = `Server URL: ${JSON.stringify(url)} is not a URL (such as http://127.0.0.1:8787).`;
    return;
  }
  if (!globalThis.floePlayground) {
    status.textContent = "The playground has not started yet.";
    return;
  }
  let s;
  try {
    s = connect(url, id, { token });
  } catch (e) {
    status.textContent = e.message;
    return;
  }
  status.textContent = `Connecting to ${origin}…`;
  field("remote-attach").disabled = true;
  try {
    if (await blockedByPolicy(origin)) throw new TypeError("blocked by the page's Content-Security-Policy");
    await s.history(); // the server answers, takes the token, has the session
  } catch (e) {
    s.close();
    status.textContent = await explain(e, origin, id);
    return;
  } finally {
    field("remote-attach").disabled = false;
  }
  try {
    localStorage.setItem(REMEMBER, JSON.stringify({ url, session: id }));
  } catch {}
  current?.close();
  current = s;
  const report = (e) => {
    if (current === s) status.textContent = "Remote session: " + (notAPI(e, origin) ?? ((e && e.message) || e));
  };
  status.textContent = `Attached to ${id} on ${origin}.`;
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
      // input is "" for a prompt of text only, else the JSON of its
      // messages (its text, then its images). end(error, started): error
      // is null or what to check; started tells whether the server took
      // the prompt (a message of the run came).
      run(text, input, approve, end) {
        (async () => {
          let started = false;
          try {
            const opts = { approve: (call) => new Promise((resolve) => approve(JSON.stringify(call), resolve)) };
            for await (const m of s.run(input ? JSON.parse(input) : text, opts)) started = true; // shown through follow()
            end(null, true);
          } catch (e) {
            end(await explain(e, origin, id), started);
          }
        })();
      },
      steer(text, images) {
        s.steer(text, images.length > 0 ? images : undefined).catch(report);
      },
      abort() {
        s.abort().catch(report);
      },
      retryNow() {
        s.retryNow().catch(report);
      },
      close() {
        s.close();
        if (current === s) {
          current = null;
          status.textContent = `Detached from ${id}.`;
        }
      },
    },
    id,
    "remote · " + new URL(url).host,
  );
});
