// What the Chromium and Firefox tests of examples/extension share: the
// example assembled as its README says (the library files it copies in),
// and the checks of one run of its agent and of its Trace.
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { recordsOf } from "./trace-rules.mjs";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const EXAMPLE = join(ROOT, "examples/extension");
export const CSP = "script-src 'self' 'wasm-unsafe-eval'; object-src 'self'";
export const PAGE_SESSION = "session-2026-01-01-00-00-00-e0e0e0e0"; // session.js
export const WORKER_SESSION = "session-2026-01-01-00-00-00-b0b0b0b0"; // background.js

/** The files the example's README says to copy next to it. */
export async function readmeFiles() {
  const readme = await readFile(join(EXAMPLE, "README.md"), "utf8");
  const cmd = readme.match(/^cp (static\/[\s\S]*?) examples\/extension\/$/m);
  assert.ok(cmd, "examples/extension/README.md has no `cp static/… examples/extension/` line");
  return cmd[1].split(/[\s\\]+/).filter(Boolean).map((f) => f.replace(/^static\//, ""));
}

/**
 * A copy of the example in a temporary folder (deleted after the test t)
 * with the library files but omit, plus files, its manifest's keys
 * replaced by manifest's. Returns the folder.
 */
export async function assemble(t, { omit, files = {}, manifest = {} } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "floe-extension-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await cp(EXAMPLE, dir, { recursive: true });
  for (const f of await readmeFiles()) {
    if (f === omit) continue;
    await cp(join(ROOT, "static", f), join(dir, f)).catch((e) => {
      throw new Error(`static/${f} is missing (run ./build.sh build): ${e.message}`);
    });
  }
  for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
  const base = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
  await writeFile(join(dir, "manifest.json"), JSON.stringify({ ...base, ...manifest }));
  return dir;
}

/** Checks the stream of one run of the example's agent; more ends each failure message. */
export function checkStream(messages, more = "") {
  const types = messages.map((m) => m.payload.type);
  // The tool runs concurrently with the rest of the model's stream, so its
  // output may land anywhere between its approval and the next request.
  const out = types.indexOf("tool_call_output");
  assert.ok(out > types.indexOf("approval_decision") && out < types.lastIndexOf("request_begin"), `tool output at ${out}: ${types}`);
  assert.deepEqual(types.filter((t) => t !== "tool_call_output"), [
    "tool_list_ready",
    "request_begin",
    "partial_tool_call",
    "partial_tool_call",
    "partial_tool_call",
    "tool_call",
    "approval_decision",
    "token_usage",
    "request_end",
    "request_begin",
    "partial_text",
    "partial_text",
    "partial_text",
    "text",
    "token_usage",
    "request_end",
  ], "stream" + more);
}

/** The user prompts of a Trace, in order. */
export const prompts = (files) =>
  recordsOf(files).filter((r) => r.type === "model_msg" && r.payload.type === "text" && r.payload.role === "user").map((r) => r.payload.text);
