// Tools with schemas: tool() makes a tool from a JSON Schema and an execute
// function; toolEnvironment() turns a session's tools into the environment
// the engine calls, building the envelopes, the fragment discipline and the
// complete output; subagentTool() runs a child session as a tool.
import { compileSchema } from "./schema.mjs";
import { msg } from "./msg.mjs";
import { MAX_MS, asyncIterableOf, toolTimers, badArg, describe, errMessage, floeError, imagesProblem, intArg, isArrayArg, isObject, knownKeys, plainObject, readKeys } from "./internal.mjs";

const TOOL_KEYS = new Set(["name", "description", "parameters", "execute", "timeoutMs", "maxOutputLength"]);
const SUBAGENT_TOOL_KEYS = new Set(["name", "description", "create", "timeoutMs", "maxOutputLength"]);

const TOOL = Symbol.for("floe.tool");
// A tool()'s time limit and output cap: { timeoutMs, cap }, 0 for none.
const LIMITS = Symbol.for("floe.toolLimits");

// The longest output cap tool() takes, in UTF-16 code units (no string is
// longer in any engine).
const MAX_OUTPUT = 2 ** 31 - 1;

const NO_PARAMETERS = Object.freeze({ type: "object", properties: Object.freeze({}) });

/**
 * tool({ name, description, parameters, execute, timeoutMs, maxOutputLength })
 * → a tool for createSession({ tools }). parameters is a JSON Schema or a
 * Standard Schema with Standard JSON Schema (zod, Valibot, ArkType)
 * (default: an object with no properties); execute(args, { signal,
 * toolCall, emit, approve }) gets the parsed, validated arguments.
 * timeoutMs bounds a call's time (its signal aborts, the call fails);
 * maxOutputLength its output's length (the head is kept, a note says what
 * was cut); absent or 0, none.
 */
export function tool(spec) {
  plainObject(spec, "tool: spec");
  knownKeys(spec, TOOL_KEYS, "tool: spec");
  const { name, description = "", parameters = NO_PARAMETERS, execute, timeoutMs, maxOutputLength } = readKeys(spec, TOOL_KEYS, "tool: spec");
  if (typeof name !== "string" || name === "") throw badArg("tool: name", "a non-empty string", name);
  if (typeof description !== "string") throw badArg(`tool ${name}: description`, "a string", description);
  if (typeof execute !== "function") throw badArg(`tool ${name}: execute`, "a function", execute);
  const limits = {
    timeoutMs: timeoutMs == null ? 0 : intArg(timeoutMs, `tool ${name}: timeoutMs`, MAX_MS),
    cap: maxOutputLength == null ? 0 : intArg(maxOutputLength, `tool ${name}: maxOutputLength`, MAX_OUTPUT),
  };
  const standard = standardProps(parameters, `tool ${name}: parameters`);
  if (standard) {
    const jsonSchema = standardJSONSchema(standard, `tool ${name}: parameters`);
    return Object.freeze({ name, description, parameters: jsonSchema, execute, [TOOL]: standardCheck(standard), [LIMITS]: limits });
  }
  if (!isObject(parameters) || Array.isArray(parameters)) throw badArg(`tool ${name}: parameters`, "a JSON Schema object or a Standard Schema (zod, Valibot, ArkType)", parameters);
  let validate;
  try {
    validate = compileSchema(parameters);
  } catch (e) {
    throw floeError("bad_argument", `tool ${name}: ${errMessage(e)}`);
  }
  const top = parameters.type;
  if (top !== undefined && top !== "object" && !(Array.isArray(top) && top.includes("object"))) {
    // A model's arguments are a JSON object: no call could pass.
    throw floeError("bad_argument", `tool ${name}: parameters.type: want "object" (a tool's arguments are an object), got ${JSON.stringify(top)}`);
  }
  return Object.freeze({ name, description, parameters, execute, [TOOL]: validate, [LIMITS]: limits });
}

// The JSON Schema draft a Standard Schema is asked for: the one the AI
// SDK asks for, which OpenAI's and Anthropic's tools take, and whose
// keywords (items as an array, definitions) Floe's own validator knows.
const STANDARD_TARGET = "draft-07";

/**
 * The Standard Schema properties (schema["~standard"]) of a tool's
 * parameters, or null when they are not one (a JSON Schema). A zod or
 * Valibot schema is an object, an ArkType one a function.
 * Throws bad_argument for a "~standard" that is not version 1 with validate().
 */
function standardProps(parameters, at) {
  if (parameters === null || (typeof parameters !== "object" && typeof parameters !== "function")) return null;
  let props, version, validate;
  try {
    if (!("~standard" in parameters)) return null;
    props = parameters["~standard"];
    version = isObject(props) ? props.version : undefined;
    validate = isObject(props) ? props.validate : undefined;
  } catch (e) {
    throw floeError("bad_argument", `${at}: reading its ~standard threw: ${errMessage(e)}`);
  }
  if (!isObject(props)) throw badArg(`${at}["~standard"]`, "a Standard Schema's properties (version 1, with validate())", props);
  if (version !== 1) throw floeError("bad_argument", `${at}["~standard"].version: want 1 (Standard Schema v1), got ${typeof version === "number" ? version : describe(version)}`);
  if (typeof validate !== "function") throw badArg(`${at}["~standard"].validate`, "a function (Standard Schema v1)", validate);
  return props;
}

/**
 * The JSON Schema the model gets for a Standard Schema: its Standard JSON
 * Schema interface's input schema (what a call must send; defaults and
 * transforms apply after), as plain JSON data, an object schema.
 * Throws bad_argument naming what to do when the schema has none.
 */
function standardJSONSchema(props, at) {
  let vendor, convert, schema;
  try {
    vendor = props.vendor;
    const js = props.jsonSchema;
    convert = isObject(js) ? js.input : undefined;
  } catch (e) {
    throw floeError("bad_argument", `${at}: reading its ~standard threw: ${errMessage(e)}`);
  }
  const lib = typeof vendor === "string" && vendor !== "" ? `this ${vendor} schema` : "this Standard Schema";
  if (typeof convert !== "function") {
    const how =
      vendor === "valibot"
        ? "wrap it in toStandardJsonSchema() from @valibot/to-json-schema, or pass a JSON Schema object"
        : vendor === "zod"
          ? "zod 4.2 and later give it; or pass a JSON Schema object (z.toJSONSchema(schema))"
          : "pass a JSON Schema object (your library's converter's output)";
    throw floeError("bad_argument", `${at}: ${lib} has no Standard JSON Schema interface (~standard.jsonSchema), from which the model's JSON Schema comes: ${how}`);
  }
  try {
    schema = convert.call(props.jsonSchema, { target: STANDARD_TARGET });
  } catch (e) {
    throw floeError("bad_argument", `${at}: ${lib}'s JSON Schema (~standard.jsonSchema.input) threw: ${errMessage(e)}`);
  }
  let text;
  try {
    text = JSON.stringify(schema);
  } catch (e) {
    throw floeError("bad_argument", `${at}: ${lib}'s JSON Schema cannot be encoded as JSON: ${errMessage(e)}`);
  }
  schema = typeof text === "string" ? JSON.parse(text) : undefined;
  if (!isObject(schema) || Array.isArray(schema)) throw badArg(`${at}: ${lib}'s JSON Schema`, "an object", schema);
  const top = schema.type;
  if (top !== "object" && !(Array.isArray(top) && top.includes("object"))) {
    // Providers take an object schema only: a model's arguments are one.
    throw floeError("bad_argument", `${at}: ${lib}'s JSON Schema has type ${top === undefined ? "none" : JSON.stringify(top)}: want "object" (a tool's arguments are an object: z.object(), v.object(), type({ … }))`);
  }
  return schema;
}

// standardCheck makes a Standard Schema tool's argument check: it returns
// a Promise of { value } (the schema's output) or { error } (the text of
// the failed output), or throws or rejects when validate() does.
const standardCheck = (props) => {
  const check = async (args, name) => {
    const r = await props.validate(args);
    if (!isObject(r)) throw new TypeError(`its schema's validate() returned ${describe(r)}, want { value } or { issues }`);
    const issues = r.issues;
    if (issues == null) return { value: r.value };
    const list = Array.from(issues).slice(0, MAX_ISSUES).map(issueText);
    if (list.length === 0) list.push("$: invalid (the schema gave no issue)");
    return { error: `[invalid arguments] ${name}: ${list.join("; ")}` };
  };
  check.standard = true;
  return check;
};

// At most this many issues are named, as the JSON Schema validator's problems.
const MAX_ISSUES = 8;

// issueText is a Standard Schema issue as the JSON Schema validator words
// a problem: "$.a.b[0]: message". A path's segment is a key or { key }.
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function issueText(issue) {
  let path = "$";
  const segs = isObject(issue) && issue.path != null ? Array.from(issue.path) : [];
  for (const seg of segs) {
    const k = isObject(seg) ? seg.key : seg;
    if (typeof k === "number") path += `[${k}]`;
    else if (typeof k === "string") path += IDENT.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    else path += `[${String(k)}]`;
  }
  let message = isObject(issue) ? issue.message : undefined;
  if (typeof message !== "string" || message === "") message = "invalid";
  // A message may quote the value (ArkType's "(was …)"): a long one is
  // named by its head, never cut in half a surrogate pair.
  if (message.length > MAX_MESSAGE) {
    let n = MAX_MESSAGE - 1;
    const c = message.charCodeAt(n - 1);
    if (c >= 0xd800 && c <= 0xdbff) n--;
    message = message.slice(0, n) + "…";
  }
  return `${path}: ${message}`;
}

// The longest issue message named, in UTF-16 code units.
const MAX_MESSAGE = 300;

/** Reports whether t was made by tool() (or subagentTool()). */
export const isTool = (t) => isObject(t) && typeof t[TOOL] === "function";

/**
 * Splits a session's tools option into the ToolDefinition list and, when
 * any entry is a tool(), an environment running them; calls of other names
 * go to the user's environment. Without one, a call of a name no tool()
 * runs gets a failed output that says so.
 * Throws bad_argument for duplicate names.
 */
export function deriveTools(tools, environment, fn, read = (o, k) => o[k]) {
  if (tools == null) return { tools, environment: environment ?? noEnvironment };
  let list;
  try {
    list = Array.isArray(tools) ? Array.from(tools) : null;
  } catch (e) {
    throw floeError("bad_argument", `${fn}: tools: reading it threw: ${errMessage(e)}`);
  }
  if (!list) throw badArg(`${fn}: tools`, "an array of tool() or ToolDefinition", tools);
  const byName = new Map();
  const defs = list.map((t, i) => {
    const at = `${fn}: tools[${i}]`;
    if (!isObject(t) || isArrayArg(t, at)) throw badArg(at, "a tool() or a ToolDefinition", t);
    const name = read(t, "name", at);
    if (typeof name !== "string" || name === "") throw badArg(`${at}.name`, "a tool's name (a non-empty string)", name);
    if (byName.has(name)) throw floeError("bad_argument", `${at}: a second tool named ${JSON.stringify(name)}`);
    const own = typeof read(t, TOOL, at) === "function";
    byName.set(name, own ? t : null);
    if (!own) {
      // A plain definition goes to the model as it is: what it could not
      // describe is refused here, not by the provider.
      const description = read(t, "description", at);
      if (description !== undefined && typeof description !== "string") throw badArg(`${at}.description`, "a string", description);
      const parameters = read(t, "parameters", at);
      // A Standard Schema gives the model its JSON Schema; checking the
      // arguments stays the environment's, as with a JSON Schema.
      const standard = standardProps(parameters, `${at}.parameters`);
      if (standard) return { name, description, parameters: standardJSONSchema(standard, `${at}.parameters`) };
      if (parameters !== undefined && (!isObject(parameters) || isArrayArg(parameters, `${at}.parameters`))) throw badArg(`${at}.parameters`, "a JSON Schema object or a Standard Schema (zod, Valibot, ArkType)", parameters);
      return t;
    }
    const d = { name: t.name, description: t.description };
    if (t.parameters !== undefined) d.parameters = t.parameters;
    return d;
  });
  if (![...byName.values()].some((t) => t !== null)) return { tools: defs, environment: environment ?? noEnvironment };
  const fallback = environment;
  const executeTool = fallback == null ? undefined : isObject(fallback) ? read(fallback, "executeTool", `${fn}: environment.executeTool`) : undefined;
  if (fallback != null && typeof executeTool !== "function") throw badArg(`${fn}: environment`, "an object with executeTool()", fallback);
  return {
    tools: defs,
    environment: {
      executeTool(req) {
        const t = byName.get(req.toolCall.payload.name);
        if (t) return runTool(t, req);
        if (fallback) return executeTool.call(fallback, req);
        return unknownTool(req.toolCall);
      },
    },
  };
}

// noEnvironment runs the calls of a session with neither a tool() nor an
// environment: each names the tool that nothing runs, as deriveTools's
// environment does for a name it has no tool() of.
const noEnvironment = Object.freeze({ executeTool: (req) => unknownTool(req.toolCall) });

async function* unknownTool(toolCall) {
  const { name, tool_call_id } = toolCall.payload;
  yield msg.toolOutput(tool_call_id, `[unknown tool] there is no tool named ${JSON.stringify(name)}`, "failed");
}

/**
 * The argument check of a tool call: the parsed arguments, or the text of
 * the failed output naming what was wrong. Empty arguments are {}.
 */
export function checkArguments(t, raw) {
  let args;
  try {
    args = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch (e) {
    return { error: `[invalid arguments] ${t.name}: the arguments are not JSON (${errMessage(e)})` };
  }
  // Every provider's function calling sends an object, whatever the schema
  // says: one without a top-level type would let [1], 5 or null through.
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return { error: `[invalid arguments] ${t.name}: $: want object, got ${args === null ? "null" : Array.isArray(args) ? "an array" : typeof args}` };
  }
  if (nesting(raw) > MAX_ARGUMENT_DEPTH) {
    // Deeper, checking them (const, enum, uniqueItems) could overflow the stack.
    return { error: `[invalid arguments] ${t.name}: the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels` };
  }
  // A Standard Schema's validate() runs with the call (runTool).
  if (t[TOOL].standard) return { args };
  let errs;
  try {
    errs = t[TOOL](args);
  } catch (e) {
    errs = [`checking them failed (${errMessage(e)})`];
  }
  if (errs.length) return { error: `[invalid arguments] ${t.name}: ${errs.join("; ")}` };
  return { args };
}

// How deep a tool call's arguments may nest their arrays and objects.
const MAX_ARGUMENT_DEPTH = 1000;

// nesting is how deep a JSON text nests its arrays and objects.
function nesting(json) {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // \: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return max;
}

// runTool runs one call of a tool(): it yields the tool's messages.
async function* runTool(t, { toolCall, approve, signal }) {
  const id = toolCall.payload.tool_call_id;
  const checked = checkArguments(t, toolCall.payload.arguments);
  if (checked.error !== undefined) {
    yield msg.toolOutput(id, checked.error, "failed");
    return;
  }
  const { timeoutMs, cap } = t[LIMITS] ?? NO_LIMITS;
  const queue = [];
  let wake = null;
  const notify = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  let started = false;
  let ended = false;
  const fragments = [];
  // With a cap, the output kept is its first cap characters: kept counts
  // them, total all the tool gave; once a character is left out, so is
  // everything after it.
  let kept = 0;
  let total = 0;
  const high = (c) => c >= 0xd800 && c <= 0xdbff; // the first half of a surrogate pair
  const head = (s) => {
    total += s.length;
    // A fragment that ends at the cap with the first half of a pair is cut
    // before it, as a longer one is: its second half would be left out.
    if (!cap || (kept === total - s.length && (total < cap || (total === cap && !high(s.charCodeAt(s.length - 1)))))) {
      kept += s.length;
      return s;
    }
    if (kept < total - s.length) return ""; // already cut
    let n = cap - kept;
    // Never half a surrogate pair: the output stays well-formed text.
    if (n > 0 && high(s.charCodeAt(n - 1))) n--;
    kept += n;
    return s.slice(0, n);
  };
  const fragment = (f, what) => {
    if (typeof f !== "string") throw new TypeError(`tool ${t.name}: ${what} ${describe(f)}, want a string (an output fragment)`);
    if (!started) {
      started = true;
      queue.push(msg.partialToolOutput("start", "", id));
    }
    f = head(f);
    if (f === "") return;
    fragments.push(f);
    queue.push(msg.partialToolOutput("delta", f, id));
    notify();
  };
  const emit = (x) => {
    if (ended) throw floeError("closed", `tool ${t.name}: emit after the tool ended`);
    if (typeof x === "string") return fragment(x, "emitted");
    if (isObject(x) && Array.isArray(x.origin) && x.origin.length > 0 && isObject(x.payload)) {
      queue.push(x);
      notify();
      return;
    }
    throw new TypeError(`tool ${t.name}: emit: want a string (an output fragment) or a message with origin (forwarded), got ${describe(x)}`);
  };
  let result = null; // {output, images, stopReason?} once execute finished
  let failed = false; // execute threw or rejected, or ran out of time: with failure, which may be any value (null, 0, "")
  let failure;
  // With a time limit the tool gets a signal of its own, aborted by the
  // run's abort or at the limit; the run's abort stops the clock (it, not
  // the limit, ends the call).
  let toolSignal = signal;
  let timer;
  let unlink = () => {};
  if (timeoutMs) {
    const ac = new AbortController();
    toolSignal = ac.signal;
    const onAbort = () => {
      toolTimers.clear(timer);
      ac.abort(signal.reason);
    };
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      unlink = () => signal.removeEventListener("abort", onAbort);
      timer = toolTimers.set(() => {
        const limit = `timed out after ${duration(timeoutMs)}`;
        ac.abort(new DOMException(`tool ${t.name}: ${limit}`, "TimeoutError"));
        // The call ends now, whether or not the tool heeds its signal.
        if (!result && !failed) {
          failed = true;
          failure = new Error(limit);
          notify();
        }
      }, timeoutMs);
    }
  }
  const done = (async () => {
    let args = checked.args;
    if (t[TOOL].standard) {
      // A Standard Schema's own validate(): its output (defaults,
      // transforms) is what execute gets. It runs inside the call, so
      // that the time limit and the run's abort bound an async one, and
      // one that throws is a tool error.
      const v = await untilAbort(t[TOOL](args, t.name), toolSignal);
      if (v === ABORTED) return { output: "" }; // the run's abort (or the time limit, which has ended the call)
      if (v.error !== undefined) return { invalid: v.error };
      args = v.value;
    }
    const r = await t.execute(args, { signal: toolSignal, toolCall, emit, approve });
    const fragments = asyncIterableOf(r);
    if (fragments) {
      for await (const f of fragments) {
        if (toolSignal.aborted) break; // cut at the abort or the time limit
        fragment(f, "yielded");
      }
      return { output: "" };
    }
    return outputOf(t, r);
  })().then(
    (r) => {
      // A tool that ends after the run's abort, however it ends, was cut
      // short: its output says so and is "aborted" (ENGINE.md E-6.8), so
      // that the model does not take what came for the whole result.
      if (!failed) result = signal.aborted ? { ...(r.invalid === undefined ? r : { output: "" }), stopReason: "aborted" } : r;
      notify();
    },
    (e) => {
      if (failed) return; // out of time already
      if (signal.aborted) result = { output: "", stopReason: "aborted" };
      else {
        failed = true;
        failure = e === undefined ? new Error("undefined") : e;
      }
      notify();
    },
  );
  done.catch(() => {});
  try {
    for (;;) {
      while (queue.length) yield queue.shift();
      if (result || failed) break;
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    ended = true;
    toolTimers.clear(timer);
    unlink();
  }
  const cutNote = () => (kept ? "\n" : "") + `[output cut: ${total - kept} of ${total} characters left out]`;
  // A failure leaves an open fragment open: the engine closes it as
  // ENGINE.md E-6.5 says (a delta of "\n[tool error] <message>", a stop
  // "failed"), so that the deltas join to the complete output (P-7).
  if (failed) {
    if (kept < total) yield msg.partialToolOutput("delta", cutNote(), id);
    throw failure; // the engine makes "[tool error] <message>" of it
  }
  if (result.invalid !== undefined) {
    yield msg.toolOutput(id, result.invalid, "failed");
    return;
  }
  const { images, stopReason } = result;
  let output = head(result.output);
  if (kept < total) output += cutNote();
  if (stopReason === "aborted") output += (fragments.length || output ? "\n" : "") + "[interrupted: tool aborted by user]";
  if (started) {
    // The returned value (and the images, which one delta carries whole)
    // is the last delta: the deltas join to the complete output (P-7).
    if (output !== "" || images?.length) {
      const d = msg.partialToolOutput("delta", output, id);
      if (images?.length) d.payload = { type: d.payload.type, role: d.payload.role, event_type: "delta", output, images, tool_call_id: id };
      yield d;
    }
    yield msg.partialToolOutput("stop", "", id, stopReason);
  }
  yield msg.toolOutput(id, fragments.join("") + output, stopReason ?? "completed", images);
}

const NO_LIMITS = Object.freeze({ timeoutMs: 0, cap: 0 });

// untilAbort is p, or ABORTED once signal aborts first: an async
// validate() has no signal to heed, and is not waited for after it.
const ABORTED = Symbol("aborted");
function untilAbort(p, signal) {
  if (signal.aborted) return Promise.resolve(ABORTED);
  let off;
  const stop = new Promise((resolve) => {
    const f = () => resolve(ABORTED);
    signal.addEventListener("abort", f, { once: true });
    off = () => signal.removeEventListener("abort", f);
  });
  return Promise.race([p, stop]).finally(off);
}

// duration names a time limit as the errors say it: "120 s", "1.5 s", "250 ms".
const duration = (ms) => (ms < 1000 ? `${ms} ms` : `${ms / 1000} s`);

// outputOf converts what execute returned: a string, {output, images?},
// undefined (""), or any other value as JSON.
function outputOf(t, r) {
  if (typeof r === "string") return { output: r };
  if (r === undefined) return { output: "" };
  if (isObject(r) && !Array.isArray(r) && typeof r.output === "string" && Object.keys(r).every((k) => k === "output" || k === "images")) {
    const bad = r.images === undefined ? "" : imagesProblem(r.images);
    if (bad) throw new TypeError(`tool ${t.name}: returned images: ${bad}`);
    return { output: r.output, images: r.images };
  }
  let s;
  try {
    s = JSON.stringify(r);
  } catch (e) {
    throw new TypeError(`tool ${t.name}: returned a value JSON cannot encode: ${errMessage(e)}`);
  }
  if (typeof s !== "string") throw new TypeError(`tool ${t.name}: returned ${describe(r)}, want a string, an object or an async iterable`);
  return { output: s };
}

const SUBAGENT_PARAMETERS = Object.freeze({
  type: "object",
  properties: Object.freeze({ prompt: Object.freeze({ type: "string", minLength: 1, description: "The complete task for the subagent: it sees nothing else of this conversation." }) }),
  required: Object.freeze(["prompt"]),
  additionalProperties: false,
});

/**
 * subagentTool(createSubagent, { name, description, create, timeoutMs,
 * maxOutputLength }) → a tool that runs a child session per call (ENGINE.md
 * §15): the prompt argument in, the child's final assistant text out; the
 * child's stream is forwarded with origin and its tool calls go to the
 * run's approver with the origin chain. create() (may be async) returns
 * the child's session options ({ llm, tools, system, ... }).
 * maxOutputLength caps the final text as tool()'s does. At timeoutMs the
 * child's run is aborted and the call waits for its stream's end (its
 * abort, within the child's abort grace even when its model ignores its
 * signal), so that every request of the child forwarded has its end; it
 * then fails "timed out after …".
 */
export function subagentTool(createSubagent, spec) {
  plainObject(spec, "subagentTool: spec");
  knownKeys(spec, SUBAGENT_TOOL_KEYS, "subagentTool: spec");
  const { name = "run_subagent", description = "Runs a subagent on a self-contained task and returns its final answer.", create, timeoutMs, maxOutputLength } = readKeys(spec, SUBAGENT_TOOL_KEYS, "subagentTool: spec");
  if (typeof create !== "function") throw badArg("subagentTool: create", "a function returning session options", create);
  const limit = timeoutMs == null ? 0 : intArg(timeoutMs, `tool ${name}: timeoutMs`, MAX_MS);
  return tool({
    name,
    description,
    parameters: SUBAGENT_PARAMETERS,
    maxOutputLength,
    async execute({ prompt }, { signal, approve, emit }) {
      // The schema asks for a non-empty string; a blank one is no task either.
      if (prompt.trim() === "") throw new Error("prompt: the task is blank (only white space); a subagent sees nothing else of this conversation");
      // With a time limit the child gets a signal of its own, aborted by
      // the run's abort or at the limit.
      let childSignal = signal;
      let timer;
      let unlink = () => {};
      let timedOut = false;
      if (limit) {
        const ac = new AbortController();
        childSignal = ac.signal;
        const onAbort = () => (toolTimers.clear(timer), ac.abort(signal.reason));
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener("abort", onAbort, { once: true });
          unlink = () => signal.removeEventListener("abort", onAbort);
          timer = toolTimers.set(() => {
            timedOut = true;
            ac.abort(new DOMException(`tool ${name}: timed out after ${duration(limit)}`, "TimeoutError"));
          }, limit);
        }
      }
      const timeout = () => new Error(`timed out after ${duration(limit)}`);
      let child = null;
      let final = "";
      let end = null;
      let aborted = null;
      try {
        // With a time limit, create() is not waited for past it.
        const made = create();
        const opts = await (limit && !childSignal.aborted ? Promise.race([made, new Promise((r) => childSignal.addEventListener("abort", r, { once: true }))]) : made);
        // A run aborted while create() was pending starts no child (it would be
        // stored with a Trace of its abort alone).
        signal.throwIfAborted();
        if (timedOut) throw timeout();
        if (!isObject(opts)) throw badArg(`${name}: create()`, "session options ({ llm, tools, system })", opts);
        child = createSubagent(opts);
        for await (const m of child.run(prompt, { approve, signal: childSignal })) {
          emit(m);
          if (m.origin?.length !== 1) continue; // a grandchild's
          const p = m.payload;
          if (p.type === "text" && p.role === "assistant") final = p.text;
          else if (p.type === "request_end") end = p;
          else if (p.type === "abort") aborted = p.reason ?? "aborted";
        }
      } finally {
        toolTimers.clear(timer);
        unlink();
        child?.close();
      }
      if (timedOut && !signal.aborted) throw timeout();
      if (aborted !== null) throw new Error(`the subagent stopped: ${aborted}`);
      if (end && end.status !== "completed") {
        throw new Error(`the subagent's last request ended ${end.status}${end.error_message ? ": " + end.error_message : ""}`);
      }
      return final;
    },
  });
}
