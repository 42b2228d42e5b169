// The package's surface agrees with itself: the named exports and the
// default export of floe.mjs and floe-node.mjs, the loaded floe object, and
// what floe.d.ts declares for each. The model factories need no floe.wasm,
// so they are named exports too, and the same functions everywhere.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as browserNS from "../../static/floe.mjs";
import * as nodeNS from "../../static/floe-node.mjs";
import { floe } from "./helpers.mjs";

const dts = readFileSync(new URL("../../static/floe.d.ts", import.meta.url), "utf8");

// The top-level members of a `{ … }` block of floe.d.ts starting at index i.
function members(i) {
  const body = dts.slice(dts.indexOf("{", i) + 1);
  const names = new Set();
  let depth = 0;
  let line = "";
  for (const ch of body) {
    if (ch === "{" || ch === "(" || ch === "<") depth++;
    else if (ch === ")" || ch === ">") depth--;
    else if (ch === "}") {
      if (depth === 0) break;
      depth--;
    } else if (ch === "\n") {
      line = "";
      continue;
    }
    line += ch;
    if (depth === (ch === "(" || ch === "<" ? 1 : 0)) {
      const m = line.match(/^\s+(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[:(<]$/);
      if (m) names.add(m[1]);
    }
  }
  return names;
}

const sorted = (xs) => [...new Set(xs)].sort();
const declaredValues = sorted([...dts.matchAll(/^export (?:declare )?(?:function|const) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]));
const declaredDefault = sorted(members(dts.indexOf("declare const floe:")));
const declaredFloe = sorted([...dts.matchAll(/^export interface Floe \{/gm)].flatMap((m) => [...members(m.index)]));
const FACTORIES = ["anthropic", "openai", "openaiCompatible", "openaiResponses"];

test("floe.d.ts declares what floe.mjs and floe-node.mjs export, by name and as the default", () => {
  for (const [name, ns] of [["floe.mjs", browserNS], ["floe-node.mjs", nodeNS]]) {
    const named = sorted(Object.keys(ns).filter((k) => k !== "default"));
    assert.deepEqual(named, declaredValues, `${name}: named exports`);
    assert.deepEqual(sorted(Object.keys(ns.default)), declaredDefault, `${name}: default export`);
    for (const k of Object.keys(ns.default)) assert.equal(ns.default[k], ns[k], `${name}: default.${k} is the named ${k}`);
  }
  assert.notEqual(nodeNS.load, browserNS.load, "the Node entry has its own load()");
  for (const k of FACTORIES) assert.ok(declaredValues.includes(k), `${k} is a named export`);
});

test("the loaded floe has every member of the Floe interface, and shares the module's functions", () => {
  assert.deepEqual(sorted(Object.keys(floe)), declaredFloe);
  for (const k of [...FACTORIES, "tool", "msg", "isMessage", "transcript", "newSessionId", "isFloeError", "httpOutcome", "readLines", "readEvents"]) {
    assert.equal(floe[k], browserNS[k], k);
    assert.equal(floe[k], nodeNS.default[k], k);
  }
  assert.ok(declaredDefault.every((k) => k === "load" || declaredFloe.includes(k)), "the default export is a part of the loaded floe (and load)");
});

test("a model made by the named export serves createSession like floe.openai's", () => {
  const m = browserNS.openaiCompatible({ baseURL: "http://127.0.0.1:11434/v1/", model: "llama3.2" });
  assert.deepEqual({ ...m }, { provider: "openai-chat", model: "llama3.2", baseURL: "http://127.0.0.1:11434/v1" });
  const s = floe.createSession({ llm: m, newLLM: nodeNS.openai({ apiKey: "k", model: "gpt" }), store: false });
  assert.match(s.id, /^session-/);
  assert.throws(() => nodeNS.anthropic({ model: "m" }), (e) => e.code === "bad_argument" && /^anthropic: options\.apiKey/.test(e.message));
  assert.match(browserNS.newSessionId(0), /^session-1970-01-01-00-00-00-[0-9a-f]{8}$/);
});
