// scripts/wasm-size.mjs, the size gate of ./build.sh build: a module's raw,
// gzip and brotli sizes in one line; floe.wasm over its brotli budget
// fails, naming its size and the budget; another module has no budget.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

const SCRIPT = fileURLToPath(new URL("../../scripts/wasm-size.mjs", import.meta.url));

test("wasm-size: a line of sizes; floe.wasm over its brotli budget fails naming both, another module never", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "floe-size-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251));
  const br = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length;
  for (const name of ["floe.wasm", "playground.wasm"]) writeFileSync(join(dir, name), bytes);
  const size = (name, budget) => spawnSync(process.execPath, [SCRIPT, join(dir, name), String(budget)], { encoding: "utf8" });

  const ok = size("floe.wasm", br);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, new RegExp(`^floe\\.wasm +5\\.0 kB +[0-9.]+ kB +${(br / 1000).toFixed(1).replace(".", "\\.")} kB\\n$`));

  const over = size("floe.wasm", br - 1);
  assert.equal(over.status, 1);
  assert.match(over.stdout, new RegExp(`build: floe\\.wasm is ${br} bytes after brotli, over the budget of ${br - 1}\\n$`));

  const other = size("playground.wasm", 1);
  assert.equal(other.status, 0, other.stdout + other.stderr);
});
