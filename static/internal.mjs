// Helpers shared by the modules of the package (not part of the API).

/** An Error whose name is "FloeError", with a code. */
export function floeError(code, message) {
  const e = new Error(message);
  e.name = "FloeError";
  e.code = code;
  return e;
}

export const isObject = (v) => v !== null && typeof v === "object";

/**
 * The async iterable of v: v itself when it is one, a reader's values when
 * v is a ReadableStream that is not one (Safari has no
 * ReadableStream.prototype[Symbol.asyncIterator]; Chromium, Firefox, Node
 * and Deno have it), else null. Like for await over a ReadableStream, an
 * early return() cancels the stream.
 */
export function asyncIterableOf(v) {
  if (!isObject(v)) return null;
  if (typeof v[Symbol.asyncIterator] === "function") return v;
  if (typeof v.getReader !== "function" || typeof ReadableStream !== "function" || !(v instanceof ReadableStream)) return null;
  return {
    async *[Symbol.asyncIterator]() {
      const reader = v.getReader();
      let done = false;
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) {
            done = true;
            return;
          }
          yield r.value;
        }
      } finally {
        if (!done) reader.cancel().catch(() => {});
        reader.releaseLock();
      }
    },
  };
}

/**
 * Checks a tool output's images: an array of data: URLs
 * (data:<mime>;base64,…, PROTOCOL.md). Returns "" when they are, else
 * what is wrong, for the caller's error.
 */
/**
 * The first n UTF-16 units of s, one fewer when the last is the first half
 * of a surrogate pair: a head quoted in an error ends on a whole character
 * (half an emoji was shown as "\ud83d" or U+FFFD).
 */
export function head(s, n) {
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

export function imagesProblem(images) {
  if (!Array.isArray(images)) return `want an array of data: URL strings, got ${describe(images)}`;
  for (let i = 0; i < images.length; i++) {
    const u = images[i];
    if (typeof u !== "string") return `want an array of data: URL strings, got ${describe(u)} at [${i}]`;
    if (!/^data:[^,]*;base64,/i.test(u)) return `want data:<mime>;base64,… URLs, got ${JSON.stringify(u.length > 40 ? head(u, 40) + "…" : u)} at [${i}]`;
  }
  return "";
}

/** Names the type of v for error messages; never throws (a Proxy may). */
export function describe(v) {
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  if (typeof v === "function") return "a function";
  if (typeof v === "number" && !Number.isFinite(v)) return String(v); // NaN, Infinity: "a number" would read as the right type
  if (v === "") return "an empty string"; // "a string" would read as the right type
  if (typeof v !== "object") return `a ${typeof v}`;
  try {
    if (Array.isArray(v)) return "an array";
    const proto = Object.getPrototypeOf(v);
    const name = proto === null || proto === Object.prototype ? "" : proto.constructor?.name;
    if (typeof name === "string" && name !== "") return (/^[AEIOU]/.test(name) ? "an " : "a ") + name;
  } catch {}
  return "an object";
}

export function badArg(name, want, got) {
  return floeError("bad_argument", `${name}: want ${want}, got ${describe(got)}`);
}

// sessionIdArg refuses a session id that is not a string, or that holds
// half a surrogate pair: a string crosses to Go as UTF-8, where that half
// is U+FFFD, so the id named another session ("a\uD800" read and
// deleted the session "a\uFFFD").
export function sessionIdArg(id, name) {
  if (typeof id !== "string") throw badArg(name, "a string", id);
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c < 0xdc00 && i + 1 < id.length && (id.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      i++; // a whole pair
      continue;
    }
    const half = JSON.stringify(id[i]).slice(1, -1);
    const would = JSON.stringify(new TextDecoder().decode(new TextEncoder().encode(id)));
    throw floeError("bad_argument", `${name}: ${JSON.stringify(id)} holds half a surrogate pair (${half} at ${i}), which no session id holds: it would name ${would}`);
  }
}

// The longest duration in milliseconds the hosts' timers take (setTimeout
// fires at once beyond 2^31 − 1 ms, about 24.8 days).
export const MAX_MS = 2 ** 31 - 1;

/**
 * The timers of tool() time limits: the global ones, which a test replaces
 * with a clock of its own rather than faking setTimeout, which the Go
 * runtime's timers use too.
 */
export const toolTimers = { set: (f, ms) => setTimeout(f, ms), clear: (t) => clearTimeout(t) };

/** Checks an integer option in [min, max]. */
export function intArg(v, name, max, min = 0) {
  if (typeof v !== "number") throw badArg(name, "a number", v);
  if (!Number.isInteger(v) || v < min || v > max) {
    throw floeError("bad_argument", `${name}: want an integer from ${min} to ${max}, got ${v}`);
  }
  return v;
}

/** The message of a thrown value (ENGINE.md E-1.3); never throws itself. */
export function errMessage(e) {
  try {
    // An Error of another realm (an iframe, node:vm) is an Error too.
    if (e instanceof Error || Object.prototype.toString.call(e) === "[object Error]") return String(e.message);
  } catch {}
  try {
    return String(e);
  } catch {}
  try {
    return Object.prototype.toString.call(e);
  } catch {
    return "a value that cannot be read";
  }
}

/** obj's own enumerable keys; a Proxy that throws is bad_argument naming name. */
export function ownKeys(obj, name) {
  try {
    return Object.keys(obj);
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
}

/**
 * The values of obj's keys (an iterable of names), each read once: a getter
 * or Proxy trap that throws is bad_argument naming name.key.
 */
export function readKeys(obj, keys, name) {
  const out = {};
  for (const k of keys) {
    try {
      out[k] = obj[k];
    } catch (e) {
      throw floeError("bad_argument", `${name}.${k}: reading it threw: ${errMessage(e)}`);
    }
  }
  return out;
}

/** Array.isArray(v); a revoked Proxy is bad_argument naming name. */
export function isArrayArg(v, name) {
  try {
    return Array.isArray(v);
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
}

/**
 * Refuses an option object's own keys that are not in known (a Set): a
 * misspelt option would otherwise be ignored without a word. The error
 * names the key and, when one is close, the option meant.
 */
export function knownKeys(obj, known, name) {
  for (const k of ownKeys(obj, name)) {
    if (known.has(k)) continue;
    let best = "";
    let bestD = 3; // at most two edits away
    for (const c of known) {
      const d = editDistance(k.toLowerCase(), c.toLowerCase());
      if (d < bestD) [best, bestD] = [c, d];
    }
    throw floeError("bad_argument", `${name}.${k}: unknown option${best ? ` (did you mean ${best}?)` : ""}; known: ${[...known].join(", ")}`);
  }
}

function editDistance(a, b) {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * Set by floe-node.mjs: lockDir(dir, id, create) takes the lock of session
 * id of the {dir} store dir across processes (floe.mjs's locks are one
 * program's) and returns the function that releases it, or, when another
 * process holds it, the end of the session_busy message naming that process;
 * a lock file it cannot make, write or read throws an Error naming it.
 * lockHeld(dir, id) says, before a write, whether this program still holds
 * it: undefined, or, once another process took it, why.
 * lockBeatMs (tests) shortens how often a holder touches its lock file,
 * lockBeaten is called after each touch, and lockNow (tests), in ms, is the
 * holder's clock.
 */
export const nodeHooks = { lockDir: null, lockHeld: null, resolveDir: undefined, lockBeatMs: undefined, lockBeaten: undefined, lockNow: undefined };

/**
 * Checks that v is an object of options: not an array, Map, Date or other
 * built-in collection (class instances and objects of another realm are
 * fine).
 */
export function plainObject(v, name, want = "an object") {
  let tag;
  try {
    tag = isObject(v) && !Array.isArray(v) ? Object.prototype.toString.call(v) : "";
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
  if (tag !== "[object Object]") throw badArg(name, want, v);
  return v;
}

// A delivered steering message is a user text holding its block whole
// (ENGINE.md §11): the markers first and last, white space around them
// aside. steeringText returns the words inside, trimmed, or null when the
// text is not such a block. The white space trimmed is Go's (the
// playground reads the block so), not String.prototype.trim's.
const STEER_OPEN = "[user_steering]";
const STEER_CLOSE = "[/user_steering]";
// Go's unicode.IsSpace: the White_Space property.
const isSpace = (c) => (c >= 9 && c <= 13) || c === 32 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
function trimGo(s) {
  let i = 0;
  let j = s.length;
  while (i < j && isSpace(s.charCodeAt(i))) i++;
  while (j > i && isSpace(s.charCodeAt(j - 1))) j--;
  return s.slice(i, j);
}
export function steeringText(text) {
  const t = trimGo(text);
  if (t.length < STEER_OPEN.length + STEER_CLOSE.length || !t.startsWith(STEER_OPEN) || !t.endsWith(STEER_CLOSE)) return null;
  return trimGo(t.slice(STEER_OPEN.length, t.length - STEER_CLOSE.length));
}

// retryWait is the wait in milliseconds a failed response asks for before
// another request, as Floe's adapters read it (provider/failure.go), from
// its headers (header(key): the trimmed value, "" for none) and the start
// of its body:
// retry-after-ms (OpenAI's), else Retry-After (seconds, or an HTTP date in
// any of its three forms, a past one 0), else the retryDelay of the
// google.rpc.RetryInfo in Gemini's body ("30s", "1.5s"); undefined for
// none.
export function retryWait(header, body) {
  const ms = header("retry-after-ms");
  if (/^\d+$/.test(ms)) return Number(ms);
  const v = header("retry-after");
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // IMF-fixdate, RFC 850 (its two-digit year as Date.parse reads it),
  // asctime (in GMT, as RFC 9110 has it, not the local time Date.parse
  // would take it for).
  const date = /^[A-Za-z]{3,9}, \d\d[ -][A-Za-z]{3}[ -](\d\d|\d{4}) \d\d:\d\d:\d\d GMT$/.test(v) ? v : /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/.test(v) ? `${v} GMT` : "";
  const at = date ? Date.parse(date) : NaN;
  if (!Number.isNaN(at)) return Math.max(at - Date.now(), 0);
  const delay = typeof body === "string" ? /"retryDelay"\s*:\s*"(\d+(\.\d{1,9})?)s"/.exec(body) : null;
  return delay ? Math.ceil(Number(delay[1]) * 1000) : undefined;
}
