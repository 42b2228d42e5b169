// The native bar (README "Where Floe stands"): W2 through the Go engine
// against the same producer feeding a buffered channel, in speed: the
// channel's time ÷ the engine's, with the tests' fake clock
// (BenchmarkStream100kEngine) and with the system clock
// (BenchmarkStream100kEngineSystemClock). The engine's test binary is built
// once and its runs are interleaved, one run of each benchmark a round;
// each ratio is taken within its round (this machine's speed moves between
// rounds) and printed as the median and range over the rounds. With
// --base, an earlier commit's binary runs in turn with this tree's, and
// its ratios print above.
//
//   node scripts/bench/native-bar.mjs [--rounds N] [--base COMMIT] [--benchtime B]
//
// --rounds: 10; --benchtime: go test's -benchtime of each run, 30x.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const benchmarks = {
  engine: "BenchmarkStream100kEngine",
  system: "BenchmarkStream100kEngineSystemClock",
  channel: "BenchmarkStream100kChannel",
};

// parseBench returns the ns/op of each benchmark in go test's output, by
// name without its -GOMAXPROCS suffix.
export function parseBench(text) {
  const out = {};
  for (const line of text.split("\n")) {
    const m = /^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

// ratios returns one round's ratios: the channel's time ÷ the engine's, with
// each clock (undefined when a benchmark is missing, as in a tree from
// before the system clock's).
export function ratios(ns) {
  const ch = ns[benchmarks.channel];
  const r = (k) => (ch > 0 && ns[k] > 0 ? ch / ns[k] : undefined);
  return { engine: r(benchmarks.engine), system: r(benchmarks.system) };
}

// summary returns the median, the smallest and the largest of xs (the
// undefined ones left out), or null when none is left.
export function summary(xs) {
  const v = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

function format(s) {
  return s === null ? "-" : `${s.median.toFixed(3)} (${s.min.toFixed(3)}–${s.max.toFixed(3)}, ${s.n} rounds)`;
}

function args(argv) {
  const o = { rounds: 10, base: "", benchtime: "30x" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`native-bar: ${a} wants a value`);
      return argv[++i];
    };
    if (a === "--rounds") o.rounds = Number(v());
    else if (a === "--base") o.base = v();
    else if (a === "--benchtime") o.benchtime = v();
    else throw new Error(`native-bar: unknown argument ${a} (want --rounds N, --base COMMIT, --benchtime B)`);
  }
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error("native-bar: --rounds wants a whole number of at least 1");
  return o;
}

function main() {
  const o = args(process.argv.slice(2));
  const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
  const work = mkdtempSync(join(tmpdir(), "floe-native-bar-"));
  try {
    const builds = [];
    if (o.base) {
      const tree = join(work, "base");
      mkdirSync(tree);
      const tar = execFileSync("git", ["-C", root, "archive", o.base], { maxBuffer: 1 << 30 });
      execFileSync("tar", ["-x", "-C", tree], { input: tar });
      builds.push({ name: `base ${o.base}`, tree });
    }
    builds.push({ name: "this tree", tree: root });
    for (const [i, b] of builds.entries()) {
      b.bin = join(work, `engine${i}.test`);
      execFileSync("go", ["test", "-c", "-o", b.bin, "./engine/"], { cwd: b.tree, stdio: ["ignore", "ignore", "inherit"] });
      b.rounds = [];
    }
    const pattern = `^(${Object.values(benchmarks).join("|")})$`;
    for (let r = 0; r < o.rounds; r++) {
      for (const b of builds) {
        const out = execFileSync(b.bin, ["-test.run", "^$", "-test.bench", pattern, "-test.benchtime", o.benchtime, "-test.count", "1"], {
          cwd: join(b.tree, "engine"),
          encoding: "utf8",
        });
        b.rounds.push(ratios(parseBench(out)));
      }
    }
    console.log(`native bar: W2, the buffered channel's time ÷ the engine's (≥ 0.6), ${o.rounds} interleaved rounds, -benchtime ${o.benchtime}`);
    for (const b of builds) {
      console.log(`  ${b.name}: the tests' clock ${format(summary(b.rounds.map((x) => x.engine)))}; the system clock ${format(summary(b.rounds.map((x) => x.system)))}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
