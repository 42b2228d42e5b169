// scripts/bench/wasm-sections.mjs, which the README's Sizes section names:
// a module's sections, raw and after brotli, and two modules' difference.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sections, sizes, brotli } from "../../scripts/bench/wasm-sections.mjs";

const script = fileURLToPath(new URL("../../scripts/bench/wasm-sections.mjs", import.meta.url));

// leb encodes n as unsigned LEB128.
function leb(n) {
  const out = [];
  do {
    let c = n & 0x7f;
    n >>>= 7;
    if (n) c |= 0x80;
    out.push(c);
  } while (n);
  return out;
}

// module returns the bytes of a module with these sections (id, bytes);
// only the framing is real WebAssembly.
function module(...secs) {
  const out = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
  for (const [id, body] of secs) out.push(id, ...leb(body.length), ...body);
  return Uint8Array.from(out);
}

const filled = (n, seed) => Array.from({ length: n }, (_, i) => (i * seed + (i >> 3)) & 0xff);

test("sections and sizes read a module's sections; sizes skips those under 1 KB", () => {
  const code = filled(3000, 7);
  const data = filled(1500, 13);
  const b = module([1, [1, 2, 3]], [10, code], [11, data]);
  const s = sections(b);
  assert.deepEqual(s.map((x) => [x.id, x.name, x.end - x.start]), [[1, "type", 3], [10, "code", 3000], [11, "data", 1500]]);
  assert.deepEqual([...b.subarray(s[1].start, s[1].end)], code);
  const z = sizes(b);
  assert.deepEqual(Object.keys(z.sections), ["code", "data"]);
  assert.equal(z.sections.code.raw, 3000);
  assert.equal(z.sections.code.brotli, brotli(Uint8Array.from(code)));
  assert.deepEqual(z.file, { raw: b.length, brotli: brotli(b) });
});

test("sections names a file that is not a module and a section that runs past its end", () => {
  assert.throws(() => sections(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])), /not a WebAssembly module/);
  const b = module([10, filled(100, 3)]);
  assert.throws(() => sections(b.subarray(0, b.length - 1)), /section 10 \(100 bytes at byte 10\) runs past the end of the file \(109 bytes\)/);
  assert.throws(() => sections(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 10, 0x80])), /runs past the end of the file/);
});

test("the script prints each section's sizes and, given two modules, the difference", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "floe-sections-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, "a.wasm");
  const b = join(dir, "b.wasm");
  writeFileSync(a, module([10, filled(3000, 7)], [11, filled(1500, 13)]));
  writeFileSync(b, module([10, filled(3100, 7)], [11, filled(1500, 13)]));
  const one = spawnSync(process.execPath, [script, a], { encoding: "utf8" });
  assert.equal(one.status, 0, one.stderr);
  assert.match(one.stdout, /^code\s+3000\s+\d+$/m);
  const two = spawnSync(process.execPath, [script, a, b], { encoding: "utf8" });
  assert.equal(two.status, 0, two.stderr);
  assert.match(two.stdout, /^code\s+3000\s+\d+\s+3100\s+\d+\s+\+100\s+[+-]\d+$/m);
  assert.match(two.stdout, /^data\s+1500\s+(\d+)\s+1500\s+\1\s+\+0\s+\+0$/m);
  const bad = spawnSync(process.execPath, [script, join(dir, "none.wasm")], { encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /wasm-sections: ENOENT/);
  const usage = spawnSync(process.execPath, [script], { encoding: "utf8" });
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /usage: node scripts\/bench\/wasm-sections.mjs A.wasm \[B.wasm\]/);
});
