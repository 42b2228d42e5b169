// scripts/bench/watchdog.mjs, which peers.sh runs beside the side-by-side
// session: it kills a peer's process that has not exited after its time,
// says so, leaves any other process alone, and ends with the process it
// watches. It reads /proc, so the test runs where there is one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/bench/watchdog.mjs", import.meta.url));

test("watchdog.mjs kills a peer's process that does not exit, and only that", { skip: !existsSync("/proc/self/stat") }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-watchdog-"));
  try {
    const hang = "setInterval(() => {}, 1 << 30);\n";
    writeFileSync(join(dir, "peer-hang.mjs"), hang);
    writeFileSync(join(dir, "other.mjs"), hang);
    // The watched root: a shell whose children are the two hanging
    // scripts; it prints their process ids.
    const root = spawn("sh", ["-c", `"${process.execPath}" peer-hang.mjs & echo $!; "${process.execPath}" other.mjs & echo $!; wait`], {
      cwd: dir,
      stdio: ["ignore", "pipe", "ignore"],
    });
    root.stdout.setEncoding("utf8");
    let ids = "";
    await new Promise((resolve) => {
      root.stdout.on("data", (s) => {
        ids += s;
        if (ids.trim().split("\n").length === 2) resolve();
      });
    });
    const [hangPid, otherPid] = ids.trim().split("\n").map(Number);
    const dog = spawn(process.execPath, [script, String(root.pid), "0.5", "50"], { stdio: ["ignore", "ignore", "pipe"] });
    let said = "";
    dog.stderr.setEncoding("utf8");
    await new Promise((resolve) => {
      dog.stderr.on("data", (s) => {
        said += s;
        if (said.includes("\n")) resolve();
      });
    });
    assert.equal(said, `watchdog: killed peer-hang.mjs (process ${hangPid}) after ${said.match(/after (\d+) s/)?.[1]} s: it had not exited (Node 24 can deadlock in process.exit(), nodejs/node#54918)\n`);
    // The other script still runs under the root: end it, and so the root.
    process.kill(otherPid, 0); // throws if it is gone
    process.kill(otherPid, "SIGKILL");
    await once(root, "exit");
    const [code] = await once(dog, "exit");
    assert.equal(code, 0);
    assert.equal(said.trim().split("\n").length, 1, said);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("watchdog.mjs names bad arguments", () => {
  for (const args of [[], ["x", "1"], ["1", "0"], ["1", "1", "-5"]]) {
    const r = spawnSync(process.execPath, [script, ...args], { encoding: "utf8" });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /usage: node scripts\/bench\/watchdog.mjs ROOT SECONDS/);
  }
});
