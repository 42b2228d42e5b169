// The same-rep ratios of the performance bar, from one run-all session's raw
// results (a JSON line per run): for every repetition, Floe's wall time over
// each reference's wall time in that repetition, then the median over reps.
//
//   node scripts/bench/peers-summary.mjs results/run-<stamp>.jsonl
import { readFileSync } from "node:fs";

const rows = readFileSync(process.argv[2], "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((r) => r.wallMs !== undefined);
const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const reps = [...new Set(rows.map((r) => r.rep))];
const wall = (w, peer, rep) => rows.find((r) => r.workload === w && r.peer === peer && r.rep === rep)?.wallMs;
// ratio(w, a, b): median over reps of wall(a) / wall(b) in the same rep.
const ratio = (w, a, b) => median(reps.map((rep) => wall(w, a, rep) / wall(w, b, rep)));
const fmt = (x) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const node = rows[0]?.node ?? process.version;
const peersOf = (w) => [...new Set(rows.filter((r) => r.workload === w).map((r) => r.peer))];
// The engines compared with Floe: not Floe's own variants, nor the
// workload's stream drained alone (peer-stream.mjs).
const othersOf = (w) => peersOf(w).filter((p) => !p.startsWith("floe") && p !== "stream" && p !== "stream:ts");

const out = [`Same-rep ratios (node ${node}, ${reps.length} reps; median over reps of Floe's wall ÷ the other's wall in the same rep):`];
const line = (label, x, target) =>
  out.push(`  ${label.padEnd(44)} ${fmt(x).padStart(7)}${target ? `   (bar ${target}: ${x <= Number(target.slice(2)) ? "met" : "NOT met"})` : ""}`);
for (const w of ["W1", "W2"]) {
  if (!peersOf(w).includes("floe")) continue;
  line(`${w}: floe ÷ baseline:direct`, ratio(w, "floe", "baseline:direct"), w === "W2" ? "≤ 3" : "");
  line(`${w}: floe ÷ pi-agent-core`, ratio(w, "floe", "pi-agent-core"), w === "W1" ? "≤ 1.0" : "");
  for (const p of othersOf(w).filter((p) => p !== "baseline:direct" && p !== "pi-agent-core")) {
    line(`${w}: floe ÷ ${p}`, ratio(w, "floe", p), w === "W2" ? "≤ 1" : "");
  }
  line(`${w}: floe:ts ÷ floe`, ratio(w, "floe:ts", "floe"), "≤ 1.1");
  // What the timestamps cost the workload itself (peer-stream.mjs drains
  // it with no engine), and Floe's own time, floe − stream, with and
  // without them.
  if (peersOf(w).includes("stream") && peersOf(w).includes("stream:ts")) {
    const diff = (a, b) => median(reps.map((rep) => wall(w, a, rep) - wall(w, b, rep)));
    line(`${w}: stream:ts − stream, ms (the workload's own)`, diff("stream:ts", "stream"));
    line(`${w}: floe:ts − floe, ms`, diff("floe:ts", "floe"));
    line(
      `${w}: floe's own time with ts ÷ without`,
      median(reps.map((rep) => (wall(w, "floe:ts", rep) - wall(w, "stream:ts", rep)) / (wall(w, "floe", rep) - wall(w, "stream", rep)))),
    );
  }
  const rss = Math.max(...rows.filter((r) => r.workload === w && r.peer === "floe").map((r) => r.peakRssMB));
  out.push(`  ${`${w}: floe peak RSS, MB (max over reps)`.padEnd(44)} ${rss.toFixed(0).padStart(7)}${w === "W2" ? `   (bar ≤ 100: ${rss <= 100 ? "met" : "NOT met"})` : ""}`);
  // The Node build (floe-node.wasm), which load() takes in Node where it
  // is installed: beside the bar's figures, not part of them.
  if (peersOf(w).includes("floe:node")) {
    line(`${w}: floe:node ÷ floe`, ratio(w, "floe:node", "floe"));
    for (const p of othersOf(w)) line(`${w}: floe:node ÷ ${p}`, ratio(w, "floe:node", p));
    const nrss = Math.max(...rows.filter((r) => r.workload === w && r.peer === "floe:node").map((r) => r.peakRssMB));
    out.push(`  ${`${w}: floe:node peak RSS, MB (max over reps)`.padEnd(44)} ${nrss.toFixed(0).padStart(7)}`);
  }
}
process.stdout.write(out.join("\n") + "\n");
