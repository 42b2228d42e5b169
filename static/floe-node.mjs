// The Node entry of the package (its "node" export condition): floe.mjs
// with loading from files. The default module is floe-node.wasm, the build
// with directory stores ({dir}), from the @floehq/floe-node package when it
// is installed; floe.wasm otherwise. A bundle made for Node (esbuild
// --platform=node) that did not copy the wasm files finds them through the
// installed packages.
import { readFile } from "node:fs/promises";
import nodeFS from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import floe, { load as loadFetching } from "./floe.mjs";
import { knownKeys, nodeHooks, plainObject, readKeys } from "./internal.mjs";

export * from "./floe.mjs";

const isObject = (v) => v !== null && typeof v === "object";

// This module's URL; empty in a CommonJS bundle (esbuild --platform=node
// without --format=esm), where names resolve from the working directory.
const here = import.meta.url || pathToFileURL(process.cwd() + "/").href;

// import.meta.resolve is unflagged from Node 20.6 only; require.resolve
// reads the same "exports" (the wasm entries have no conditions).
function resolve(name) {
  if (import.meta.url && typeof import.meta.resolve === "function") return new URL(import.meta.resolve(name));
  return pathToFileURL(createRequire(here).resolve(name));
}

let loaded = false;
let loading = null; // the first load, while it loads

/** Loads floe-node.wasm (or opts.wasm: a path, a file: URL, bytes, a Module, …) once. */
export async function load(opts = {}) {
  // Loaded: the same Floe, whatever file a later call names; floe.mjs's
  // load still checks the argument.
  if (loaded) return loadFetching(opts);
  // Go's file system calls (the {dir} store) go through Node's fs, as with
  // the toolchain's wasm_exec_node.js; wasm_exec.js installs only a stub.
  if (globalThis.fs?.constants?.O_WRONLY === -1) globalThis.fs = nodeFS;
  if (!isObject(opts)) return loadFetching(opts); // names the error
  // A call made while the first loads waits for it and gets the same
  // Floe, as one made once it has loaded does: it read its own file
  // meanwhile, and rejected when that file was missing.
  if (loading) return loading.then(() => loadFetching(opts));
  loading = loadReading(opts);
  try {
    return await loading;
  } finally {
    loading = null;
  }
}

const LOAD_KEYS = new Set(["wasm"]);

async function loadReading(opts) {
  // A timer holds the event loop open until Floe is ready. V8 compiles
  // the module on its worker threads and hands it back through a task of
  // the main thread's that keeps no loop alive: a script with nothing else
  // pending (a CLI, a test, a benchmark) would see its loop end its turn,
  // and Node then waits for every worker task of V8's before it runs that
  // one — and, once the caller's first run has started inside it, again
  // for all the optimizing compiles the run queued: 42–90 ms of a first
  // W1 task here (README "Where Floe stands"). With the loop held open the
  // module arrives as any event does, and those compiles run beside the
  // run.
  const hold = setInterval(() => {}, 2 ** 30);
  try {
    // Read once, as floe.mjs reads it: a getter that throws is named (its
    // error escaped, and the option was read again below).
    plainObject(opts, "load: opts");
    knownKeys(opts, LOAD_KEYS, "load: opts");
    let { wasm } = readKeys(opts, ["wasm"], "load: opts");
    if (wasm === undefined) wasm = await readFirst(defaults());
    else if (typeof wasm === "string" || wasm instanceof URL) {
      const url = typeof wasm === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(wasm) ? new URL(wasm, here) : new URL(wasm);
      if (url.protocol === "file:") wasm = await readFirst([url]);
    }
    const f = await loadFetching({ wasm }); // opts holds no other key (knownKeys)
    loaded = true;
    return f;
  } finally {
    clearInterval(hold);
  }
}

// The candidates, in order: floe-node.wasm beside this file (a checkout),
// the @floehq/floe-node package's, floe.wasm beside this file, the
// installed @floehq/floe's (for a bundle that did not copy it).
function defaults() {
  const urls = import.meta.url ? [new URL("./floe-node.wasm", import.meta.url)] : [];
  const resolved = (name) => {
    try {
      urls.push(resolve(name));
    } catch {}
  };
  resolved("@floehq/floe-node/floe-node.wasm");
  if (import.meta.url) urls.push(new URL("./floe.wasm", import.meta.url));
  resolved("@floehq/floe/floe.wasm");
  return urls;
}

async function readFirst(urls) {
  const tried = [];
  for (const url of urls) {
    try {
      return await readFile(url);
    } catch (e) {
      tried.push(`${fileURLToPath(url)} (${e.code ?? e.message})`);
    }
  }
  const e = new Error(`load: cannot read floe.wasm: tried ${tried.join(", ")}; pass load({ wasm }) a path or the bytes`);
  e.name = "FloeError";
  e.code = "bad_wasm";
  throw e;
}

export default { ...floe, load };

// One writer per session of a {dir} store across processes: a run (and a
// resume, a delete) holds the file <dir>/.<id>.lock, made with O_EXCL and
// naming its process; a second process's run is refused with session_busy
// instead of interleaving its records with the first's in one Trace. A
// process that ended without releasing it (killed) leaves a stale file:
// on the same host, a pid no longer running (or this process's own pid
// with another token: a container's pid 1 restarted) frees it. A holder
// touches its file every `beat` seconds while it holds it, so one whose
// pid cannot tell (another host: a shared directory, a container made
// anew; a pid another process took) is judged gone once its file has
// gone ten beats untouched; a file without `beat` (an older build) is
// never judged so, and the error names the file to delete. A file that
// cannot be made, written or read (a read-only directory, a full disk, no
// permission, a directory in its place) throws an Error naming it and the
// system's error: the session is not run, resumed or deleted unlocked. A
// resume's or a delete's in a directory that does not exist is no lock
// (no session is stored there: they say so).
const TOKEN = Math.random().toString(36).slice(2) + Date.now().toString(36);
// The host's name, read when a lock is first taken: Deno asks for a
// permission (sys) to read it, which a program without {dir} stores should
// not be asked for when it imports Floe.
let host;
const HOST = () => {
  if (host === undefined) {
    try {
      host = hostname();
    } catch {
      host = "";
    }
  }
  return host;
};

nodeHooks.resolveDir = (dir) => resolvePath(dir);

nodeHooks.lockDir = (dir, id, create) => {
  const path = join(dir, `.${id}.lock`);
  const beatMs = nodeHooks.lockBeatMs ?? 30_000;
  const own = JSON.stringify({ pid: process.pid, host: HOST(), token: TOKEN, beat: beatMs / 1000 }) + "\n";
  for (let tries = 0; ; tries++) {
    try {
      if (create) nodeFS.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {}
    let fd;
    try {
      fd = nodeFS.openSync(path, "wx", 0o600);
    } catch (e) {
      if (e?.code === "ENOENT" && !create) return () => {};
      if (e?.code !== "EEXIST") throw lockError(path, "made", e);
    }
    if (fd !== undefined) {
      let failed;
      try {
        nodeFS.writeSync(fd, own);
      } catch (e) {
        failed = e;
      }
      try {
        nodeFS.closeSync(fd);
      } catch {}
      if (failed) {
        // A full disk: a file left empty would name no holder and refuse
        // every later run.
        try {
          nodeFS.unlinkSync(path);
        } catch {}
        throw lockError(path, "written", failed);
      }
      const held = { path, own, beatMs, confirmed: lockNow(), wall: lockWall(), lost: undefined };
      heldLocks.set(path, held);
      const beat = setInterval(() => {
        if (!held.lost) confirm(held);
        nodeHooks.lockBeaten?.();
      }, beatMs);
      beat.unref?.();
      // The release returns, when another process took the lock, the end
      // of session_busy's message saying so (undefined otherwise).
      return () => {
        clearInterval(beat);
        if (heldLocks.get(path) === held) heldLocks.delete(path);
        if (!held.lost) {
          let text;
          try {
            text = nodeFS.readFileSync(path, "utf8");
          } catch (e) {
            if (e?.code !== "ENOENT") return undefined;
          }
          if (text === own) {
            try {
              nodeFS.unlinkSync(path);
            } catch {}
            return undefined;
          }
          lose(held, text);
        }
        return ErrLockLost + held.lost;
      };
    }
    let holder = {};
    let text;
    try {
      text = nodeFS.readFileSync(path, "utf8");
      holder = JSON.parse(text);
    } catch (e) {
      if (e?.code === "ENOENT" && tries < 3) continue; // released meanwhile
      // Not a holder's file to judge (no permission, a directory): it was
      // reported as another process's.
      if (text === undefined && e?.code !== "ENOENT") throw lockError(path, "read", e);
    }
    if (tries < 3 && (stale(holder) || silent(holder, path))) {
      takeOver(path, text);
      continue;
    }
    const who = Number.isSafeInteger(holder?.pid) ? `pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ""}` : "a process";
    const gone = beats(holder) ? `it is judged gone once its file goes ${holder.beat * STALE_BEATS} s untouched` : "delete it if that process is gone";
    return `another process (${who}) is running it (its lock file ${path}: ${gone})`;
  }
};

// lockError is the Error of a lock file that cannot be made, written or
// read: dirLock (floe.mjs) names the call and the session before it.
const lockError = (path, what, e) => new Error(`its lock file ${path} cannot be ${what}: ${e?.message ?? e}`);

// The locks this program holds, by file, each asked before a write of its
// session (the port's lockHeld, from Go's trace.FileStore) whether it
// still holds it: a holder stopped (Ctrl-Z, a debugger) or blocked for
// longer than ten beats is taken for gone, and another process takes its
// lock; resumed, it writes before its beat runs again. A write finds its
// beat late (either clock: the monotonic one stands still while the
// machine sleeps, and other hosts' do not) and reads the file first; once
// lost, the session's writes are refused and its next run says why.
const heldLocks = new Map();
const ErrLockLost = "another process took its lock"; // trace.ErrLockLost's text
const lockNow = () => nodeHooks.lockNow?.() ?? performance.now();
const lockWall = () => nodeHooks.lockNow?.() ?? Date.now();

nodeHooks.lockHeld = (dir, id) => {
  const held = heldLocks.get(join(dir, `.${id}.lock`));
  if (!held) return undefined;
  if (!held.lost) {
    const late = 2 * held.beatMs;
    if (lockNow() - held.confirmed > late || lockWall() - held.wall > late) confirm(held);
  }
  return held.lost;
};

// confirm reads the lock file: still this holder's, it is touched and
// confirmed; another holder's, or gone, the lock is lost. Any other
// failure to read it judges nothing.
function confirm(held) {
  let text;
  try {
    text = nodeFS.readFileSync(held.path, "utf8");
  } catch (e) {
    if (e?.code !== "ENOENT") return;
  }
  if (text !== held.own) return lose(held, text);
  try {
    nodeFS.utimesSync(held.path, new Date(), new Date());
  } catch {}
  held.confirmed = lockNow();
  held.wall = lockWall();
}

// lose records that another process took the lock; text is what its file
// now holds (undefined: none). held.lost is the message after
// ErrLockLost, as Go's trace package words it.
function lose(held, text) {
  let holder;
  try {
    holder = JSON.parse(text);
  } catch {}
  const who = Number.isSafeInteger(holder?.pid)
    ? `pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ""} holds its lock file ${held.path}`
    : `its lock file ${held.path} is gone: removed, or released by the process that took it`;
  held.lost = ` (${who}): this process had not touched it for longer than its beats allow (stopped or blocked) and was taken for gone; the session's records from then on are not written here: resume the session to continue from its Trace`;
}

// takeOver removes the stale lock file that held text. Another process
// may have taken it over since it was read (two started at once after a
// crash), its own file now in its place: removing that let both run the
// session. The file is moved aside, atomically, and put back unless it
// is the one judged stale.
function takeOver(path, text) {
  const aside = `${path}.${TOKEN}`;
  try {
    nodeFS.renameSync(path, aside);
  } catch {
    return;
  }
  let now;
  try {
    now = nodeFS.readFileSync(aside, "utf8");
  } catch {}
  if (now !== text) {
    try {
      nodeFS.linkSync(aside, path); // not over a file made meanwhile
    } catch {}
  }
  try {
    nodeFS.unlinkSync(aside);
  } catch {}
}

// silent: the holder said it touches its file every `beat` seconds, and
// the file has gone STALE_BEATS beats untouched.
const STALE_BEATS = 10;
const beats = (holder) => typeof holder?.beat === "number" && holder.beat > 0 && holder.beat <= 3600;
function silent(holder, path) {
  if (!beats(holder)) return false;
  try {
    return Date.now() - nodeFS.statSync(path).mtimeMs > holder.beat * STALE_BEATS * 1000;
  } catch {
    return false;
  }
}

function stale(holder) {
  const pid = holder?.pid;
  if (!Number.isSafeInteger(pid) || pid <= 0 || holder.host !== HOST()) return false;
  if (pid === process.pid) return holder.token !== TOKEN;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return e?.code === "ESRCH";
  }
}
