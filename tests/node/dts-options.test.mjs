// Every options object of the API, as floe.d.ts and test.d.ts declare it,
// against the runtime: the runtime refuses a key it does not know, naming
// the keys it knows, so the test reads that list and compares it with the
// keys the .d.ts declares (read with the TypeScript compiler). A key the
// runtime knows and the types lack, or the other way round, fails. Each
// declared key is then passed alone: never refused as unknown; when its
// type admits undefined, an undefined value is taken as the key's absence;
// and when the runtime takes undefined as absence, the type admits it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as F from "../../static/floe.mjs";
import { load as nodeLoad } from "../../static/floe-node.mjs";
import { connect } from "../../static/connect.mjs";
import { mockModel } from "../../static/test.mjs";
import { floe } from "./helpers.mjs";
import { types, keysOf } from "./dts.mjs";

const BOGUS = "zzzNotAnOption";
const dir = mkdtempSync(join(tmpdir(), "floe-dts-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const llm = () => mockModel(["ok"]);
// merge(base, o): base's keys with o's over them; a key o gives ABSENT is left out.
const ABSENT = Symbol("absent");
const merge = (base, o) => Object.fromEntries(Object.entries({ ...base, ...o }).filter(([, v]) => v !== ABSENT));
const drain = async (stream) => {
  for await (const _ of stream);
};
// A fetch that answers nothing: a remote session's requests wait until close().
const idleFetch = (url, init) =>
  new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal.reason), { once: true }));
const remote = () => connect("http://127.0.0.1:9", "s1", { fetch: idleFetch });

// The options objects: the .d.ts type (an expression over F, floe.d.ts, and
// T, test.d.ts) and a call that hands o to the runtime (through merge), awaiting whatever
// it starts. The runtime's error for an unknown key lists the known ones.
const CASES = [
  ["load", "NonNullable<Parameters<typeof F.load>[0]>", (o) => F.load(merge({}, o))],
  ["load (floe-node.mjs)", "NonNullable<Parameters<typeof F.load>[0]>", (o) => nodeLoad(merge({}, o))],
  ["createSession", "F.SessionOptions", (o) => floe.createSession(merge({ llm: llm(), store: false }, o)).close()],
  ["createSubagent", "Parameters<F.Floe['createSubagent']>[0]", (o) => floe.createSubagent(merge({ llm: llm(), store: false }, o)).close()],
  ["resumeSession", "Parameters<F.Floe['resumeSession']>[1]", async (o) => {
    const s = floe.createSession({ llm: llm(), store: "memory" });
    await drain(s.run("hi"));
    await s.close();
    await (await floe.resumeSession(s.id, merge({ llm: llm() }, o))).close();
  }],
  ["listSessions", "NonNullable<Parameters<F.Floe['listSessions']>[0]>", (o) => floe.listSessions(merge({}, o))],
  ["exportSession", "NonNullable<Parameters<F.Floe['exportSession']>[1]>", async (o) => {
    const s = floe.createSession({ llm: llm(), store: "memory" });
    await drain(s.run("hi"));
    await s.close();
    await floe.exportSession(s.id, merge({}, o));
  }],
  ["readSession", "NonNullable<Parameters<F.Floe['readSession']>[1]>", async (o) => {
    const s = floe.createSession({ llm: llm(), store: "memory" });
    await drain(s.run("hi"));
    await s.close();
    await floe.readSession(s.id, merge({}, o));
  }],
  ["importSession", "NonNullable<Parameters<F.Floe['importSession']>[1]>", async (o) => {
    const files = [];
    const s = floe.createSession({ llm: llm(), store: false, trace: { write: (r) => void files.push(JSON.stringify(r)) } });
    await drain(s.run("hi"));
    await s.close();
    await floe.importSession(files.join("\n") + "\n", merge({}, o));
  }],
  ["deleteSession", "NonNullable<Parameters<F.Floe['deleteSession']>[1]>", async (o) => {
    const s = floe.createSession({ llm: llm(), store: "memory" });
    await drain(s.run("hi"));
    await s.close();
    await floe.deleteSession(s.id, merge({}, o));
  }],
  ["store: { dir }", "Exclude<F.StoreOption, string>", (o) => floe.listSessions({ store: merge({ dir }, o) })],
  ["session.run", "NonNullable<Parameters<F.Session['run']>[1]>", async (o) => {
    const s = floe.createSession({ llm: llm(), store: false });
    try {
      await drain(s.run("hi", merge({}, o)));
    } finally {
      await s.close();
    }
  }],
  ["session.compact", "NonNullable<Parameters<F.Session['compact']>[0]>", async (o) => {
    const s = floe.createSession({ llm: llm(), store: false });
    try {
      await drain(s.compact(merge({}, o)));
    } finally {
      await s.close();
    }
  }],
  ["subagent.run", "NonNullable<Parameters<F.Subagent['run']>[1]>", async (o) => {
    const s = floe.createSubagent({ llm: llm(), store: false });
    try {
      await drain(s.run("hi", merge({}, o)));
    } finally {
      s.close();
    }
  }],
  ["config", "F.Config", (o) => floe.createSession({ llm: llm(), store: false, config: merge({}, o) }).close()],
  ["config.compaction", "NonNullable<F.Config['compaction']>", (o) =>
    floe.createSession({ llm: llm(), newLLM: llm, store: false, config: { compaction: merge({ mode: "discard" }, o) } }).close()],
  ["meta", "NonNullable<F.SessionOptions['meta']>", (o) => floe.createSession({ llm: llm(), store: false, meta: merge({}, o) }).close()],
  ["tool", "F.ToolSpec<unknown>", (o) => F.tool(merge({ name: "t", execute: () => "" }, o))],
  ["subagentTool", "Parameters<F.Floe['subagentTool']>[0]", (o) => floe.subagentTool(merge({ create: () => ({ llm: llm() }) }, o))],
  ["transcript", "Exclude<NonNullable<Parameters<typeof F.transcript>[0]>, Function>", (o) => F.transcript(merge({}, o))],
  ["msg.tokenUsage", "Parameters<typeof F.msg.tokenUsage>[0]", (o) => F.msg.tokenUsage(merge({}, o))],
  ["the model's outcome", "F.Outcome", async (o) => {
    const model = { async *streamGenerate() { return merge({ status: "completed" }, o); } };
    const s = floe.createSession({ llm: model, store: false, config: { maxReconnects: 0 } });
    try {
      for await (const m of s.run("hi")) {
        if (m.payload.type === "request_end" && m.payload.status !== "completed") throw new Error(m.payload.error_message);
      }
    } finally {
      await s.close();
    }
  }],
  ["openai", "Parameters<typeof F.openai>[0]", (o) => F.openai(merge({ model: "m", apiKey: "k" }, o))],
  ["openaiCompatible", "Parameters<typeof F.openaiCompatible>[0]", (o) => F.openaiCompatible(merge({ model: "m", baseURL: "http://127.0.0.1:9" }, o))],
  ["openaiResponses", "Parameters<typeof F.openaiResponses>[0]", (o) => F.openaiResponses(merge({ model: "m", apiKey: "k" }, o))],
  ["anthropic", "Parameters<typeof F.anthropic>[0]", (o) => F.anthropic(merge({ model: "m", apiKey: "k" }, o))],
  ["connect", "NonNullable<Parameters<typeof F.connect>[2]>", (o) => connect("http://127.0.0.1:9", "s1", merge({ fetch: idleFetch }, o)).close()],
  ["remote.run", "NonNullable<Parameters<F.RemoteSession['run']>[1]>", (o) => {
    const r = remote();
    try {
      r.run("hi", merge({}, o));
    } finally {
      r.close();
    }
  }],
  ["remote.messages", "NonNullable<Parameters<F.RemoteSession['messages']>[0]>", (o) => {
    const r = remote();
    try {
      r.messages(merge({}, o));
    } finally {
      r.close();
    }
  }],
  ["mockModel", "NonNullable<Parameters<typeof T.mockModel>[1]>", (o) => mockModel([], merge({}, o))],
  ["mockModel: { toolCall }", "Extract<T.ReplyPart, { toolCall: unknown }>['toolCall']", (o) => mockModel([{ toolCall: merge({ name: "t" }, o) }])],
];
// The parts of a mockModel reply, one options object per kind.
for (const kind of ["text", "thinking", "toolCall", "delay", "error", "throws"]) {
  const base = { text: { text: "a" }, thinking: { thinking: "a" }, toolCall: { toolCall: { name: "t" } }, delay: { delay: 1 }, error: { error: "e" }, throws: { throws: "e" } }[kind];
  CASES.push([`mockModel: { ${kind} }`, `Extract<T.ReplyPart, { ${kind}: unknown }>`, (o) => mockModel([merge(base, o)])]);
}

const MESSAGE_SHAPED = new Set(["meta", "msg.tokenUsage", "the model's outcome"]);

const src =
  `import type * as F from "./floe.js";\nimport type * as T from "./test.js";\n` + CASES.map(([, type], i) => `export type C${i} = ${type};\n`).join("");
const { checker, aliases } = types(src);
const declared = CASES.map((_, i) => keysOf(checker, aliases.get(`C${i}`)));

// outcome runs call(o) and returns the error it threw or rejected with, or null.
async function outcome(call, o) {
  try {
    await call(o);
    return null;
  } catch (e) {
    return e;
  }
}
const unknownKey = (e, k) => e && new RegExp(`[.]${k}: unknown (option|key)`).test(e.message);

for (const [i, [name, , call]] of CASES.entries()) {
  test(`${name}: the keys of floe.d.ts are the keys the runtime knows`, async () => {
    const keys = declared[i];
    assert.ok(keys.size > 0, `${name}: no keys read from the .d.ts`);
    const e = await outcome(call, { [BOGUS]: 1 });
    assert.ok(unknownKey(e, BOGUS), `${name}: an unknown key was not refused as unknown (${e ? e.message : "taken without a word"})`);
    const known = e.message.match(/; known: (.*)$/)?.[1]?.split(", ");
    assert.ok(known, `${name}: the refusal does not list the known keys: ${e.message}`);
    assert.deepEqual([...keys.keys()].sort(), known.sort(), `${name}: the keys the .d.ts declares, against the runtime's`);
  });

  // README: the types "accept { signal: undefined } under
  // exactOptionalPropertyTypes", as the runtime does: an optional key
  // given undefined takes its default. (Not the message-shaped types: a
  // session_meta, token counts, a model's outcome.)
  if (!MESSAGE_SHAPED.has(name)) {
    test(`${name}: each optional key the runtime takes undefined for admits undefined in floe.d.ts`, async () => {
      for (const [k, { optional, undefinedOK }] of declared[i]) {
        if (!optional || undefinedOK) continue;
        const e = await outcome(call, { [k]: undefined });
        assert.ok(e, `${name}: ${k}: the runtime takes undefined, and the .d.ts does not (want ${k}?: … | undefined)`);
      }
    });
  }

  test(`${name}: each key floe.d.ts declares is taken, undefined as absent when its type admits it`, async () => {
    for (const [k, { undefinedOK }] of declared[i]) {
      const e = await outcome(call, { [k]: undefined });
      assert.ok(!unknownKey(e, k), `${name}: ${k}, declared, is refused as unknown: ${e?.message}`);
      if (undefinedOK) assert.equal(e?.message, (await outcome(call, { [k]: ABSENT }))?.message, `${name}: ${k}: undefined type-checks, and the runtime does not take it as absent`);
    }
  });
}
