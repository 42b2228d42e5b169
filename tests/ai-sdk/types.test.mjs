// tsc over types.ts: ai-sdk.d.ts against the AI SDK's own types (with
// tests/types's TypeScript).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const TSC = fileURLToPath(new URL("../types/node_modules/typescript/bin/tsc", import.meta.url));

test("ai-sdk.d.ts takes the real providers' models (tsc over tests/ai-sdk/types.ts)", () => {
  assert.ok(existsSync(TSC), `TypeScript is missing: run npm ci in tests/types (${TSC})`);
  let out = "";
  try {
    execFileSync(process.execPath, [TSC, "-p", fileURLToPath(new URL("tsconfig.json", import.meta.url))], { encoding: "utf8" });
  } catch (e) {
    out = e.stdout + e.stderr;
  }
  assert.equal(out, "");
});
