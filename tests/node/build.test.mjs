// The build settings the README's "Sizes" section promises, read from the
// Go build information inside the built modules (the "build\tKEY=VALUE"
// lines the toolchain embeds): the runtime's small-function inlining (the
// newinliner experiment) and the collector before Green Tea (nogreenteagc)
// are on whenever the toolchain has the experiment, paths are trimmed, and
// only the Node build has a profile to guide it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const STATIC = fileURLToPath(new URL("../../static", import.meta.url));

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

// The Node build is compiled with the profile wasm/floe-node/default.pgo
// (profile-guided inlining); the browser build, held to its size budget,
// with none.
test("floe-node.wasm is built with wasm/floe-node/default.pgo, floe.wasm without a profile", () => {
  assert.equal(buildSettings(`${STATIC}/floe-node.wasm`).get("-pgo"), "default.pgo");
  assert.equal(buildSettings(`${STATIC}/floe.wasm`).get("-pgo"), undefined);
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
