// The build settings the README's "Sizes" section promises, read from the
// Go build information inside the built modules (the "build\tKEY=VALUE"
// lines the toolchain embeds): the runtime's small-function inlining (the
// newinliner experiment) and the collector before Green Tea (nogreenteagc)
// are on whenever the toolchain has the experiment, paths are trimmed, and
// each build has its profile to guide it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

const STATIC = fileURLToPath(new URL("../../static", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// buildSettings returns the module's build settings as a Map.
function buildSettings(file) {
  const text = readFileSync(file).toString("latin1");
  const out = new Map();
  for (const m of text.matchAll(/build\t([A-Za-z_-]+)=([^\t\n]*)\n/g)) out.set(m[1], m[2]);
  return out;
}

// hasExperiment reports whether this toolchain knows the experiment (what
// scripts/build.sh asks before it turns it on).
function hasExperiment(exp) {
  try {
    execFileSync("go", ["env", "GOEXPERIMENT"], { env: { ...process.env, GOEXPERIMENT: exp }, stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

for (const name of ["floe.wasm", "floe-node.wasm"]) {
  for (const exp of ["newinliner", "nogreenteagc"]) {
    test(`${name} is built with the ${exp} experiment and trimmed paths`, (t) => {
      const s = buildSettings(`${STATIC}/${name}`);
      assert.equal(s.get("GOOS"), "js", `${name}: no Go build information found`);
      assert.equal(s.get("-trimpath"), "true");
      if (!hasExperiment(exp)) {
        t.skip(`this Go has no ${exp} experiment: the build goes on without it`);
        return;
      }
      assert.match(s.get("GOEXPERIMENT") ?? "", new RegExp(`(^|,)${exp}(,|$)`), `${name}: GOEXPERIMENT=${s.get("GOEXPERIMENT")}`);
    });
  }
}

// Both builds are compiled with their main package's profile (go build's
// -pgo=auto reads wasm/floe-node/default.pgo and wasm/floe/default.pgo).
test("floe-node.wasm and floe.wasm are built with their package's default.pgo", () => {
  assert.equal(buildSettings(`${STATIC}/floe-node.wasm`).get("-pgo"), "default.pgo");
  assert.equal(buildSettings(`${STATIC}/floe.wasm`).get("-pgo"), "default.pgo");
});

// sampledFunctions returns the names of the functions a pprof profile's
// samples go through (profile.proto: sample 2 → location_id 1; location 4
// → id 1, line 4 → function_id 1; function 5 → id 1, name 2;
// string_table 6).
function sampledFunctions(file) {
  // fields calls f(number, value) for each field of a message: a number
  // for a varint, a Buffer for a length-delimited field.
  const fields = (buf, f) => {
    const r = { p: 0 };
    while (r.p < buf.length) {
      const key = varint(buf, r);
      const wire = key % 8;
      if (wire === 0) f(Math.floor(key / 8), varint(buf, r));
      else if (wire === 2) {
        const n = varint(buf, r);
        f(Math.floor(key / 8), buf.subarray(r.p, r.p + n));
        r.p += n;
      } else if (wire === 1) r.p += 8;
      else if (wire === 5) r.p += 4;
      else throw new Error(`${file}: wire type ${wire}`);
    }
  };
  // ids reads a repeated uint64: one varint, or a packed run of them.
  const ids = (v) => {
    if (typeof v === "number") return [v];
    const out = [];
    for (const r = { p: 0 }; r.p < v.length; ) out.push(varint(v, r));
    return out;
  };
  const strings = [];
  const samples = [];
  const locations = new Map();
  const functions = new Map();
  fields(gunzipSync(readFileSync(file)), (n, v) => {
    if (n === 6) strings.push(v.toString());
    else if (n === 2) fields(v, (k, x) => k === 1 && samples.push(...ids(x)));
    else if (n === 4) {
      let id = 0;
      const fns = [];
      fields(v, (k, x) => {
        if (k === 1) id = x;
        if (k === 4) fields(x, (j, y) => j === 1 && fns.push(y));
      });
      locations.set(id, fns);
    } else if (n === 5) {
      let id = 0;
      let name = 0;
      fields(v, (k, x) => {
        if (k === 1) id = x;
        if (k === 2) name = x;
      });
      functions.set(id, name);
    }
  });
  const names = new Set();
  for (const loc of samples) for (const fn of locations.get(loc) ?? []) names.add(strings[functions.get(fn)]);
  return names;
}

// varint reads a protobuf varint of buf at r.p and advances r.p.
function varint(buf, r) {
  let v = 0;
  for (let shift = 0; ; shift += 7) {
    const c = buf[r.p++];
    if (c === undefined) throw new Error("profile: a varint runs past the end");
    v += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) return v;
  }
}

// The browser build's profile shows Floe's own functions only (scripts/pgo.sh
// derives it from the Node build's): the compiler inlines hot calls between
// them, and none into the runtime or the standard library, which the whole
// profile made 42 kB larger.
test("wasm/floe/default.pgo samples Floe's own functions only; the Node build's the runtime too", () => {
  const floe = sampledFunctions(`${ROOT}/wasm/floe/default.pgo`);
  const node = sampledFunctions(`${ROOT}/wasm/floe-node/default.pgo`);
  assert.ok(floe.has("github.com/floehq/floe/engine.(*driver).emit"), "the profile misses emit: stale, or not the engine's benchmarks");
  assert.deepEqual([...floe].filter((f) => !f.startsWith("github.com/floehq/floe/")), []);
  assert.ok([...node].some((f) => f.startsWith("runtime.")), "the Node build's profile has no runtime function");
  assert.ok([...node].filter((f) => f.startsWith("github.com/floehq/floe/")).every((f) => floe.has(f)), "a Floe function of the Node build's profile is missing");
});

// floe.wasm is built with internal/stdoverlay/godebug for the standard
// library's internal/godebug (scripts/build.sh): without that package's
// registrations the runtime's metrics table is not linked, nor the
// metrics' names, which floe-node.wasm (built with the standard package)
// still holds.
test("floe.wasm is built with the stand-in for internal/godebug, floe-node.wasm with the standard package", () => {
  const metric = Buffer.from("/gc/heap/allocs:bytes");
  assert.equal(readFileSync(`${STATIC}/floe.wasm`).includes(metric), false, "floe.wasm holds the runtime's metrics table");
  assert.equal(readFileSync(`${STATIC}/floe-node.wasm`).includes(metric), true, "floe-node.wasm: the marker is gone from the standard build too");
});
