// node scripts/wasm-size.mjs FILE BUDGET — prints FILE's raw, gzip -9 and
// brotli (quality 11) sizes in one line; for floe.wasm, fails naming the
// excess when its brotli size is over BUDGET bytes.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import zlib from "node:zlib";

const [file, budget] = process.argv.slice(2);
const b = readFileSync(file);
const gz = zlib.gzipSync(b, { level: 9 }).length;
const br = zlib.brotliCompressSync(b, {
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length },
}).length;
const kb = (n) => (n / 1000).toFixed(1).padStart(8) + " kB";
console.log(`${basename(file).padEnd(17)}${kb(b.length)}${kb(gz)}${kb(br)}`);
if (basename(file) === "floe.wasm" && br > Number(budget)) {
  console.log(`build: floe.wasm is ${br} bytes after brotli, over the budget of ${budget}`);
  process.exit(1);
}
