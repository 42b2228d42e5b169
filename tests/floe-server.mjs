// floe-server for tests: builds cmd/floe-server once per test file, starts
// it on free ports and kills every server it started when the file ends.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * floeServer registers the build (before) and the clean-up (after) hooks of
 * the calling test file and returns start(...args), which runs a server
 * with `--port 0` and the given flags and resolves to its base URL, and
 * tmp, a directory removed with the servers.
 */
export function floeServer(prefix) {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const binary = join(tmp, "floe-server");
  const servers = [];
  before(() => {
    execFileSync("go", ["build", "-o", binary, "./cmd/floe-server"], { cwd: ROOT, stdio: "inherit" });
  });
  after(() => {
    for (const p of servers) p.kill("SIGKILL");
    rmSync(tmp, { recursive: true, force: true });
  });
  function start(...args) {
    // Its settings are the flags given here alone: floe-server reads a
    // FLOE_ variable for each flag, and the test scripts export some of
    // those names for themselves (FLOE_BASE_URL is the page server's
    // there, a provider's base URL to floe-server).
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FLOE_")));
    const p = spawn(binary, ["--port", "0", ...args], { stdio: ["ignore", "pipe", "inherit"], env });
    servers.push(p);
    return new Promise((resolve, reject) => {
      let out = "";
      p.stdout.on("data", (b) => {
        out += b;
        const m = out.match(/listening on (http:\/\/\S+?)\/? /);
        if (m) resolve(m[1]);
      });
      p.on("exit", (code) => reject(new Error(`floe-server exited ${code}: ${out}`)));
    });
  }
  return { start, tmp, servers };
}
