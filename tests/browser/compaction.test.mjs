// Compaction in Chromium, sessions in IndexedDB: (a) a session compacting
// again and again (mid-task and at task boundaries, tool outputs with
// images, subagents' answers) sends each compaction what it summarizes,
// gains a Trace file per compaction, keeps the instance's memory flat (from
// the 60th compaction to the 200th), and, resumed in a fresh page after
// the 50th, sends its model what the live session sent;
// (b) the reference's compacted sessions (shared/interop 06 and 10),
// imported into IndexedDB and resumed, match what its own resume did.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { baseURL, explain, launch, page as firstPage, ROOT, WAIT } from "./harness.mjs";

const PAGE = "/tests/browser/fixtures/compaction.html";
const sid = (tag) => `session-2026-01-01-00-00-00-${tag}`;

async function open(page) {
  await page.goto(baseURL() + PAGE);
  await page.waitForFunction(() => window.compaction && window.compactionReady === true, null, { timeout: WAIT });
}

test("long compacting sessions in IndexedDB: each request's content, a file each, flat memory, a resume after 50 in a fresh page that sends what the live session sent", { timeout: 300_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await open(page);
  const long = await page.evaluate((id) => window.compaction.live(window.compaction.load, id, 200, 0), sid("tourmemory"));
  assert.ok(long.files >= 201, `${long.files} files after 200 compactions${explain(log)}`);
  const mem = long.memory.map(([c, b]) => `${c}: ${(b / 2 ** 20).toFixed(1)} MB`).join(", ");
  t.diagnostic(`wasm memory at compactions ${mem}`);
  const at60 = long.memory.find(([n]) => n === 60)[1];
  assert.ok(Math.max(...long.memory.map(([, b]) => b)) - at60 <= 2 << 20, `wasm memory grew with the compactions: ${mem}`);
  for (const extra of [0, 2]) {
    const got = await page.evaluate(([id, extra]) => window.compaction.live(window.compaction.load, id, 50, extra), [sid(`tourlive${extra}`), extra]);
    assert.ok(got.files >= 51, `${got.files} files after 50 compactions${explain(log)}`);
    const runs = await page.evaluate(([id, extra]) => window.compaction.stored(window.compaction.load, id, 50, extra), [sid(`tourstored${extra}`), extra]);
    assert.equal(runs.runs, got.runs);
    const fresh = await ctx.newPage();
    await open(fresh);
    const resumed = await fresh.evaluate((id) => window.compaction.resumed(window.compaction.load, id), sid(`tourstored${extra}`));
    await fresh.close();
    assert.deepEqual(resumed, got.want, `resumed after 50 compactions and ${extra} runs${explain(log)}`);
  }
});

test("the reference's compacted sessions resume from IndexedDB as its own resume did", { timeout: 120_000 }, async (t) => {
  const shared = process.env.FLOE_SHARED ?? join(ROOT, "..", "shared");
  const dir = join(shared, "interop");
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await open(page);
  const strip = ({ timestamp, ...m }) => m;
  const lines = (text) => text.split("\n").filter((l) => l.trim() !== "");
  for (const name of ["06_compaction_summarize", "06_compaction_summarize_001only", "10_damaged_open_compaction"]) {
    const fix = JSON.parse(await readFile(join(dir, name + ".resume.json"), "utf8"));
    const files = await Promise.all(
      fix.files.map(async (f, k) => ({ name: `2026-11-30/${fix.session_id}_${String(k + 1).padStart(3, "0")}.jsonl`, text: await readFile(join(dir, f), "utf8") })),
    );
    const id = fix.session_id;
    await page.evaluate((id) => window.compaction.load().then((floe) => floe.deleteSession(id, { store: "indexeddb" }).catch(() => {})), id);
    const ready = fix.next_run.stream.find((m) => m.payload.type === "tool_list_ready");
    const got = await page.evaluate((a) => window.compaction.interop(window.compaction.load, a), {
      id,
      files,
      tools: ready.payload.tools,
      llmSessionTokens: fix.next_run.llm_session_tokens,
    });
    assert.deepEqual(got.loaded?.map(strip) ?? [], fix.history.map(strip), `${name}: history${explain(log)}`);
    assert.equal(got.loaded !== null, fix.next_run.history_injected, `${name}: history injected`);
    assert.deepEqual(got.first.map(strip), fix.next_run.first_request.map(strip), `${name}: first request`);
    assert.deepEqual(got.stream.map(strip), fix.next_run.stream.map(strip), `${name}: stream`);
    const gained = [];
    for (const [k, f] of got.after.entries()) {
      const old = got.before[k] ? lines(got.before[k].text).length : 0;
      const added = lines(f.text).slice(old).map((l) => strip(JSON.parse(l)));
      if (added.length) gained.push({ index: k + 1, new_file: !got.before[k], records: added });
    }
    const want = [];
    for (const a of [...fix.resume_writes, ...fix.next_run.trace_appended]) {
      const last = want.at(-1);
      if (last && last.index === a.index && !a.new_file) last.records.push(...a.records.map(strip));
      else want.push({ index: a.index, new_file: a.new_file, records: a.records.map(strip) });
    }
    assert.deepEqual(gained, want, `${name}: records appended`);
  }
});
