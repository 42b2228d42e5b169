// load(): the wasm magic check, in fresh processes (a process loads once).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const exec = promisify(execFile);
const entry = new URL("../../static/floe-node.mjs", import.meta.url).href;

// loadWith runs load(<wasm expression>) in a fresh Node and returns the error's code and message.
async function loadWith(expr) {
  const src = `import { load } from ${JSON.stringify(entry)};
try { await load({ wasm: ${expr} }); console.log(JSON.stringify({ ok: true })); process.exit(0); }
catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); process.exit(0); }`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src]);
  return JSON.parse(stdout);
}

test("load() names an HTML page given for floe.wasm, with its likely causes and the fix", async () => {
  for (const expr of [
    `new TextEncoder().encode("<!doctype html><html><head><title>App</title>")`,
    `new Response("<!DOCTYPE html><html></html>", { headers: { "content-type": "text/html" } })`,
  ]) {
    const e = await loadWith(expr);
    assert.equal(e.name, "FloeError");
    assert.equal(e.code, "bad_wasm");
    assert.match(e.message, /is an HTML page, not floe\.wasm/);
    assert.match(e.message, /dev server answering a missing file with its index\.html fallback, or a wrong path/);
    assert.match(e.message, /load\(\{ wasm: url \}\)/);
  }
});

test("load()'s first call reads its wasm option once, a getter that throws bad_argument naming it", async () => {
  const src = `import { load } from ${JSON.stringify(entry)};
let reads = 0;
const hostile = { get wasm() { throw new Error("hostile read"); } };
const counted = { get wasm() { reads++; return undefined; } };
let e1;
try { await load(hostile); } catch (e) { e1 = { name: e.name, code: e.code, message: e.message }; }
await load(counted);
console.log(JSON.stringify({ e1, reads }));`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src]);
  const out = JSON.parse(stdout);
  assert.deepEqual(out.e1, { name: "FloeError", code: "bad_argument", message: "load: opts.wasm: reading it threw: hostile read" });
  assert.equal(out.reads, 1);
});

test("load() refuses bytes without the wasm magic, and a missing file, naming them", async () => {
  const e = await loadWith(`new Uint8Array([1, 2, 3, 4, 5])`);
  assert.equal(e.code, "bad_wasm");
  assert.match(e.message, /is not a WebAssembly module \(5 bytes starting .*want the magic bytes/);
  // Its head is quoted on whole characters: neither half an emoji at the
  // 40th unit (quoted as "\ud83d") nor U+FFFD for one the 64th byte cuts.
  for (const [text, want] of [["x".repeat(39) + "😀 more", "x".repeat(39)], ["x" + "😀".repeat(20), "x" + "😀".repeat(15)]]) {
    const h = await loadWith(`new TextEncoder().encode(${JSON.stringify(text)})`);
    assert.ok(h.message.includes(`starting ${JSON.stringify(want)}, want the magic`), h.message);
  }
  const m = await loadWith(`"./no-such.wasm"`);
  assert.equal(m.code, "bad_wasm");
  assert.match(m.message, /cannot read floe\.wasm: tried .*no-such\.wasm \(ENOENT\)/);
});

test("load() names floe.wasm's place when its body fails after the headers came", async () => {
  // Firefox answers a file an extension lacks with 200 and a body that
  // aborts: load() said only "AbortError: The operation was aborted.".
  const aborting = (type) =>
    `new Response(new ReadableStream({ pull(c) { c.error(new DOMException("The operation was aborted. ", "AbortError")); } }), { headers: { "content-type": ${JSON.stringify(type)} } })`;
  for (const type of ["application/wasm", "application/octet-stream"]) {
    const e = await loadWith(aborting(type));
    assert.equal(e.name, "FloeError", `${type}: ${e.message}`);
    assert.equal(e.code, "bad_wasm");
    assert.equal(
      e.message,
      "load: reading opts.wasm: its body failed: The operation was aborted.; is floe.wasm there? Put it next to floe.mjs (with the other files of the package), or pass load({ wasm }) its URL",
    );
  }
  // The module's own errors are not the file's place: they pass as they are.
  const bad = await loadWith(`new Response(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1]), { headers: { "content-type": "application/wasm" } })`);
  assert.equal(bad.name, "CompileError", bad.message);
});

test("the public object carries no _debug hooks", async () => {
  const { floe } = await import("./helpers.mjs");
  assert.deepEqual(Object.keys(floe).filter((k) => k.startsWith("_")), []);
  assert.equal(typeof floe[Symbol.for("floe.debug")].panic, "function");
});

// After a load, a later call gets the same Floe without reading a file
// again, whatever wasm it names; an argument of the wrong kind is still
// refused, and a fetch that fails (no server) is bad_wasm, as a missing file is.
test("load() once loaded: the same Floe; a wrong argument still refused; a failed fetch is bad_wasm", async () => {
  const src = `import { load } from ${JSON.stringify(entry)};
const out = {};
const code = async (p) => { try { await p; return "ok"; } catch (e) { return e.code + ": " + e.message; } };
const a = await load();
out.same = (await load()) === a && (await load({ wasm: "./no-such.wasm" })) === a;
out.five = await code(load({ wasm: 5 }));
out.str = await code(load("x"));
out.key = await code(load({ wams: "x" }));
console.log(JSON.stringify(out));`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src]);
  const out = JSON.parse(stdout);
  assert.equal(out.same, true);
  assert.match(out.five, /^bad_argument: load: opts.wasm: want a URL, a string/);
  assert.match(out.str, /^bad_argument: load: opts: want an object, got a string/);
  assert.match(out.key, /^bad_argument: load: opts.wams: unknown option \(did you mean wasm\?\)/);
  const e = await loadWith(`"http://127.0.0.1:9/floe.wasm"`);
  assert.equal(e.code, "bad_wasm");
  assert.match(e.message, /load: fetching http:\/\/127\.0\.0\.1:9\/floe\.wasm: /);
});

test("load() called again while the first still loads: the same Floe whatever wasm it names, as once loaded; its argument's kind still checked", async () => {
  // Two modules of one program each call load(), one naming a file: the
  // second read its own file while the first loaded, and rejected when
  // that file was missing, where a call made a moment later resolved.
  const src = `import { load } from ${JSON.stringify(entry)};
const code = async (p) => { try { await p; return "ok"; } catch (e) { return e.code + ": " + e.message; } };
const first = load();
const second = load({ wasm: "./no-such.wasm" }).catch((e) => e.code + ": " + e.message);
const bad = code(load({ wasm: 5 }));
const a = await first;
const b = await second;
console.log(JSON.stringify({ second: b === a ? "the same Floe" : typeof b === "string" ? b : "another Floe", bad: await bad }));`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src]);
  const out = JSON.parse(stdout);
  assert.equal(out.second, "the same Floe");
  assert.match(out.bad, /^bad_argument: load: opts.wasm: want a URL, a string/);
});

// While it loads, load() keeps Node's event loop alive (a timer), so that
// the compiled module arrives as an event of the loop, not inside Node's
// drain of V8's worker tasks, where the caller's first run would then wait
// for every optimizing compile it started (README "Where Floe stands").
// Once loaded, or failed, nothing of it is left holding the loop: the
// child exits on its own.
test("load() holds the event loop open while it loads, and lets it go once loaded or failed", async () => {
  const src = `import { load } from ${JSON.stringify(entry)};
import { readFileSync } from "node:fs";
const timers = () => process.getActiveResourcesInfo().filter((t) => t === "Timeout").length;
const out = { before: timers() };
const bad = load({ wasm: new Uint8Array([1, 2, 3, 4]) });
out.duringBad = timers();
out.bad = await bad.then(() => "ok", (e) => e.code);
out.afterBad = timers();
const p = load({ wasm: readFileSync(new URL("./floe.wasm", ${JSON.stringify(entry)})) });
out.during = timers();
const floe = await p;
out.after = timers();
out.loaded = typeof floe.createSession;
console.log(JSON.stringify(out));`;
  // A timer left behind would keep the child alive: it is killed after a minute.
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src], { timeout: 60_000 });
  assert.deepEqual(JSON.parse(stdout), { before: 0, duringBad: 1, bad: "bad_wasm", afterBad: 0, during: 1, after: 0, loaded: "function" });
});

// floe.mjs itself (the browser entry) imported by its path, as a Deno or
// Bun script might import static/: it fetches, and a file: URL is refused
// naming the module that reads files.
test("floe.mjs imported by its path outside a browser: load() names floe-node.mjs, the entry that reads the wasm from disk", async () => {
  const src = `import { load } from ${JSON.stringify(new URL("../../static/floe.mjs", import.meta.url).href)};
try { await load(); console.log(JSON.stringify({ ok: true })); }
catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", src]);
  const e = JSON.parse(stdout);
  assert.equal(e.code, "bad_argument");
  assert.match(e.message, /^load: file:\/\/\/.*\/floe\.wasm is a file: URL, which floe\.mjs does not read \(it fetches\): import floe-node\.mjs beside it, or the package by name \(its "node" export condition, which Node, Deno and Bun follow\), or pass load\(\{ wasm \}\) the file's bytes$/);
});
