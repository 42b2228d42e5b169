// The sizes of a WebAssembly module's sections, raw and after brotli
// (quality 11, as the build measures floe.wasm's budget), and, given two
// modules, the difference: whether a change grew the code, or only moved
// how the data section compresses. floe.wasm's compressed size moves by
// a few KB with changes that leave the code alike (README, Sizes); its
// code section compresses in step with its size.
//
//   node scripts/bench/wasm-sections.mjs A.wasm [B.wasm]
//
// Prints one line a section of 1 KB or more (the code is section 10, the
// data section 11), the whole file's line, and with B each size's B − A.
import { readFileSync } from "node:fs";
import zlib from "node:zlib";

const NAMES = ["custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "data count"];

// sections returns the sections of the module b: [{ id, name, start, end }].
export function sections(b) {
  if (b.length < 8 || b[0] !== 0 || b[1] !== 0x61 || b[2] !== 0x73 || b[3] !== 0x6d) throw new Error("not a WebAssembly module (no \\0asm header)");
  const out = [];
  let p = 8;
  const leb = () => {
    let r = 0;
    let shift = 0;
    for (;;) {
      if (p >= b.length) throw new Error(`a section's size runs past the end of the file (${b.length} bytes)`);
      const c = b[p++];
      r += (c & 0x7f) * 2 ** shift;
      if ((c & 0x80) === 0) return r;
      shift += 7;
      if (shift > 28) throw new Error(`a malformed section size at byte ${p}`);
    }
  };
  while (p < b.length) {
    const id = b[p++];
    const len = leb();
    if (p + len > b.length) throw new Error(`section ${id} (${len} bytes at byte ${p}) runs past the end of the file (${b.length} bytes)`);
    out.push({ id, name: NAMES[id] ?? `section ${id}`, start: p, end: p + len });
    p += len;
  }
  return out;
}

export const brotli = (bytes) =>
  zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }).length;

// sizes returns { file: { raw, brotli }, sections: { name: { raw, brotli } } }
// for the sections of 1 KB or more.
export function sizes(b) {
  const out = { file: { raw: b.length, brotli: brotli(b) }, sections: {} };
  for (const s of sections(b)) {
    if (s.end - s.start < 1024) continue;
    const key = s.id === 0 ? `custom@${s.start}` : s.name;
    out.sections[key] = { raw: s.end - s.start, brotli: brotli(b.subarray(s.start, s.end)) };
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  if (files.length < 1 || files.length > 2) {
    console.error("usage: node scripts/bench/wasm-sections.mjs A.wasm [B.wasm]");
    process.exit(2);
  }
  let all;
  try {
    all = files.map((f) => sizes(readFileSync(f)));
  } catch (e) {
    console.error(`wasm-sections: ${e.message}`);
    process.exit(1);
  }
  const [a, b] = all;
  const num = (n) => String(n).padStart(10);
  const diff = (x, y) => (y === undefined || x === undefined ? "" : (y - x >= 0 ? "+" : "") + (y - x));
  console.log(`${"".padEnd(10)}${num("raw")}${num("brotli")}${b ? `${num("raw")}${num("brotli")}${num("Δ raw")}${num("Δ brotli")}` : ""}`);
  const names = [...new Set([...Object.keys(a.sections), ...Object.keys(b?.sections ?? {})])];
  for (const [name, x, y] of [...names.map((n) => [n, a.sections[n], b?.sections[n]]), ["file", a.file, b?.file]]) {
    let line = name.padEnd(10) + num(x?.raw ?? "-") + num(x?.brotli ?? "-");
    if (b) line += num(y?.raw ?? "-") + num(y?.brotli ?? "-") + num(diff(x?.raw, y?.raw)) + num(diff(x?.brotli, y?.brotli));
    console.log(line);
  }
}
