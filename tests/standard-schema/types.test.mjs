// tsc over types.ts: floe.d.ts's tool() against zod's, Valibot's and
// ArkType's own types (with tests/types's TypeScript).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const TSC = fileURLToPath(new URL("../types/node_modules/typescript/bin/tsc", import.meta.url));

test("tool()'s execute gets the schema's output type with zod, Valibot and ArkType (tsc over tests/standard-schema/types.ts)", () => {
  assert.ok(existsSync(TSC), `TypeScript is missing: run npm ci in tests/types (${TSC})`);
  let out = "";
  try {
    execFileSync(process.execPath, [TSC, "-p", fileURLToPath(new URL("tsconfig.json", import.meta.url))], { encoding: "utf8" });
  } catch (e) {
    out = e.stdout + e.stderr;
  }
  assert.equal(out, "");
});
