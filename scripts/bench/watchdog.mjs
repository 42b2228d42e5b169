// A watchdog for the side-by-side session (peers.sh): while the process
// ROOT lives, it kills every process descended from it whose script is a
// peer's (a file named peer-*.mjs) once that process has run SECONDS or
// more, and says so on stderr. On Node 24 a process can deadlock in
// process.exit() while V8 still compiles in the background
// (nodejs/node#54918; the shared peer scripts end with process.exit()
// after printing their result), and the session's harness would wait for
// it forever; killed, the process has given its result all the same.
//
//   node scripts/bench/watchdog.mjs ROOT SECONDS [poll-ms]
//
// It reads /proc: elsewhere it only waits for ROOT to end.
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";

const [rootArg, secondsArg, pollArg] = process.argv.slice(2);
const root = Number(rootArg);
const seconds = Number(secondsArg);
const poll = Number(pollArg ?? 5000);
if (!Number.isInteger(root) || root < 1 || !(seconds > 0) || !(poll > 0)) {
  console.error("usage: node scripts/bench/watchdog.mjs ROOT SECONDS [poll-ms] (ROOT a process id, SECONDS and poll-ms positive)");
  process.exit(2);
}

const TICKS = 100; // USER_HZ, the unit of /proc/PID/stat's start time on Linux

// stat returns a process's parent and start time (in ticks since boot), or
// null when it has gone.
function stat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" "); // fields from the third (state) on
    return { ppid: Number(f[1]), start: Number(f[19]) };
  } catch {
    return null;
  }
}

// script returns the script a process runs (its first argument), or "".
function script(pid) {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return argv[1] ?? "";
  } catch {
    return "";
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

function sweep() {
  let pids;
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return; // no /proc
  }
  const procs = new Map();
  for (const pid of pids) {
    const s = stat(pid);
    if (s) procs.set(pid, s);
  }
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  for (const [pid, s] of procs) {
    let p = s.ppid;
    while (p > 1 && p !== root) p = procs.get(p)?.ppid ?? 0;
    if (p !== root) continue;
    const ran = uptime - s.start / TICKS;
    const name = basename(script(pid));
    if (ran < seconds || !/^peer-.*\.mjs$/.test(name)) continue;
    try {
      process.kill(pid, "SIGKILL");
      console.error(`watchdog: killed ${name} (process ${pid}) after ${Math.round(ran)} s: it had not exited (Node 24 can deadlock in process.exit(), nodejs/node#54918)`);
    } catch {}
  }
}

const timer = setInterval(() => {
  if (!alive(root)) {
    clearInterval(timer);
    return;
  }
  sweep();
}, poll);
