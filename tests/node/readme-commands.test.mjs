// What README.md and docs/*.md name mechanically is there: each path of a
// tracked folder (scripts/…, cmd/…, engine/…) is a file or folder of the
// repository, each `./build.sh VERB` a verb build.sh knows, each FLOE_* and
// BENCH_* variable one the code reads, each floe-server flag one of its
// flag set, and each @floehq/… import a package and export of ours. Needs
// git and go (for the standard library's paths), nothing built.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (f) => readFileSync(root + f, "utf8");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
const trackedSet = new Set(tracked);
const docs = tracked.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f));
const isDoc = (f) => docs.includes(f);
const goroot = execFileSync("go", ["env", "GOROOT"], { cwd: root, encoding: "utf8" }).trim();
// The files of the playground's demo workspace (internal/store/store.go…),
// which a demo script of the docs names: the workspace's, not the
// repository's.
const workspace = new Set([...read("playground/demofiles.go").matchAll(/^\t"([^"]+)": `/gm)].map((m) => m[1]));

/** The paths under the repository's tracked top-level folders that text names. */
export function pathsIn(text, tops) {
  const re = new RegExp(`(?<![\\w./:@$<-])(?:\\./)?((?:${tops.map((t) => t.replace(/\./g, "\\.")).join("|")})/[\\w./-]*[\\w/])`, "g");
  return [...new Set([...text.matchAll(re)].map((m) => m[1]))];
}

/** What is wrong with a named path, or "". */
export function checkPath(p, files = tracked, stdlib = (q) => existsSync(`${goroot}/src/${q}`)) {
  const q = p.replace(/\/$/, "");
  if (q.includes("..")) return `${p}: not a path of the repository`;
  if (files.includes(q) || files.some((f) => f.startsWith(q + "/"))) return "";
  if (stdlib(q)) return ""; // internal/godebug, internal/strconv: the standard library's
  if (files === tracked && workspace.has(q)) return ""; // the playground's demo workspace
  if (q === "testdata/fuzz" && files.some((f) => f.includes("/testdata/fuzz/"))) return ""; // each package's
  return `${p}: no such file or folder in the repository`;
}

/** The verbs a case statement of a shell script accepts. */
export function verbs(script) {
  const body = script.slice(script.indexOf("case "));
  return new Set([...body.matchAll(/^\s+([a-z|-]+)\)/gm)].flatMap((m) => m[1].split("|")));
}

test("a path the docs name that is not in the repository is caught", () => {
  const files = ["scripts/build.sh", "engine/omni/codec.go", "provider/openai/x/testdata/fuzz/FuzzDecoder/a"];
  const tops = ["scripts", "engine", "provider"];
  assert.deepEqual(pathsIn("Run `scripts/build.sh` (see engine/omni/, https://x.org/engine/y and $HOME/scripts/z).", tops), ["scripts/build.sh", "engine/omni/"]);
  const none = () => false;
  assert.equal(checkPath("scripts/build.sh", files, none), "");
  assert.equal(checkPath("engine/omni/", files, none), "");
  assert.equal(checkPath("testdata/fuzz", files, none), "");
  assert.match(checkPath("scripts/bulid.sh", files, none), /scripts\/bulid\.sh: no such file/);
  assert.match(checkPath("engine/trace", files, none), /no such file/);
  assert.equal(checkPath("internal/godebug", files, (q) => q === "internal/godebug"), "");
  assert.equal(checkPath("internal/store/store.go"), ""); // the playground's demo workspace
  assert.match(checkPath("internal/store/stor.go"), /no such file/);
  assert.deepEqual([...verbs('case "$1" in\n  build) x ;;\n  a|b) y ;;\n  *) z ;;\nesac\n')], ["build", "a", "b"]);
});

test("every path of a tracked folder that README.md and docs/*.md name exists", () => {
  const tops = [...new Set(tracked.filter((f) => f.includes("/")).map((f) => f.split("/")[0]))];
  const problems = [];
  let n = 0;
  for (const doc of docs) {
    for (const p of pathsIn(read(doc), tops)) {
      n++;
      const problem = checkPath(p);
      if (problem) problems.push(`${doc}: ${problem}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(n >= 50, `only ${n} paths found: is the pattern still right?`);
});

test("every ./build.sh verb of the docs is one build.sh runs, and ./build.sh worker's too", () => {
  const known = verbs(read("build.sh"));
  const worker = verbs(read("scripts/worker.sh"));
  assert.ok(known.has("serve") && known.has("test"), "build.sh's case statement was not read");
  const problems = [];
  for (const doc of docs) {
    for (const [, verb, arg] of read(doc).matchAll(/\.\/build\.sh(?: +([a-z][a-z-]*))?(?: +([a-z][a-z-]*))?/g)) {
      if (verb === undefined) continue;
      if (!known.has(verb)) problems.push(`${doc}: ./build.sh ${verb}: build.sh knows ${[...known].join(", ")}`);
      else if (verb === "worker" && arg !== undefined && !worker.has(arg)) problems.push(`${doc}: ./build.sh worker ${arg}: worker.sh knows ${[...worker].join(", ")}`);
    }
  }
  assert.deepEqual(problems, []);
  // The first lines give the two commands a newcomer runs.
  const head = read("README.md").split("\n").slice(0, 8).join("\n");
  assert.match(head, /^\.\/build\.sh serve\b/m);
  assert.match(head, /^\.\/build\.sh test\b/m);
});

test("every FLOE_* and BENCH_* variable the docs name is read by the code", () => {
  const code = tracked.filter((f) => !isDoc(f) && !f.endsWith(".md") && /\.(go|mjs|js|sh|toml|ts)$/.test(f)).map(read).join("\n");
  // floe-server reads FLOE_<FLAG> for each of its flags (FLOE_HOST for --host).
  const serverVars = new Set([...read("cmd/floe-server/main.go").matchAll(/fs\.\w+\("([a-z-]+)"/g)].map((m) => "FLOE_" + m[1].toUpperCase().replaceAll("-", "_")));
  assert.ok(serverVars.has("FLOE_PORT"), "floe-server's flag set was not read");
  const problems = [];
  for (const doc of docs) {
    for (const v of new Set(read(doc).match(/\b(?:FLOE|BENCH)_[A-Z0-9_]+\b/g) ?? [])) {
      if (!serverVars.has(v) && !new RegExp(`\\b${v}\\b`).test(code)) problems.push(`${doc}: ${v}: no code reads it`);
    }
  }
  assert.deepEqual(problems, []);
});

test("every floe-server flag the README names is in its flag set", () => {
  const flags = new Set([...read("cmd/floe-server/main.go").matchAll(/fs\.\w+\("([a-z-]+)"/g)].map((m) => m[1]));
  assert.ok(flags.has("port") && flags.has("origin"), "floe-server's flag set was not read");
  const readme = read("README.md");
  const from = readme.indexOf("\n## Sessions over the network");
  const section = readme.slice(from, readme.indexOf("\n### On Cloudflare", from));
  const lines = readme.split("\n").filter((l) => /\.\/build\.sh server\b|floe-server --/.test(l));
  const problems = [];
  for (const [, f] of (section + "\n" + lines.join("\n")).matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) {
    if (!flags.has(f) && f !== "help") problems.push(`--${f}: not a flag of cmd/floe-server (${[...flags].join(", ")})`);
  }
  assert.deepEqual([...new Set(problems)], []);
});

test("every @floehq/ import the docs name is one of our packages and its exports", () => {
  const pkgs = new Map([JSON.parse(read("static/package.json")), JSON.parse(read("npm/floe-node/package.json"))].map((p) => [p.name, p]));
  const problems = [];
  for (const doc of docs) {
    for (const [spec] of read(doc).matchAll(/@floehq\/[a-z0-9-]+(?:\/[\w.-]+)*/g)) {
      const pkg = pkgs.get(spec.split("/").slice(0, 2).join("/"));
      if (!pkg) {
        problems.push(`${doc}: ${spec}: not a package of this repository (${[...pkgs.keys()].join(", ")})`);
        continue;
      }
      const subpath = spec.split("/").slice(2).join("/");
      if (subpath && !(pkg.exports && `./${subpath}` in pkg.exports)) problems.push(`${doc}: ${spec}: ${pkg.name} exports no ./${subpath}`);
    }
  }
  assert.deepEqual(problems, []);
});
