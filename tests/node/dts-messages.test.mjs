// The messages the runtime yields, against the OmniMessage of floe.d.ts:
// every conformance scenario (the shared ones and this repository's) runs
// through floe.mjs as tests/conform-wasm.mjs runs it, and each message the
// consumer received and each Trace record is checked against the type, read
// with the TypeScript compiler: every key declared (required keys present),
// no key the type lacks, each literal (type, role, stop_reason, status,
// reason, decision…) one of its union. And the other way round: each
// payload type of the union is one PROTOCOL.md lists, with its keys.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runScenario } from "../conform-wasm.mjs";
import { floe } from "./helpers.mjs";
import { ts, types } from "./dts.mjs";

const { checker, aliases } = types(`import type * as F from "./floe.js";\nexport type M = F.OmniMessage;\n`);
const OMNI = aliases.get("M");

// problems(v, t) lists where v is not of type t ("" when it is).
function problems(v, t, at = "") {
  const f = t.flags;
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return [];
  if (t.isUnion()) {
    let best = null;
    for (const u of t.types) {
      const p = problems(v, u, at);
      if (p.length === 0) return [];
      if (!best || p.length < best.length) best = p;
    }
    // A union of literals: name them all.
    if (t.types.every((u) => u.isLiteral() || u.flags & ts.TypeFlags.BooleanLiteral)) {
      return [`${at}: ${JSON.stringify(v)} is none of ${checker.typeToString(t)}`];
    }
    return best;
  }
  if (t.isStringLiteral() || t.isNumberLiteral()) return v === t.value ? [] : [`${at}: want ${JSON.stringify(t.value)}, got ${JSON.stringify(v)}`];
  if (f & ts.TypeFlags.BooleanLiteral) return v === (checker.typeToString(t) === "true") ? [] : [`${at}: want ${checker.typeToString(t)}`];
  if (f & ts.TypeFlags.String) return typeof v === "string" ? [] : [`${at}: want a string, got ${JSON.stringify(v)}`];
  if (f & ts.TypeFlags.Number) return typeof v === "number" ? [] : [`${at}: want a number, got ${JSON.stringify(v)}`];
  if (f & ts.TypeFlags.Boolean) return typeof v === "boolean" ? [] : [`${at}: want a boolean`];
  if (f & ts.TypeFlags.Null) return v === null ? [] : [`${at}: want null`];
  if (f & ts.TypeFlags.Undefined) return v === undefined ? [] : [`${at}: want no value, got ${JSON.stringify(v)}`];
  if (checker.isArrayType(t)) {
    if (!Array.isArray(v)) return [`${at}: want an array, got ${JSON.stringify(v)}`];
    const el = checker.getTypeArguments(t)[0];
    return v.flatMap((x, i) => problems(x, el, `${at}[${i}]`));
  }
  if (f & ts.TypeFlags.Object || t.isIntersection()) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return [`${at}: want an object, got ${JSON.stringify(v)}`];
    const out = [];
    const props = checker.getPropertiesOfType(t);
    for (const p of props) {
      const has = Object.hasOwn(v, p.name);
      if (!has) {
        if (!(p.flags & ts.SymbolFlags.Optional)) out.push(`${at}.${p.name}: missing`);
        continue;
      }
      out.push(...problems(v[p.name], checker.getTypeOfSymbol(p), `${at}.${p.name}`));
    }
    const index = checker.getIndexInfoOfType(t, ts.IndexKind.String);
    // TokenCounts: other keys a model's token_usage carried follow the four (PROTOCOL.md P-5).
    const open = index || t.getSymbol()?.name === "TokenCounts";
    for (const k of Object.keys(v)) {
      if (props.some((p) => p.name === k)) continue;
      if (!open) out.push(`${at}.${k}: a key the type does not declare`);
      else if (index) out.push(...problems(v[k], index.type, `${at}.${k}`));
    }
    return out;
  }
  return [`${at}: cannot check type ${checker.typeToString(t)}`];
}

test("the validator read from floe.d.ts refuses what the type refuses", () => {
  const ok = { type: "event_msg", payload: { type: "request_end", status: "failed", attempt: 1 } };
  assert.deepEqual(problems(ok, OMNI), []);
  assert.deepEqual(problems({ type: "event_msg", payload: { type: "request_end", status: "broken" } }, OMNI), [
    '.payload.status: "broken" is none of StopReason',
  ]);
  assert.notDeepEqual(problems({ type: "event_msg", payload: { type: "request_begin", extra: 1 } }, OMNI), []);
  assert.notDeepEqual(problems({ type: "model_msg", payload: { type: "text", role: "assistant" } }, OMNI), []);
});

const SHARED = process.env.FLOE_SHARED ?? fileURLToPath(new URL("../../../shared", import.meta.url));
const DIRS = [join(SHARED, "conformance"), fileURLToPath(new URL("../../testdata/conformance", import.meta.url))];

for (const dir of DIRS) {
  test(`every message of the scenarios in ${dir.split("/").slice(-2).join("/")} is an OmniMessage of floe.d.ts`, async () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    assert.ok(files.length > 0, `no scenarios in ${dir}`);
    const bad = [];
    let checked = 0;
    const types = new Set();
    for (const f of files) {
      const text = readFileSync(join(dir, f), "utf8");
      const sc = JSON.parse(text);
      let seen;
      const ps = await runScenario(floe, sc, (s) => (seen = s));
      assert.deepEqual(ps, [], `${f}: the scenario fails`);
      const all = [...seen.received.map((m, i) => [`stream[${i}]`, m])];
      for (const [id, st] of seen.traces) st.files.forEach((file, j) => file.forEach((r, i) => all.push([`trace ${id} file ${j + 1}[${i}]`, r])));
      for (const [where, m] of all) {
        checked++;
        types.add(m.type === "session_meta" ? "session_meta" : m.payload?.type);
        for (const p of problems(m, OMNI)) {
          // A key the scenario's own messages carry rides along verbatim
          // (F33): an object type does not refuse more keys.
          const extra = p.match(/\.([\w]+): a key the type does not declare$/);
          if (extra && text.includes(`"${extra[1]}"`)) continue;
          bad.push(`${f} ${where}${p}: ${JSON.stringify(m)}`);
        }
      }
    }
    assert.ok(checked > 100, `only ${checked} messages checked`);
    for (const t of ["session_meta", "text", "tool_call", "tool_call_output", "partial_text", "request_end", "approval_decision", "token_usage", "abort"]) {
      assert.ok(types.has(t), `no ${t} among the messages checked`);
    }
    assert.deepEqual(bad, []);
  });
}

// PROTOCOL.md §2–§5: the keys of each payload type, `?` for the optional ones.
test("each payload of the OmniMessage union has PROTOCOL.md's keys, optional where it says", () => {
  const spec = readFileSync(join(SHARED, "spec", "PROTOCOL.md"), "utf8");
  const want = new Map();
  for (const line of spec.split("\n")) {
    const m = line.match(/^\| `([a-z_]+)` \| (`type`(?:[^|\\]|\\.)*)\|/); // (\| inside a cell is not its end)
    if (!m) continue;
    want.set(m[1], new Map([...m[2].matchAll(/`([a-z_]+)`(\??)/g)].map(([, k, q]) => [k, q === "?"])));
  }
  // (`null` is a value: abort's reason is "string or `null`".)
  for (const keys of want.values()) keys.delete("null");
  assert.ok(want.size >= 23, `read ${want.size} payload types from PROTOCOL.md`);
  const got = new Map();
  for (const env of OMNI.types) {
    const payload = checker.getTypeOfSymbol(env.getProperty("payload"));
    if (!env.getProperty("type") || checker.typeToString(checker.getTypeOfSymbol(env.getProperty("type"))) === '"session_meta"') continue;
    const tp = checker.getTypeOfSymbol(payload.getProperty("type"));
    got.set(tp.value, new Map(checker.getPropertiesOfType(payload).map((p) => [p.name, !!(p.flags & ts.SymbolFlags.Optional)])));
  }
  const show = (m) => [...m].map(([k, q]) => k + (q ? "?" : "")).sort().join(", ");
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), "the payload types");
  for (const [t, keys] of want) assert.equal(show(got.get(t)), show(keys), `${t}: its keys`);
});
