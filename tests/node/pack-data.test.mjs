// scripts/pack-data.mjs, which the build runs on each module it writes:
// a module's data segments apart by a few zero bytes become one, and the
// memory an instance starts with stays the same byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MAX_GAP, leb, packData, readSegments } from "../../scripts/pack-data.mjs";

const STATIC = fileURLToPath(new URL("../../static", import.meta.url));

// module returns a module of one exported memory page ("mem") whose data
// section holds segs, [offset, bytes] each, and a data count section.
function module(segs, { kind = 0 } = {}) {
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const data = [...leb(segs.length)];
  for (const [off, bytes] of segs) {
    if (kind === 1) data.push(1, ...leb(bytes.length), ...bytes);
    else data.push(0, 0x41, ...leb(off, true), 0x0b, ...leb(bytes.length), ...bytes);
  }
  return Buffer.from([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(5, [1, 0, 1]), // one memory of one page
    ...section(7, [1, 3, ...Buffer.from("mem"), 2, 0]), // exported as "mem"
    ...section(12, leb(segs.length)),
    ...section(11, data),
  ]);
}

const memory = (b) => Buffer.from(new WebAssembly.Instance(new WebAssembly.Module(b)).exports.mem.buffer);

test("pack-data joins segments a few zeros apart, in any order, and the memory is the same", () => {
  const gapped = Buffer.alloc(MAX_GAP + 1);
  const segs = [
    [300, [7, 8, 9]],
    [100, [1, 2]],
    [100 + 2 + 18, [3, 4]], // 18 zeros apart, as the runtime's function buckets
    [100 + 2 + 18 + 2 + MAX_GAP, [5]], // MAX_GAP zeros apart: joined
    [300 + 3 + MAX_GAP + 1, [6]], // one more: a segment of its own
    [9000, [...gapped, 1]], // zeros inside a segment are kept
    [8999, []], // an empty segment writes nothing
  ];
  const b = module(segs);
  const { out, why, before, after } = packData(b);
  assert.equal(why, undefined);
  assert.equal(before, 7);
  assert.equal(after, 4);
  assert.deepEqual(
    readSegments(out).segs.map((s) => [s.off, s.bytes.length]),
    [[100, 2 + 18 + 2 + MAX_GAP + 1], [300, 3], [300 + 3 + MAX_GAP + 1, 1], [9000, MAX_GAP + 2]],
  );
  assert.ok(memory(b).equals(memory(out)), "the packed module's memory differs");
  assert.ok(WebAssembly.validate(out));
});

test("pack-data leaves alone a module whose segments overlap, are passive or are not a module", () => {
  const overlap = module([[100, [1, 2, 3]], [102, [9]]]);
  assert.equal(packData(overlap).out, overlap);
  assert.match(packData(overlap).why, /overlap/);
  const passive = module([[0, [1]]], { kind: 1 });
  assert.equal(packData(passive).out, passive);
  assert.match(packData(passive).why, /not an active segment/);
  assert.match(packData(Buffer.from("not wasm")).why, /not a WebAssembly module/);
});

// The build packs every module it writes: Go's linker left floe.wasm
// about 50,000 segments.
for (const name of ["floe.wasm", "floe-node.wasm"]) {
  test(`${name}'s data segments are packed`, () => {
    const b = readFileSync(`${STATIC}/${name}`);
    const n = readSegments(b).segs.length;
    assert.ok(n < 100, `${name} has ${n} data segments: not packed by scripts/pack-data.mjs`);
    assert.equal(packData(b).after, n, "packing it again joins more");
  });
}
