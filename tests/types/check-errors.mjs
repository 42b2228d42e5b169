// Runs tsc over wrong.ts and checks that every line marked with an
// "// error: <text>" comment above it fails with that text, and nothing else.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const dir = new URL(".", import.meta.url);
let out = "";
try {
  execFileSync("npx", ["--no-install", "tsc", "--noEmit", "-p", "tsconfig.wrong.json"], { cwd: dir, encoding: "utf8" });
} catch (e) {
  out = e.stdout;
}
const errors = new Map(); // line → text of its errors
let line = 0;
for (const l of out.split("\n")) {
  const m = l.match(/^wrong\.ts\((\d+),\d+\): error/);
  if (m) line = Number(m[1]);
  if (line) errors.set(line, (errors.get(line) ?? "") + l + "\n");
}
const want = new Map();
readFileSync(new URL("wrong.ts", dir), "utf8").split("\n").forEach((l, i) => {
  const m = l.match(/^\s*\/\/ error: (.*)$/);
  if (m) want.set(i + 2, m[1]);
});
const bad = [];
for (const [ln, text] of want) {
  if (!errors.has(ln)) bad.push(`wrong.ts:${ln}: want an error containing ${JSON.stringify(text)}, got none`);
  else if (!errors.get(ln).includes(text)) bad.push(`wrong.ts:${ln}: want ${JSON.stringify(text)} in:\n${errors.get(ln)}`);
}
for (const [ln, text] of errors) if (!want.has(ln)) bad.push(`wrong.ts:${ln}: unexpected error:\n${text}`);
if (bad.length) {
  console.error(bad.join("\n"));
  process.exit(1);
}
console.log(`tsc: ok (wrong.ts: ${want.size} readable errors)`);
