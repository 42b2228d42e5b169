// Starts the playground: playground.wasm (Go) renders the page. Kept out of
// index.html so the page runs under a Content-Security-Policy without
// inline scripts. Registers the service worker that makes the page load
// with no network after the first visit.
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
