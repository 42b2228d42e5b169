// The reference's traces and what its own resume rebuilt (shared/interop):
// each session is resumed through floe.mjs, from the memory store (after
// importSession) and from a { dir } store holding the files as the
// reference wrote them, and its one follow-up run is compared with the
// reference's: the history handed to loadHistory, the first request, the
// stream and what the Trace gained. The native replay has its own test
// (engine/trace/interop_test.go); this one covers the JavaScript path,
// closed contexts and a dangling compaction included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, collect } from "./helpers.mjs";

const shared = process.env.FLOE_SHARED ?? new URL("../../../shared", import.meta.url).pathname;
const dir = join(shared, "interop");
const names = (await readdir(dir).catch(() => [])).filter((n) => n.endsWith(".resume.json")).sort();
const { msg } = floe;

/** A message without its timestamp (the fixtures ignore them). */
const strip = ({ timestamp, ...m }) => m;
const lines = (text) => text.split("\n").filter((l) => l.trim() !== "");

/**
 * The follow-up run's tools: its scenario's tool list (08–10 reuse 01, 03
 * and 06's; the child, the subagent's), as the tool_list_ready it streams
 * names them.
 */
function toolList(fix) {
  const ready = fix.next_run.stream.find((m) => m.payload.type === "tool_list_ready");
  return ready.payload.tools.map((d) => floe.tool({ ...d, execute: () => "unused" }));
}

/** The recording model of the follow-up run (README of shared/interop). */
function recorder(fix) {
  const rec = { loaded: null, requests: [], newLLM: 0 };
  const sum = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] + b[k]]));
  rec.llm = {
    loadHistory(h) {
      rec.loaded = h;
    },
    async *streamGenerate({ newMessages }) {
      rec.requests.push(newMessages);
      const request = { cache_read: 0, cache_write: 0, output: 3, total: 10 };
      yield msg.text("Resumed.");
      yield msg.tokenUsage(sum(fix.next_run.llm_session_tokens, request), request);
    },
  };
  return rec;
}

for (const name of names) {
  test(`interop ${name}: resumed through floe.mjs, from memory and from { dir }`, async (t) => {
    const fix = JSON.parse(await readFile(join(dir, name), "utf8"));
    const texts = await Promise.all(fix.files.map((f) => readFile(join(dir, f), "utf8")));
    const base = await mkdtemp(join(tmpdir(), "floe-interop-"));
    t.after(() => rm(base, { recursive: true, force: true }));
    const fileName = (k) => `2026-11-30/${fix.session_id}_${String(k + 1).padStart(3, "0")}.jsonl`;
    await mkdir(join(base, "2026-11-30"));
    await Promise.all(texts.map((text, k) => writeFile(join(base, fileName(k)), text)));
    const stores = [{ dir: base }];
    // Import validates every line: the damaged copies go through { dir } only.
    if (!fix.parse.torn_tail_ignored && fix.parse.skipped_lines.length === 0) {
      await floe.deleteSession(fix.session_id, { store: "memory" }).catch(() => {});
      await floe.importSession(texts.map((text, k) => ({ name: fileName(k), text })), { store: "memory" });
      stores.push("memory");
    }
    for (const store of stores) {
      const where = `${name} (${JSON.stringify(store)})`;
      const before = await floe.exportSession(fix.session_id, { store });
      const rec = recorder(fix);
      const session = await floe.resumeSession(fix.session_id, {
        llm: rec.llm,
        tools: toolList(fix),
        config: { maxTurns: -1 },
        store,
      });
      const stream = await collect(session.run("Continue."));
      await session.close();
      const next = fix.next_run;
      assert.deepEqual(rec.loaded?.map(strip) ?? [], fix.history.map(strip), `${where}: history`);
      assert.equal(rec.loaded !== null, next.history_injected, `${where}: history injected`);
      assert.deepEqual(rec.requests[0].map(strip), next.first_request.map(strip), `${where}: first request`);
      assert.deepEqual(stream.map(strip), next.stream.map(strip), `${where}: stream`);
      // What the Trace gained: resume's own writes, then the run's.
      const after = await floe.exportSession(fix.session_id, { store });
      const gained = [];
      for (const [k, f] of after.entries()) {
        const old = before[k] ? lines(before[k].text).length : 0;
        const added = lines(f.text).slice(old).map((l) => strip(JSON.parse(l)));
        if (added.length) gained.push({ index: k + 1, new_file: !before[k], records: added });
      }
      const want = [...fix.resume_writes, ...next.trace_appended];
      const merged = [];
      for (const a of want) {
        const last = merged.at(-1);
        if (last && last.index === a.index && !a.new_file) last.records.push(...a.records.map(strip));
        else merged.push({ index: a.index, new_file: a.new_file, records: a.records.map(strip) });
      }
      assert.deepEqual(gained, merged, `${where}: records appended`);
    }
  });
}

test("the interop fixtures are there", () => {
  assert.ok(names.length >= 10, `interop fixtures expected in ${dir} (set FLOE_SHARED to the shared folder)`);
});
