// Packs a WebAssembly module's data segments: segments apart by a run of
// zero bytes of at most MAX_GAP bytes become one segment, the zeros written
// out. Go's linker starts a new segment at every run of more than 8 zero
// bytes, the least raw size; floe.wasm had about 50,000 segments so (most
// of them 2 bytes of the runtime's table of function buckets, a 20-byte
// entry for every 4096 of the 65536 program counters each function
// spans), and their headers, an offset each, compress badly: packed with
// gaps of up to 64 zero bytes it is about 55 KB smaller after brotli and 0.5
// MB larger raw (README, Sizes). The memory an instance starts with is the
// same byte for byte (checked here before the file is written).
//
//   node scripts/pack-data.mjs FILE.wasm…   rewrites each file in place
//
// A module whose data is not only active segments of constant offsets into
// memory 0 that do not overlap, or that names its data segments, is left
// as it is, and the script says why.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const MAX_GAP = 64;

// leb encodes n as LEB128 bytes (signed: an i32.const's operand).
export function leb(n, signed) {
  const o = [];
  for (;;) {
    const c = n & 0x7f;
    n = Math.floor(n / 128);
    if (n === 0 && !(signed && c & 0x40)) return o.push(c), o;
    o.push(c | 0x80);
  }
}

// packData returns the module b with its data segments packed, and the
// segments' counts before and after; or, with a reason, b itself.
export function packData(b, maxGap = MAX_GAP) {
  if (b.length < 8 || b.readUInt32BE(0) !== 0x0061736d) return { out: b, why: "not a WebAssembly module (no \\0asm header)" };
  let p;
  const u32 = () => {
    let r = 0;
    for (let shift = 0; ; shift += 7) {
      if (p >= b.length || shift > 28) throw new Error(`a malformed LEB128 number at byte ${p}`);
      const c = b[p++];
      r += (c & 0x7f) * 2 ** shift;
      if ((c & 0x80) === 0) return r;
    }
  };
  const sections = [];
  p = 8;
  while (p < b.length) {
    const at = p;
    const id = b[p++];
    const len = u32();
    if (p + len > b.length) throw new Error(`section ${id} runs past the end of the file`);
    sections.push({ id, at, start: p, end: p + len });
    p += len;
  }
  for (const s of sections.filter((s) => s.id === 0)) {
    p = s.start;
    const n = u32();
    if (b.toString("latin1", p, p + n) !== "name") continue;
    for (p += n; p < s.end; ) {
      const sub = b[p++];
      const len = u32();
      if (sub === 9) return { out: b, why: "its name section names data segments" };
      p += len;
    }
  }
  const data = sections.find((s) => s.id === 11);
  if (!data) return { out: b, why: "it has no data section" };
  p = data.start;
  const segs = [];
  for (let i = 0, n = u32(); i < n; i++) {
    if (u32() !== 0 || b[p++] !== 0x41) return { out: b, why: `data segment ${i} is not an active segment at an i32.const offset of memory 0` };
    let off = 0;
    let shift = 0;
    let c;
    do {
      c = b[p++];
      off += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80);
    if (c & 0x40) return { out: b, why: `data segment ${i} has a negative offset` };
    if (b[p++] !== 0x0b) return { out: b, why: `data segment ${i}'s offset is not a constant` };
    const len = u32();
    segs.push({ off, bytes: b.subarray(p, p + len) });
    p += len;
  }
  if (p !== data.end) throw new Error("the data section's segments do not end where the section does");
  const sorted = segs.filter((s) => s.bytes.length > 0).sort((x, y) => x.off - y.off);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].off < sorted[i - 1].off + sorted[i - 1].bytes.length) return { out: b, why: "two of its data segments overlap" };
  }
  const groups = [];
  for (const s of sorted) {
    const g = groups.at(-1);
    if (g && s.off - g.end <= maxGap) {
      g.parts.push(s);
      g.end = s.off + s.bytes.length;
    } else groups.push({ off: s.off, end: s.off + s.bytes.length, parts: [s] });
  }
  const chunks = [Buffer.from(leb(groups.length))];
  for (const g of groups) {
    const bytes = Buffer.alloc(g.end - g.off);
    for (const s of g.parts) s.bytes.copy(bytes, s.off - g.off);
    chunks.push(Buffer.from([0, 0x41, ...leb(g.off, true), 0x0b, ...leb(bytes.length)]), bytes);
  }
  const body = Buffer.concat(chunks);
  const out = [b.subarray(0, 8)];
  for (const s of sections) {
    if (s.id === 11) out.push(Buffer.from([11, ...leb(body.length)]), body);
    else if (s.id === 12) {
      const count = Buffer.from(leb(groups.length));
      out.push(Buffer.from([12, ...leb(count.length)]), count);
    } else out.push(b.subarray(s.at, s.end));
  }
  return { out: Buffer.concat(out), before: segs.length, after: groups.length };
}

// memoryImage returns the bytes the module's active data segments write,
// from the lowest offset they write to the highest.
export function memoryImage(b) {
  const { segs } = readSegments(b);
  const lo = Math.min(...segs.map((s) => s.off));
  const img = Buffer.alloc(Math.max(...segs.map((s) => s.off + s.bytes.length)) - lo);
  for (const s of segs) s.bytes.copy(img, s.off - lo);
  return { lo, img };
}

// readSegments returns the module's data segments as { off, bytes }.
export function readSegments(b) {
  let p = 8;
  const u32 = () => {
    let r = 0;
    for (let shift = 0; ; shift += 7) {
      const c = b[p++];
      r += (c & 0x7f) * 2 ** shift;
      if ((c & 0x80) === 0) return r;
    }
  };
  const segs = [];
  while (p < b.length) {
    const id = b[p++];
    const end = u32() + p;
    if (id === 11) {
      for (let i = 0, n = u32(); i < n; i++) {
        u32();
        p++; // i32.const
        const off = u32(); // non-negative: packData refuses the others
        p++; // end
        const len = u32();
        segs.push({ off, bytes: b.subarray(p, p + len) });
        p += len;
      }
    }
    p = end;
  }
  return { segs };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const f of process.argv.slice(2)) {
    const b = readFileSync(f);
    const { out, why, before, after } = packData(b);
    if (why) {
      console.error(`pack-data: ${f} left as it is: ${why}`);
      continue;
    }
    const x = memoryImage(b);
    const y = memoryImage(out);
    if (x.lo !== y.lo || !x.img.equals(y.img)) throw new Error(`pack-data: ${f}: the packed segments would not write the same memory`);
    writeFileSync(f, out);
    console.log(`pack-data: ${f}: ${before} data segments in ${after}`);
  }
}
