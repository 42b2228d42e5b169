// Where a W1 task's time goes: Floe (and pi-agent-core, for scale) run five
// shapes of the W1 task, interleaved in every repetition, and a least-squares
// fit of the median wall times gives the cost of one request, one tool call
// (its start, four argument deltas, approval, dispatch and result, without
// its fragments), one tool output fragment and one text delta. The fit has
// no term for a task's own cost (a session created, run and closed): a
// sixth shape, a task of one request of one delta, measures it apart and
// is left out of the fit.
//
//   FLOE_STATIC=<checkout>/static node scripts/bench/cost-model.mjs <peers dir> [reps]
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const dir = process.argv[2];
const reps = Number(process.argv[3] ?? 5);
// T turns, D text deltas per turn, K calls per turn (all turns but the last), F fragments per call.
const shapes = [
  { T: 20, D: 200, K: 4, F: 10 }, // W1
  { T: 60, D: 10, K: 1, F: 1 }, // requests
  { T: 20, D: 2000, K: 1, F: 1 }, // text deltas
  { T: 20, D: 10, K: 16, F: 1 }, // tool calls
  { T: 20, D: 10, K: 4, F: 100 }, // fragments
];
const single = { T: 1, D: 1, K: 0, F: 0, warmup: 200, iters: 200 }; // a task's own cost
const peers = [
  { name: "floe", script: "peer-floe.mjs" },
  { name: "pi-agent-core", script: "peer-pi-agent.mjs" },
];
const walls = new Map(); // "peer shape" → [ms]
for (let rep = 0; rep < reps; rep++) {
  for (let i = 0; i <= shapes.length; i++) {
    const s = i === shapes.length ? single : shapes[(i + rep) % shapes.length];
    for (const p of rep % 2 ? [...peers].reverse() : peers) {
      const args = [join(dir, p.script), "--workload", "W1", "--T", s.T, "--D", s.D, "--K", s.K, "--F", s.F];
      if (s.warmup) args.push("--warmup", s.warmup, "--iters", s.iters);
      const res = spawnSync(process.execPath, args.map(String), { cwd: dir, encoding: "utf8", maxBuffer: 1 << 24 });
      let r;
      try {
        r = JSON.parse(res.stdout.trim().split("\n").pop());
      } catch {
        throw new Error(`${p.name} ${JSON.stringify(s)} failed (rc=${res.status}): ${res.stderr.slice(-1500)}`);
      }
      if (!r.ok) throw new Error(`${p.name} ${JSON.stringify(s)}: payload mismatch`);
      const k = `${p.name} ${s === single ? "single" : shapes.indexOf(s)}`;
      walls.set(k, [...(walls.get(k) ?? []), r.wallMs]);
    }
  }
}
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
// Unknowns: per request, per tool call, per fragment, per text delta (ms).
const features = (s) => {
  const calls = s.K * (s.T - 1);
  return [s.T, calls, calls * s.F, s.T * s.D];
};
// Least squares by the normal equations (4×4, Gaussian elimination).
function fit(ys) {
  const n = 4;
  const A = Array.from({ length: n }, () => new Array(n + 1).fill(0));
  shapes.forEach((s, i) => {
    const x = features(s);
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) A[r][c] += x[r] * x[c];
      A[r][n] += x[r] * ys[i];
    }
  });
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = A[r][c] / A[c][c];
      for (let k = c; k <= n; k++) A[r][k] -= f * A[c][k];
    }
  }
  return A.map((row, i) => row[n] / row[i]);
}
const out = ["| peer | per request µs | per tool call µs | per fragment µs | per text delta µs | W1 wall ms (median) | a one-request task µs (median) |", "|---|---:|---:|---:|---:|---:|---:|"];
for (const p of peers) {
  const ys = shapes.map((_, i) => median(walls.get(`${p.name} ${i}`)));
  const [req, call, frag, delta] = fit(ys).map((x) => x * 1000);
  const task = median(walls.get(`${p.name} single`)) * 1000;
  out.push(`| ${p.name} | ${req.toFixed(1)} | ${call.toFixed(1)} | ${frag.toFixed(2)} | ${delta.toFixed(2)} | ${ys[0].toFixed(2)} | ${task.toFixed(0)} |`);
}
out.push(
  "",
  "shapes (T turns, D deltas/turn, K calls/turn, F fragments/call): " + shapes.map((s) => `${s.T}/${s.D}/${s.K}/${s.F}`).join(", "),
  `a one-request task: ${single.T}/${single.D}/${single.K}/${single.F}, ${single.iters} timed after ${single.warmup} (not in the fit)`,
);
process.stdout.write(out.join("\n") + "\n");
