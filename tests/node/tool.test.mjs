// tool(): schema validation (a corpus per keyword), what execute may return,
// emit, errors, and the environment createSession derives from tools.
import { test } from "node:test";
import { toolTimers } from "../../static/internal.mjs";
import assert from "node:assert/strict";
import { floe, collect, find, usage } from "./helpers.mjs";
import { tool, msg } from "../../static/floe-node.mjs";
import { compileSchema } from "../../static/schema.mjs";
import { mockModel, checkStream } from "../../static/test.mjs";
import { corpus, badSchemas } from "./schema-corpus.mjs";

for (const { keyword, schema, valid, invalid } of corpus) {
  test(`schema ${keyword}: valid arguments pass, invalid ones are named`, () => {
    const validate = compileSchema(schema);
    for (const v of valid) assert.deepEqual(validate(v), [], `valid ${JSON.stringify(v)}`);
    for (const [v, want] of invalid) {
      const errs = validate(v);
      assert.ok(errs.some((e) => e.includes(want)), `${JSON.stringify(v)}: want an error with ${JSON.stringify(want)}, got ${JSON.stringify(errs)}`);
    }
  });
}

test("schemas with unsupported or malformed keywords are refused by tool()", () => {
  for (const [schema, want] of badSchemas) {
    assert.throws(
      () => tool({ name: "t", parameters: schema, execute: () => "" }),
      (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message.includes(want),
      want,
    );
  }
});

test("an argument's or a schema's value named by its head in an error is never cut in half an emoji", () => {
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const [err] = compileSchema({ enum: ["a"] })("x".repeat(55) + "😀" + "y".repeat(10));
  assert.equal(err, `$: want one of "a", got "${"x".repeat(55)}...`);
  assert.doesNotMatch(err, lone);
  assert.throws(() => compileSchema({ type: "x".repeat(39) + "😀" }), (e) => e.message.includes(`"${"x".repeat(39)}…"`) && !e.message.includes("\\ud83d"));
});

// dec(n, scale) is the decimal text of n / 10^scale (n a BigInt).
const dec = (n, scale) => {
  const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, "0");
  return (n < 0n ? "-" : "") + (scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits);
};

test("multipleOf is decided on the numbers as written: every multiple passes, at any size, and a number one decimal place off fails, however small", () => {
  // Dividing in floating point and allowing 1e-9 refused 1234567.89 as a
  // multiple of 0.01 (the quotient's rounding grows with it) and passed 1e-12.
  const steps = [[1n, 2], [5n, 2], [25n, 2], [1n, 1], [15n, 1], [1n, 3], [7n, 3], [1n, 5], [3n, 0]];
  const starts = [0n, 1n, 7n, 123n, 99_999n, 1_234_567n, 123_456_789n, 98_765_432_109n, 1_234_567_890_123n, -4321n];
  for (const [unit, scale] of steps) {
    const m = Number(dec(unit, scale));
    const validate = compileSchema({ type: "number", multipleOf: m });
    for (const start of starts) {
      for (let k = start; k < start + 20n; k++) {
        // Up to 15 significant digits: the number is the decimal written.
        const off = k * unit * 10n + (k < 0n ? -1n : 1n);
        if ((off < 0n ? -off : off) >= 10n ** 15n) continue;
        const v = JSON.parse(dec(k * unit, scale));
        assert.deepEqual(validate(v), [], `${v} is a multiple of ${m}`);
        const w = JSON.parse(dec(off, scale + 1));
        assert.deepEqual(validate(w), [`$: ${w} is not a multiple of ${m}`]);
      }
    }
  }
  const cent = compileSchema({ type: "number", multipleOf: 0.01 });
  for (const v of [1e-12, 5e-324, 0.001]) assert.deepEqual(cent(v), [`$: ${v} is not a multiple of 0.01`]);
  for (const v of [0, 1e21, 1e300, -0.07]) assert.deepEqual(cent(v), []);
  assert.deepEqual(compileSchema({ multipleOf: 1e-7 })(3e-7), []);
  assert.deepEqual(compileSchema({ multipleOf: 1e300 })(5e-324), ["$: 5e-324 is not a multiple of 1e+300"]);
});

test("a recursive schema checks arguments as deep as a call may send them: a list or a tree hundreds of levels deep passes, a wrong leaf is named", () => {
  // $ref, allOf, anyOf, oneOf and not apply to the same value: counted as
  // levels, they refused a list 110 deep as "the schema nests deeper than 200 levels".
  const chain = (n, last) => {
    let item = null;
    for (let i = n - 1; i >= 0; i--) item = { v: i === n - 1 ? last : i, next: item };
    return { head: item };
  };
  const list = (item) => compileSchema({ type: "object", properties: { head: { $ref: "#/$defs/item" } }, $defs: { item } });
  const plain = list({ type: ["object", "null"], properties: { v: { type: "integer" }, next: { $ref: "#/$defs/item" } } });
  const n = 998; // 999 levels with head, within the 1,000 a call may nest
  assert.deepEqual(plain(chain(n, 0)), []);
  assert.deepEqual(plain(chain(n, "x")), [`$.head${".next".repeat(n - 1)}.v: want integer, got string`]);
  const branched = list({ anyOf: [{ type: "null" }, { allOf: [{ type: "object", required: ["v"], properties: { v: { type: "integer" }, next: { $ref: "#/$defs/item" } } }] }] });
  assert.deepEqual(branched(chain(300, 0)), []);
  assert.match(branched(chain(300, "x"))[0], /^\$\.head: matches none of anyOf/);
  const tree = compileSchema({ type: "object", properties: { root: { $ref: "#/$defs/node" } }, $defs: { node: { type: "object", required: ["name"], properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } } } } });
  let node = { name: "leaf", children: [] };
  for (let i = 0; i < 300; i++) node = { name: `n${i}`, children: [node] };
  assert.deepEqual(tree({ root: node }), []);
});

test("anyOf and oneOf quote each branch's first problem by its head: nested in a recursive schema, the message grew as the square of the depth", () => {
  const item = { anyOf: [{ type: "null" }, { type: "object", properties: { v: { type: "integer" }, next: { $ref: "#/$defs/item" } } }] };
  const validate = compileSchema({ type: "object", properties: { head: { $ref: "#/$defs/item" } }, $defs: { item } });
  let list = null;
  for (let i = 0; i < 100; i++) list = { v: i ? i : "x", next: list };
  const [err] = validate({ head: list });
  assert.ok(err.startsWith("$.head: matches none of anyOf ($.head: want null, got an object; $.head.next: matches none of anyOf ("), err.slice(0, 200));
  assert.ok(err.length < 500, `${err.length} characters`);
  // a short problem is quoted whole
  assert.deepEqual(compileSchema({ oneOf: [{ type: "string" }, { type: "integer" }] })(true), ["$: matches none of oneOf ($: want string, got boolean; $: want integer, got boolean)"]);
});

test("a number beyond JavaScript's range (1e400, read as Infinity) is no number or integer the schema allows", () => {
  // It reached execute as Infinity (JSON.stringify makes it null), and an integer's problem called it a fraction.
  for (const type of ["number", "integer", ["integer", "null"]]) {
    const validate = compileSchema({ type: "object", properties: { n: { type } } });
    const want = Array.isArray(type) ? type.join(" or ") : type;
    assert.deepEqual(validate(JSON.parse('{"n":1e400}')), [`$.n: want ${want}, got a number beyond JavaScript's range (read as Infinity)`]);
    assert.deepEqual(validate(JSON.parse('{"n":-1e999}')), [`$.n: want ${want}, got a number beyond JavaScript's range (read as -Infinity)`]);
    assert.deepEqual(validate({ n: 1e308 }), []);
  }
});

// A model that calls tool t once per argument text, then says "ok".
const callsThenOk = (name, argTexts) =>
  mockModel([argTexts.map((a, i) => ({ toolCall: { name, args: a, id: `c${i}` } })), "ok"]);

test("every invalid corpus call gets a failed output and never runs the tool; valid ones run", async () => {
  for (const { keyword, schema, valid, invalid } of corpus) {
    const ran = [];
    const t = tool({ name: "t", parameters: schema, execute: (args) => (ran.push(args), "ran") });
    const args = [...valid.map((v) => JSON.stringify(v)), ...invalid.map(([v]) => JSON.stringify(v)), "{not json", "[1,"];
    const llm = callsThenOk("t", args);
    const out = await collect(floe.createSession({ llm, tools: [t] }).run("go", { approve: () => "allow" }));
    assert.deepEqual(checkStream(out), [], keyword);
    // Tools run concurrently (E-6.1): compare what ran, in any order.
    const sorted = (xs) => xs.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(sorted(ran), sorted(valid), `${keyword}: only the valid calls ran`);
    for (let i = 0; i < args.length; i++) {
      const o = find(out, "tool_call_output").find((m) => m.payload.tool_call_id === `c${i}`);
      if (i < valid.length) assert.deepEqual([o.payload.output, o.payload.stop_reason], ["ran", "completed"]);
      else {
        assert.equal(o.payload.stop_reason, "failed", `${keyword} ${args[i]}`);
        assert.match(o.payload.output, /^\[invalid arguments\] t: /);
        if (i < valid.length + invalid.length) assert.ok(o.payload.output.includes(invalid[i - valid.length][1]), o.payload.output);
        else assert.match(o.payload.output, /the arguments are not JSON/);
      }
    }
    // the next request carries the failed outputs, so the model can correct itself
    assert.equal(llm.calls[1].newMessages.length, args.length);
  }
});

test("arguments that are not a JSON object are invalid whatever the schema says, one without a top-level type too", async () => {
  const bad = [["[1]", "got an array"], ["5", "got number"], ['"x"', "got string"], ["null", "got null"], ["true", "got boolean"]];
  for (const parameters of [{}, { properties: { a: { type: "number" } } }, { type: "object" }, undefined]) {
    const ran = [];
    const t = tool({ name: "t", ...(parameters && { parameters }), execute: (a) => (ran.push(a), "ran") });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", [...bad.map(([a]) => a), "{}"]), tools: [t] }).run("x", { approve: () => "allow" }));
    assert.deepEqual(ran, [{}], JSON.stringify(parameters));
    bad.forEach(([, want], i) => {
      const o = find(out, "tool_call_output").find((m) => m.payload.tool_call_id === `c${i}`);
      assert.equal(o.payload.stop_reason, "failed");
      assert.equal(o.payload.output, `[invalid arguments] t: $: want object, ${want}`);
    });
  }
});

test("arguments nested deeper than 1000 levels are invalid; a schema that compares them (const, enum, uniqueItems) overflowed the stack as a tool error", async () => {
  // a string of brackets, a quote and a backslash counts for nothing
  const text = ']\\"[{';
  const nest = (n) => '{"a":' + "[".repeat(n - 1) + JSON.stringify(text) + "]".repeat(n - 1) + "}";
  assert.equal(JSON.parse(nest(3)).a[0][0], text);
  const args = [nest(1000), nest(1001), nest(5000), nest(100000)];
  for (const a of [{ const: [1] }, { enum: [[1]] }, { type: "array", uniqueItems: true }, {}]) {
    const ran = [];
    const t = tool({ name: "t", parameters: { type: "object", properties: { a } }, execute: (x) => (ran.push(x), "ran") });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", args), tools: [t] }).run("x", { approve: () => "allow" }));
    const output = (i) => find(out, "tool_call_output").find((m) => m.payload.tool_call_id === `c${i}`).payload.output;
    assert.ok(output(0) === "ran" || output(0).startsWith("[invalid arguments] t: $.a: want"), output(0).slice(0, 80));
    for (const i of [1, 2, 3]) assert.equal(output(i), "[invalid arguments] t: the arguments nest deeper than 1000 levels", JSON.stringify(a));
    assert.ok(ran.length <= 1);
  }
});

test("empty arguments are {}", async () => {
  let got;
  const t = tool({ name: "now", execute: (a) => ((got = a), "12:00") });
  await collect(floe.createSession({ llm: callsThenOk("now", [""]), tools: [t] }).run("x", { approve: () => "allow" }));
  assert.deepEqual(got, {});
});

async function outputsOf(execute, opts = {}) {
  const t = tool({ name: "t", execute });
  const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t], ...opts }).run("x", { approve: () => "allow" }));
  assert.deepEqual(checkStream(out), []);
  return out.filter((m) => m.payload.tool_call_id === "c0" && m.payload.type.includes("output")).map((m) => {
    const { timestamp, ...rest } = m;
    return rest;
  });
}

test("execute returning a string, an object, {output, images}, undefined", async () => {
  assert.deepEqual(await outputsOf(() => "plain"), [msg.toolOutput("c0", "plain")]);
  assert.deepEqual(await outputsOf(async () => ({ a: [1, 2] })), [msg.toolOutput("c0", '{"a":[1,2]}')]);
  assert.deepEqual(await outputsOf(async () => [1, "x"]), [msg.toolOutput("c0", '[1,"x"]')]);
  assert.deepEqual(await outputsOf(() => 42), [msg.toolOutput("c0", "42")]);
  assert.deepEqual(await outputsOf(() => undefined), [msg.toolOutput("c0", "")]);
  const img = "data:image/png;base64,iVBORw0KGgo=";
  assert.deepEqual(await outputsOf(() => ({ output: "a chart", images: [img] })), [msg.toolOutput("c0", "a chart", "completed", [img])]);
});

test("images that are not data: URLs are a tool error naming the first bad one; msg.toolOutput refuses them", async () => {
  for (const [images, want] of [
    [["http://example.com/x.png"], 'returned images: want data:<mime>;base64,… URLs, got "http://example.com/x.png" at [0]'],
    [["data:image/png;base64,AA", "not a url"], 'got "not a url" at [1]'],
    [[1], "want an array of data: URL strings, got a number at [0]"],
    // Cut on a whole character: an emoji at the cut was quoted half, as "\ud83d".
    [["x".repeat(39) + "😀 not a URL"], `got ${JSON.stringify("x".repeat(39) + "…")} at [0]`],
  ]) {
    const [out] = await outputsOf(() => ({ output: "o", images }));
    assert.equal(out.payload.stop_reason, "failed");
    assert.ok(out.payload.output.startsWith("[tool error] tool t: ") && out.payload.output.includes(want), out.payload.output);
    assert.equal(out.payload.images, undefined);
  }
  assert.throws(() => msg.toolOutput("c1", "x", "completed", ["https://x/y.png"]), (e) => e.code === "bad_argument" && e.message.includes("msg.toolOutput: images: want data:<mime>;base64,… URLs"));
});

test("execute as an async generator streams fragments in discipline; the complete output joins them", async () => {
  const out = await outputsOf(async function* () {
    yield "one ";
    yield "";
    yield "two";
  });
  assert.deepEqual(out, [
    msg.partialToolOutput("start", "", "c0"),
    msg.partialToolOutput("delta", "one ", "c0"),
    msg.partialToolOutput("delta", "two", "c0"),
    msg.partialToolOutput("stop", "", "c0"),
    msg.toolOutput("c0", "one two"),
  ]);
});

test("emit streams fragments before the returned value; the output is both", async () => {
  const out = await outputsOf(async (args, { emit }) => {
    emit("progress… ");
    await new Promise((r) => setTimeout(r, 1));
    return "done";
  });
  // The returned value is the last delta: the deltas join to the complete output (PROTOCOL P-7).
  assert.deepEqual(out.map((m) => m.payload.event_type ?? "complete"), ["start", "delta", "delta", "stop", "complete"]);
  assert.equal(out.at(-1).payload.output, "progress… done");
  assert.equal(out.filter((m) => m.payload.event_type === "delta").map((m) => m.payload.output).join(""), "progress… done");
  const img = ["data:image/png;base64,AAAA"];
  const withImages = await outputsOf(async (args, { emit }) => {
    emit("p ");
    return { output: "done", images: img };
  });
  assert.deepEqual(withImages.filter((m) => m.payload.event_type === "delta").map((m) => m.payload.images), [undefined, img]);
  assert.deepEqual(withImages.at(-1).payload.images, img);
  // nothing more to stream: no empty last delta
  const none = await outputsOf(async (args, { emit }) => {
    emit("p ");
    return { output: "", images: [] };
  });
  assert.deepEqual(none.map((m) => m.payload.event_type ?? "complete"), ["start", "delta", "stop", "complete"]);
});

test("a throwing tool, a bad yield, a bad emit and bad images are tool errors; fragments are closed first", async () => {
  const err = async (execute) => {
    const out = await outputsOf(execute);
    return out.at(-1).payload.output;
  };
  assert.equal(await err(() => { throw new Error("disk full"); }), "[tool error] disk full");
  // Any thrown value ends the tool, also a falsy one (it hung the run before).
  for (const [v, want] of [[null, "null"], [0, "0"], ["", ""], [false, "false"], [undefined, "undefined"]]) {
    assert.equal(await err(() => { throw v; }), `[tool error] ${want}`, `throw ${String(v)}`);
    assert.equal(await err(() => Promise.reject(v)), `[tool error] ${want}`, `reject ${String(v)}`);
    assert.equal(await err(async function* () { yield "x"; throw v; }), `x\n[tool error] ${want}`, `generator throws ${String(v)}`);
  }
  assert.match(await err(async function* () { yield 5; }), /^\[tool error\] tool t: yielded a number, want a string/);
  assert.match(await err((a, { emit }) => emit({ type: "model_msg", payload: {} })), /emit: want a string \(an output fragment\) or a message with origin/);
  assert.match(await err(() => ({ output: "x", images: "nope" })), /returned images: want an array/);
  const out = await outputsOf(async function* () {
    yield "half";
    throw new Error("then failed");
  });
  // The engine closes the open fragment (ENGINE.md E-6.5): the deltas join to the complete output (P-7).
  assert.deepEqual(out.map((m) => m.payload.event_type ?? m.payload.output), ["start", "delta", "delta", "stop", "half\n[tool error] then failed"]);
  assert.equal(out.at(-2).payload.stop_reason, "failed");
  assert.equal(out.filter((m) => m.payload.event_type === "delta").map((m) => m.payload.output).join(""), "half\n[tool error] then failed");
});

test("a tool that ends after the run's abort is cut short: its output says so and is aborted (E-6.8)", async () => {
  const NOTE = "[interrupted: tool aborted by user]";
  const cases = [
    // an async generator is stopped at its next yield
    [(ac) => async function* () {
      yield "a";
      ac.abort();
      yield "b";
      yield "c";
    }, "a\n" + NOTE, ["a", "\n" + NOTE]],
    // a value returned after the abort, and what was emitted before it
    [(ac) => async (args, { emit }) => {
      emit("so far");
      ac.abort();
      return "half";
    }, "so farhalf\n" + NOTE, ["so far", "half\n" + NOTE]],
    // a rejection after the abort is not a tool error
    [(ac) => async () => {
      ac.abort();
      throw new DOMException("This operation was aborted", "AbortError");
    }, NOTE, []],
  ];
  for (const [make, want, deltas] of cases) {
    const ac = new AbortController();
    const t = tool({ name: "t", execute: make(ac) });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("x", { approve: () => "allow", signal: ac.signal }));
    assert.deepEqual(checkStream(out), []);
    const [o] = find(out, "tool_call_output");
    assert.deepEqual([o.payload.output, o.payload.stop_reason], [want, "aborted"]);
    const parts = out.filter((m) => m.payload.type === "partial_tool_call_output");
    assert.deepEqual(parts.filter((m) => m.payload.event_type === "delta").map((m) => m.payload.output), deltas);
    if (parts.length) assert.equal(parts.at(-1).payload.stop_reason, "aborted");
    assert.equal(out.at(-1).payload.type, "abort");
  }
});

test("execute gets the signal, the tool call and the run's approver", async () => {
  let ctx;
  await outputsOf((args, c) => ((ctx = c), "x"));
  assert.ok(ctx.signal instanceof AbortSignal);
  assert.equal(ctx.toolCall.payload.name, "t");
  assert.equal(typeof ctx.approve, "function");
});

test("tools mix tool() and plain definitions: the environment runs the others; unknown names fail", async () => {
  const t = tool({ name: "mine", execute: () => "from tool()" });
  const llm = mockModel([[{ toolCall: { name: "mine", id: "a" } }, { toolCall: { name: "raw", id: "b" } }, { toolCall: { name: "nope", id: "c" } }], "ok"]);
  const environment = {
    async *executeTool({ toolCall }) {
      if (toolCall.payload.name === "nope") throw new Error("the environment does not know nope");
      yield msg.toolOutput(toolCall.payload.tool_call_id, "from environment");
    },
  };
  const session = floe.createSession({ llm, tools: [t, { name: "raw", description: "plain" }], environment });
  const out = await collect(session.run("x", { approve: () => "allow" }));
  const by = Object.fromEntries(find(out, "tool_call_output").map((m) => [m.payload.tool_call_id, m.payload.output]));
  assert.deepEqual(by, { a: "from tool()", b: "from environment", c: "[tool error] the environment does not know nope" });
  assert.deepEqual(find(out, "tool_list_ready")[0].payload.tools, [
    { name: "mine", description: "", parameters: { type: "object", properties: {} } },
    { name: "raw", description: "plain" },
  ]);
  // without an environment an unknown name gets a failed output
  const out2 = await collect(floe.createSession({ llm: callsThenOk("ghost", ["{}"]), tools: [t] }).run("x", { approve: () => "allow" }));
  assert.deepEqual(find(out2, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [['[unknown tool] there is no tool named "ghost"', "failed"]]);
  // and so it does with no tool() at all: no tools, none, or only plain definitions
  for (const tools of [undefined, [], [{ name: "raw", description: "plain" }]]) {
    const out3 = await collect(floe.createSession({ llm: callsThenOk("ghost", ["{}"]), ...(tools && { tools }) }).run("x", { approve: () => "allow" }));
    assert.deepEqual(find(out3, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [['[unknown tool] there is no tool named "ghost"', "failed"]], JSON.stringify(tools));
  }
});

test("tool() and tools misuse throw bad_argument naming the argument", () => {
  const cases = [
    [() => tool({ execute: () => "" }), "tool: name"],
    [() => tool({ name: "x" }), "tool x: execute"],
    [() => tool({ name: "x", execute: () => "", parameters: [] }), "tool x: parameters"],
    [() => tool({ name: "x", execute: () => "", description: 3 }), "tool x: description"],
    // The limits: a whole number, 0 for none (as in the reference).
    [() => tool({ name: "x", execute: () => "", timeoutMs: -1 }), "tool x: timeoutMs: want an integer from 0 to 2147483647, got -1"],
    [() => tool({ name: "x", execute: () => "", timeoutMs: NaN }), "tool x: timeoutMs: want an integer from 0 to 2147483647, got NaN"],
    [() => tool({ name: "x", execute: () => "", timeoutMs: 1.5 }), "tool x: timeoutMs: want an integer from 0 to 2147483647, got 1.5"],
    [() => tool({ name: "x", execute: () => "", timeoutMs: "120000" }), "tool x: timeoutMs: want a number, got a string"],
    [() => tool({ name: "x", execute: () => "", timeoutMs: 2 ** 31 }), "tool x: timeoutMs: want an integer from 0 to 2147483647, got 2147483648"],
    [() => tool({ name: "x", execute: () => "", maxOutputLength: -5 }), "tool x: maxOutputLength: want an integer from 0 to 2147483647, got -5"],
    [() => tool({ name: "x", execute: () => "", maxOutputLength: Infinity }), "tool x: maxOutputLength: want an integer from 0 to 2147483647, got Infinity"],
    [() => tool({ name: "x", execute: () => "", maxOutputLength: 0.5 }), "tool x: maxOutputLength: want an integer from 0 to 2147483647, got 0.5"],
    [() => tool({ name: "x", execute: () => "", maxOutputLength: "16000" }), "tool x: maxOutputLength: want a number, got a string"],
    [() => tool({ name: "x", execute: () => "", maxOutputLength: 16000n }), "tool x: maxOutputLength: want a number, got a bigint"],
    [() => tool({ name: "x", execute: () => "", timeOut: 5 }), "tool: spec.timeOut: unknown option"],
    [() => floe.createSession({ llm: mockModel([]), tools: [tool({ name: "a", execute: () => "" }), tool({ name: "a", execute: () => "" })] }), 'tools[1]: a second tool named "a"'],
    [() => floe.createSession({ llm: mockModel([]), tools: [42] }), "createSession: tools[0]"],
    [() => floe.createSession({ llm: mockModel([]), tools: [{ description: "d" }] }), "createSession: tools[0].name: want a tool's name (a non-empty string), got undefined"],
    [() => floe.createSession({ llm: mockModel([]), tools: [{ name: "", description: "d" }] }), "createSession: tools[0].name: want a tool's name"],
    [() => floe.createSession({ llm: mockModel([]), tools: [{ name: "p", description: "d", parameters: "obj" }] }), "createSession: tools[0].parameters: want a JSON Schema object or a Standard Schema (zod, Valibot, ArkType), got a string"],
    [() => floe.createSession({ llm: mockModel([]), tools: [{ name: "p", description: 5 }] }), "createSession: tools[0].description: want a string, got a number"],
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", properties: { a: { type: "str" } } } }), 'tool x: parameters.properties.a.type: want one of string, number, integer, boolean, object, array, null or an array of them, got "str"'],
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", properties: { a: { type: "string", minLength: -1 } } } }), "parameters.properties.a.minLength: want a non-negative integer, got -1"],
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", properties: { a: { type: "number", multipleOf: 0 } } } }), "parameters.properties.a.multipleOf: want a positive number, got 0"],
    [
      () => {
        const p = { type: "object", properties: {} };
        p.properties.self = p;
        return tool({ name: "x", execute: () => "", parameters: p });
      },
      "tool x: parameters.properties.self: the schema contains itself",
    ],
    // Schemas no call could pass: arguments are an object; an empty enum matches nothing.
    [() => tool({ name: "x", execute: () => "", parameters: { type: "string" } }), 'tool x: parameters.type: want "object" (a tool\'s arguments are an object), got "string"'],
    [() => tool({ name: "x", execute: () => "", parameters: { type: ["array", "null"] } }), 'got ["array","null"]'],
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", properties: { k: { enum: [] } } } }), "tool x: parameters.properties.k.enum: want a non-empty array (an empty enum matches no value), got an array"],
    // A $ref loop that never goes into the value: checking a call would never reach a member.
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", $defs: { a: { $ref: "#/$defs/a" } }, properties: { p: { $ref: "#/$defs/a" } } } }), 'tool x: parameters: $ref "#/$defs/a" refers back to itself'],
    [() => tool({ name: "x", execute: () => "", parameters: { type: "object", $defs: { a: { allOf: [{ $ref: "#/$defs/b" }] }, b: { anyOf: [{ type: "string" }, { $ref: "#/$defs/a" }] } }, properties: { p: { $ref: "#/$defs/a" } } } }), "refers back to itself"],
  ];
  for (const [f, want] of cases) assert.throws(f, (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message.includes(want), want);
});

test("a denied tool() call never runs", async () => {
  let ran = false;
  const t = tool({ name: "rm", execute: () => ((ran = true), "") });
  const out = await collect(floe.createSession({ llm: callsThenOk("rm", ["{}"]), tools: [t] }).run("x", { approve: () => "deny" }));
  assert.equal(ran, false);
  assert.deepEqual(checkStream(out), []);
  assert.equal(find(out, "approval_decision")[0].payload.decision, "deny");
});

void usage;

test("at most 8 problems are reported per call", () => {
  const props = Object.fromEntries([..."abcdefghijkl"].map((k) => [k, { type: "string" }]));
  const validate = compileSchema({ type: "object", properties: props });
  const errs = validate(Object.fromEntries([..."abcdefghijkl"].map((k) => [k, 1])));
  assert.equal(errs.length, 8);
  assert.equal(errs[0], "$.a: want string, got number");
});

// toolClock puts a clock the test moves in place of the tool timers'
// setTimeout (not the global one, which the Go runtime's timers use too).
function toolClock() {
  const saved = { ...toolTimers };
  const pending = new Map();
  let now = 0;
  let next = 0;
  toolTimers.set = (f, ms) => (pending.set(++next, { at: now + ms, f }), next);
  toolTimers.clear = (id) => pending.delete(id);
  return {
    tick(ms) {
      now += ms;
      for (const [id, { at, f }] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
        if (at > now) break;
        pending.delete(id);
        f();
      }
    },
    reset: () => Object.assign(toolTimers, saved),
  };
}

// The time limit runs on a clock the test moves: a run's tool call is
// started (a gate the tool opens), then the clock is moved past the limit.
async function timedRun(t, { signal, ticks = [], args = "{}" } = {}) {
  const clock = toolClock();
  try {
    const llm = callsThenOk(t.name, [args]);
    const run = collect(floe.createSession({ llm, tools: [t] }).run("x", { approve: () => "allow", signal }));
    for (const [gate, ms] of ticks) {
      await gate;
      clock.tick(ms);
    }
    const out = await run;
    assert.deepEqual(checkStream(out), []);
    return { out, llm };
  } finally {
    clock.reset();
  }
}

const gate = () => {
  let open;
  const p = new Promise((r) => (open = r));
  return Object.assign(p, { open });
};

const ofCall = (out) => out.filter((m) => m.payload.tool_call_id === "c0" && m.payload.type.includes("output"));
const deltas = (out) => ofCall(out).filter((m) => m.payload.event_type === "delta").map((m) => m.payload.output);

test("timeoutMs: a tool that ignores its signal is not waited for: at the limit its signal aborts and the call fails, what it streamed kept; the run goes on", async () => {
  const started = gate();
  let ctx;
  let lateEmit;
  const t = tool({
    name: "t",
    timeoutMs: 120_000,
    execute: async (args, c) => {
      ctx = c;
      c.emit("partial");
      started.open();
      await new Promise(() => {}); // never ends, whatever its signal says
    },
  });
  const { out, llm } = await timedRun(t, { ticks: [[started, 120_000]] });
  assert.equal(ctx.signal.aborted, true);
  assert.equal(ctx.signal.reason.name, "TimeoutError");
  assert.equal(ctx.signal.reason.message, "tool t: timed out after 120 s");
  try {
    ctx.emit("late");
  } catch (e) {
    lateEmit = e;
  }
  assert.equal(lateEmit?.code, "closed");
  const [o] = find(out, "tool_call_output");
  assert.deepEqual([o.payload.output, o.payload.stop_reason], ["partial\n[tool error] timed out after 120 s", "failed"]);
  // the open fragment is closed as E-6.5 says: the deltas join to the output
  assert.deepEqual(deltas(out), ["partial", "\n[tool error] timed out after 120 s"]);
  assert.equal(ofCall(out).at(-2).payload.stop_reason, "failed");
  // the model got the failed output and answered
  assert.equal(llm.calls.length, 2);
  assert.equal(find(out, "text").at(-1).payload.text, "ok");
  assert.equal(find(out, "abort").length, 0);
});

test("timeoutMs: a tool that heeds its signal at the limit fails as timed out, not aborted; an async generator is stopped at its next yield", async () => {
  const started = gate();
  const heeds = tool({
    name: "t",
    timeoutMs: 1500,
    execute: (args, { signal }) => {
      started.open();
      return new Promise((resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    },
  });
  const { out } = await timedRun(heeds, { ticks: [[started, 1500]] });
  assert.deepEqual(find(out, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [["[tool error] timed out after 1.5 s", "failed"]]);

  const yielding = gate();
  let resume;
  let after = false;
  const gen = tool({
    name: "t",
    timeoutMs: 250,
    async *execute() {
      yield "a";
      await new Promise((r) => {
        resume = r;
        yielding.open();
      });
      yield "b";
      after = true;
      yield "c";
    },
  });
  const { out: out2 } = await timedRun(gen, { ticks: [[yielding, 250]] });
  resume();
  await new Promise((r) => setImmediate(r));
  assert.equal(after, false);
  assert.deepEqual(deltas(out2), ["a", "\n[tool error] timed out after 250 ms"]);
});

test("timeoutMs: a tool that ends in time completes, and its clock is stopped; the run's abort before the limit is an abort, not a time-out", async () => {
  let fastSignal;
  const fast = tool({ name: "t", timeoutMs: 1000, execute: (a, c) => ((fastSignal = c.signal), "done") });
  const ac = new AbortController();
  let slowSignal;
  const slow = tool({
    name: "t",
    timeoutMs: 1000,
    execute: (a, c) =>
      new Promise((resolve, reject) => {
        slowSignal = c.signal;
        c.signal.addEventListener("abort", () => reject(c.signal.reason));
        c.emit("so far");
        ac.abort();
      }),
  });
  // Once the run has ended, the limit's time passing does nothing.
  for (const [t, signal, want] of [
    [fast, undefined, ["done", "completed"]],
    [slow, ac.signal, ["so far\n[interrupted: tool aborted by user]", "aborted"]],
  ]) {
    const clock = toolClock();
    try {
      const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("x", { approve: () => "allow", signal }));
      assert.deepEqual(checkStream(out), []);
      assert.deepEqual(find(out, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [want]);
      clock.tick(5000);
    } finally {
      clock.reset();
    }
  }
  assert.equal(fastSignal.aborted, false);
  assert.equal(slowSignal.aborted, true);
  assert.notEqual(slowSignal.reason?.name, "TimeoutError");
});

test("maxOutputLength: a longer output is cut, its head kept, with a note of how much was left out; returned, { output }, streamed alike", async () => {
  const run = async (execute, maxOutputLength = 5) => {
    const t = tool({ name: "t", maxOutputLength, execute });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("x", { approve: () => "allow" }));
    assert.deepEqual(checkStream(out), []);
    const [o] = find(out, "tool_call_output");
    // whatever was streamed joins to the complete output (P-7)
    if (deltas(out).length) assert.equal(deltas(out).join(""), o.payload.output);
    return { output: o.payload.output, stop: o.payload.stop_reason, deltas: deltas(out), images: o.payload.images };
  };
  const NOTE = (cut, total) => `[output cut: ${cut} of ${total} characters left out]`;
  assert.deepEqual(await run(() => "0123456789"), { output: "01234\n" + NOTE(5, 10), stop: "completed", deltas: [], images: undefined });
  // as long as the cap, or 0: whole
  assert.equal((await run(() => "01234")).output, "01234");
  assert.equal((await run(() => "0123456789", 0)).output, "0123456789");
  // a value serialized as JSON is cut as its text
  assert.equal((await run(() => ({ a: "xyzxyz" }))).output, '{"a":\n' + NOTE(9, 14));
  const img = ["data:image/png;base64,AAAA"];
  assert.deepEqual(await run(() => ({ output: "0123456789", images: img })), { output: "01234\n" + NOTE(5, 10), stop: "completed", deltas: [], images: img });
  // fragments past the cap are not streamed; the note is the last delta
  assert.deepEqual(
    await run(async function* () {
      yield "012";
      yield "345";
      yield "6";
    }),
    { output: "01234\n" + NOTE(2, 7), stop: "completed", deltas: ["012", "34", "\n" + NOTE(2, 7)], images: undefined },
  );
  // emitted fragments and the returned value count together
  assert.deepEqual(
    await run(async (a, { emit }) => {
      emit("0123");
      emit("45");
      return "6789";
    }),
    { output: "01234\n" + NOTE(5, 10), stop: "completed", deltas: ["0123", "4", "\n" + NOTE(5, 10)], images: undefined },
  );
  // a surrogate pair is never split: the head is one character shorter
  assert.equal((await run(() => "abcd😀ef")).output, "abcd\n" + NOTE(4, 8));
  // nor when a streamed fragment ends at the cap with its first half (a
  // string sliced by UTF-16 units): the half is not streamed
  assert.deepEqual(
    await run(async function* () {
      yield "abcd\uD83D";
      yield "\uDE00ef";
    }),
    { output: "abcd\n" + NOTE(4, 8), stop: "completed", deltas: ["abcd", "\n" + NOTE(4, 8)], images: undefined },
  );
  // a tool error after the cap keeps the note before the error
  assert.deepEqual(
    await run(async function* () {
      yield "0123456789";
      throw new Error("disk full");
    }),
    { output: "01234\n" + NOTE(5, 10) + "\n[tool error] disk full", stop: "failed", deltas: ["01234", "\n" + NOTE(5, 10), "\n[tool error] disk full"], images: undefined },
  );
});

test("maxOutputLength with the run's abort: the cut note, then the interrupted line", async () => {
  const ac = new AbortController();
  const t = tool({
    name: "t",
    maxOutputLength: 3,
    execute: async (a, { emit }) => {
      emit("abcdef");
      ac.abort();
      return "gh";
    },
  });
  const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("x", { approve: () => "allow", signal: ac.signal }));
  assert.deepEqual(checkStream(out), []);
  const [o] = find(out, "tool_call_output");
  const want = "abc\n[output cut: 5 of 8 characters left out]\n[interrupted: tool aborted by user]";
  assert.deepEqual([o.payload.output, o.payload.stop_reason], [want, "aborted"]);
  assert.equal(deltas(out).join(""), want);
});

// A child model that streams a piece of text, then waits: for its signal
// (heeds), or for ever.
const hangingChild = (started, heeds) => ({
  async *streamGenerate({ signal }) {
    yield msg.partialText("start");
    yield msg.partialText("delta", "thinking it over");
    started.open();
    await new Promise((resolve) => heeds && signal.addEventListener("abort", resolve));
    return { status: "aborted" };
  },
});

test("subagentTool timeoutMs: at the limit the child's run is aborted and its stream ends before the call fails as timed out; a child whose model ignores its signal ends after its abort grace", async () => {
  for (const heeds of [true, false]) {
    const started = gate();
    const research = floe.subagentTool({ name: "t", timeoutMs: 120_000, create: () => ({ llm: hangingChild(started, heeds), abortGraceMs: 10, store: false }) });
    const { out, llm } = await timedRun(research, { ticks: [[started, 120_000]], args: '{"prompt":"q"}' });
    const [o] = find(out.filter((m) => !m.origin), "tool_call_output");
    assert.deepEqual([o.payload.output, o.payload.stop_reason], ["[tool error] timed out after 120 s", "failed"], `heeds ${heeds}`);
    // the child's request ended, then the child's run, in the parent's stream
    const child = out.filter((m) => m.origin);
    assert.deepEqual(
      child.filter((m) => ["request_end", "abort"].includes(m.payload.type)).map((m) => m.payload.type),
      ["request_end", "abort"],
      `heeds ${heeds}`,
    );
    assert.ok(out.indexOf(child.at(-1)) < out.indexOf(o), "the child's stream ended before the call's output");
    assert.equal(llm.calls.length, 2);
    assert.equal(find(out, "abort").filter((m) => !m.origin).length, 0);
  }
});

test("subagentTool timeoutMs: a child that ends in time completes; the run's abort is an abort, not a time-out; maxOutputLength cuts the final text", async () => {
  const clock = toolClock();
  try {
    const quick = floe.subagentTool({ name: "t", timeoutMs: 1000, maxOutputLength: 4, create: () => ({ llm: mockModel(["The answer is 42."]), store: false }) });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", ['{"prompt":"q"}']), tools: [quick] }).run("x", { approve: () => "allow" }));
    assert.deepEqual(checkStream(out), []);
    assert.deepEqual(find(out.filter((m) => !m.origin), "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [["The \n[output cut: 13 of 17 characters left out]", "completed"]]);
    clock.tick(5000);

    const started = gate();
    const ac = new AbortController();
    const slow = floe.subagentTool({ name: "t", timeoutMs: 1000, create: () => ({ llm: hangingChild(started, true), store: false }) });
    const run = collect(floe.createSession({ llm: callsThenOk("t", ['{"prompt":"q"}']), tools: [slow] }).run("x", { approve: () => "allow", signal: ac.signal }));
    await started;
    ac.abort();
    const out2 = await run;
    assert.deepEqual(checkStream(out2), []);
    assert.equal(out2.at(-1).payload.type, "abort");
    assert.ok(!JSON.stringify(out2).includes("timed out"));
  } finally {
    clock.reset();
  }
  assert.throws(() => floe.subagentTool({ create: () => ({}), timeoutMs: -1 }), (e) => e.code === "bad_argument" && e.message.includes("tool run_subagent: timeoutMs"));
});

test("subagentTool timeoutMs bounds create() too: one that never settles fails the call at the limit, and starts no child", async () => {
  const asked = gate();
  let late = null;
  const research = floe.subagentTool({
    name: "t",
    timeoutMs: 1000,
    create: () => {
      asked.open();
      return new Promise((resolve) => (late = resolve));
    },
  });
  const { out } = await timedRun(research, { ticks: [[asked, 1000]], args: '{"prompt":"q"}' });
  const [o] = find(out.filter((m) => !m.origin), "tool_call_output");
  assert.deepEqual([o.payload.output, o.payload.stop_reason], ["[tool error] timed out after 1 s", "failed"]);
  assert.equal(out.filter((m) => m.origin).length, 0);
  late({ llm: mockModel(["late"]), store: false }); // settles after the call: ignored
});

// A Standard Schema written by hand (what zod, Valibot and ArkType give;
// tests/standard-schema runs them): validate(value) → { value } or
// { issues }, its JSON Schema from jsonSchema.input({ target }).
function standard(validate, json = { type: "object", properties: { a: { type: "string" } } }) {
  const targets = [];
  return {
    targets,
    "~standard": { version: 1, vendor: "hand", validate, jsonSchema: { input: (o) => (targets.push(o.target), structuredClone(json)), output: () => json } },
  };
}

test("Standard Schema parameters: the model gets its JSON Schema (draft-07); execute gets validate()'s output; its issues are the failed output, each with its path", async () => {
  const ran = [];
  const schema = standard((v) =>
    v.a === "ok"
      ? { value: { a: "OK", added: 1 } }
      : {
          issues: [
            { message: "want a string", path: ["a"] },
            { message: "too small", path: ["list", 0, { key: "odd key" }, { key: 2 }] },
            { message: "at the top" },
            { message: "", path: [Symbol("s")] },
            { message: "x".repeat(298) + "😀" + "y".repeat(5000), path: ["long"] },
            ...Array.from({ length: 9 }, (_, i) => ({ message: `more ${i}`, path: [] })),
          ],
        },
  );
  const t = tool({ name: "t", description: "d", parameters: schema, execute: (args) => (ran.push(args), "ran") });
  assert.deepEqual(schema.targets, ["draft-07"]);
  assert.deepEqual(t.parameters, { type: "object", properties: { a: { type: "string" } } });
  const llm = callsThenOk("t", ['{"a":"ok"}', '{"a":5}', "{oops"]);
  const out = await collect(floe.createSession({ llm, tools: [t] }).run("go", { approve: () => "allow" }));
  assert.deepEqual(checkStream(out), []);
  assert.deepEqual(llm.calls[0].tools, [{ name: "t", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } }]);
  assert.deepEqual(ran, [{ a: "OK", added: 1 }]);
  const outputs = Object.fromEntries(find(out, "tool_call_output").map((m) => [m.payload.tool_call_id, [m.payload.output, m.payload.stop_reason]]));
  assert.deepEqual(outputs.c0, ["ran", "completed"]);
  assert.deepEqual(outputs.c1, [
    `[invalid arguments] t: $.a: want a string; $.list[0]["odd key"][2]: too small; $: at the top; $[Symbol(s)]: invalid; $.long: ${"x".repeat(298)}…; $: more 0; $: more 1; $: more 2`,
    "failed",
  ]);
  assert.equal(outputs.c2[1], "failed");
  assert.match(outputs.c2[0], /^\[invalid arguments\] t: the arguments are not JSON/);
  // no partial output for an invalid call: it never started
  assert.deepEqual(find(out, "partial_tool_call_output").map((m) => m.payload.tool_call_id).filter((id) => id !== "c0"), []);
  assert.equal(llm.calls[1].newMessages.length, 3);
});

test("Standard Schema parameters: an async validate() is awaited; one that throws or rejects, or returns no result, is a tool error", async () => {
  const cases = [
    [async (v) => ({ value: { ...v, checked: true } }), ['{"checked":true}', "completed"]],
    [async () => ({ issues: [{ message: "no such file", path: ["a"] }] }), ["[invalid arguments] t: $.a: no such file", "failed"]],
    [() => { throw new Error("the schema broke"); }, ["[tool error] the schema broke", "failed"]],
    [async () => { throw new Error("it rejected"); }, ["[tool error] it rejected", "failed"]],
    [() => 5, ["[tool error] its schema's validate() returned a number, want { value } or { issues }", "failed"]],
  ];
  for (const [validate, want] of cases) {
    const t = tool({ name: "t", parameters: standard(validate), execute: (args) => args });
    const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("go", { approve: () => "allow" }));
    assert.deepEqual(checkStream(out), []);
    const [o] = find(out, "tool_call_output");
    assert.deepEqual([o.payload.output, o.payload.stop_reason], want, String(validate));
  }
});

test("Standard Schema parameters: an async validate() that never settles ends at the run's abort (aborted) and at timeoutMs (failed)", async () => {
  const ac = new AbortController();
  const validating = gate();
  let ran = false;
  const t = tool({ name: "t", parameters: standard(() => (validating.open(), new Promise(() => {}))), execute: () => ((ran = true), "") });
  const run = collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t] }).run("go", { approve: () => "allow", signal: ac.signal }));
  await validating;
  ac.abort();
  const out = await run;
  assert.deepEqual(checkStream(out), []);
  const [o] = find(out, "tool_call_output");
  assert.deepEqual([o.payload.output, o.payload.stop_reason], ["[interrupted: tool aborted by user]", "aborted"]);
  assert.equal(ran, false);

  const started = gate();
  const slow = tool({ name: "t", timeoutMs: 5000, parameters: standard(() => (started.open(), new Promise(() => {}))), execute: () => ((ran = true), "") });
  const { out: out2 } = await timedRun(slow, { ticks: [[started, 5000]] });
  assert.deepEqual(find(out2, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [["[tool error] timed out after 5 s", "failed"]]);
  assert.equal(ran, false);
});

test("Standard Schema parameters: one without a JSON Schema, a JSON Schema that is not an object schema or not JSON, and a malformed ~standard are bad_argument naming what to do", () => {
  const bad = (parameters, want) =>
    assert.throws(() => tool({ name: "t", parameters, execute: () => "" }), (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message === want, want);
  const props = (p) => ({ "~standard": { version: 1, validate: () => ({ value: {} }), ...p } });
  bad(props({ vendor: "valibot" }), "tool t: parameters: this valibot schema has no Standard JSON Schema interface (~standard.jsonSchema), from which the model's JSON Schema comes: wrap it in toStandardJsonSchema() from @valibot/to-json-schema, or pass a JSON Schema object");
  bad(props({ vendor: "zod" }), "tool t: parameters: this zod schema has no Standard JSON Schema interface (~standard.jsonSchema), from which the model's JSON Schema comes: zod 4.2 and later give it; or pass a JSON Schema object (z.toJSONSchema(schema))");
  bad(props({}), "tool t: parameters: this Standard Schema has no Standard JSON Schema interface (~standard.jsonSchema), from which the model's JSON Schema comes: pass a JSON Schema object (your library's converter's output)");
  bad(props({ vendor: "x", jsonSchema: { input: () => ({ type: "string" }) } }), 'tool t: parameters: this x schema\'s JSON Schema has type "string": want "object" (a tool\'s arguments are an object: z.object(), v.object(), type({ … }))');
  bad(props({ vendor: "x", jsonSchema: { input: () => ({ anyOf: [{ type: "object" }] }) } }), 'tool t: parameters: this x schema\'s JSON Schema has type none: want "object" (a tool\'s arguments are an object: z.object(), v.object(), type({ … }))');
  bad(props({ vendor: "x", jsonSchema: { input: () => null } }), "tool t: parameters: this x schema's JSON Schema: want an object, got null");
  bad(props({ vendor: "x", jsonSchema: { input: () => { throw new Error("Date cannot be represented in JSON Schema"); } } }), "tool t: parameters: this x schema's JSON Schema (~standard.jsonSchema.input) threw: Date cannot be represented in JSON Schema");
  bad(props({ vendor: "x", jsonSchema: { input: () => ({ type: "object", default: 1n }) } }), "tool t: parameters: this x schema's JSON Schema cannot be encoded as JSON: Do not know how to serialize a BigInt");
  bad({ "~standard": { version: 2, validate: () => ({}) } }, 'tool t: parameters["~standard"].version: want 1 (Standard Schema v1), got 2');
  bad({ "~standard": { version: 1 } }, 'tool t: parameters["~standard"].validate: want a function (Standard Schema v1), got undefined');
  bad({ "~standard": null }, 'tool t: parameters["~standard"]: want a Standard Schema\'s properties (version 1, with validate()), got null');
  bad(Object.assign(() => {}, { "~standard": { get version() { throw new Error("boom"); } } }), "tool t: parameters: reading its ~standard threw: boom");
  bad(() => {}, "tool t: parameters: want a JSON Schema object or a Standard Schema (zod, Valibot, ArkType), got a function");
});

test("Standard Schema parameters of a plain definition: the model gets its JSON Schema, the environment the arguments as sent", async () => {
  const llm = callsThenOk("p", ['{"a":1}']);
  const got = [];
  const environment = { async *executeTool({ toolCall }) { got.push(toolCall.payload.arguments); yield msg.toolOutput(toolCall.payload.tool_call_id, "done"); } };
  const schema = standard(() => ({ issues: [{ message: "never asked" }] }));
  const out = await collect(floe.createSession({ llm, environment, tools: [{ name: "p", description: "plain", parameters: schema }] }).run("go", { approve: () => "allow" }));
  assert.deepEqual(checkStream(out), []);
  assert.deepEqual(schema.targets, ["draft-07"]);
  assert.deepEqual(llm.calls[0].tools, [{ name: "p", description: "plain", parameters: { type: "object", properties: { a: { type: "string" } } } }]);
  assert.deepEqual(got, ['{"a":1}']);
  assert.throws(
    () => floe.createSession({ llm, tools: [{ name: "p", parameters: standard(() => ({}), { type: "array" }) }] }),
    (e) => e.code === "bad_argument" && e.message.startsWith('createSession: tools[0].parameters: this hand schema\'s JSON Schema has type "array"'),
  );
});

// Safari has no ReadableStream.prototype[Symbol.asyncIterator] (Chromium,
// Firefox, Node and Deno have it): a ReadableStream a tool returns, or one
// a model's streamGenerate returns, is read through its reader there. The
// tool's stream was serialized as "{}" and the model's refused as no async
// iterator.
test("a ReadableStream returned by execute or streamGenerate streams where ReadableStream is not async iterable (Safari)", async (t) => {
  const iter = Object.getOwnPropertyDescriptor(ReadableStream.prototype, Symbol.asyncIterator);
  delete ReadableStream.prototype[Symbol.asyncIterator];
  t.after(() => Object.defineProperty(ReadableStream.prototype, Symbol.asyncIterator, iter));
  assert.equal(typeof new ReadableStream()[Symbol.asyncIterator], "undefined");
  const streamOf = (xs, pulled) =>
    new ReadableStream({
      pull(c) {
        if (pulled) pulled.n++;
        if (xs.length) c.enqueue(xs.shift());
        else c.close();
      },
    });
  const t1 = tool({ name: "t", execute: () => streamOf(["a", "b"]) });
  const out = await collect(floe.createSession({ llm: callsThenOk("t", ["{}"]), tools: [t1] }).run("x", { approve: () => "allow" }));
  assert.deepEqual(checkStream(out), []);
  assert.deepEqual(deltas(out), ["a", "b"]);
  assert.deepEqual(find(out, "tool_call_output").map((m) => [m.payload.output, m.payload.stop_reason]), [["ab", "completed"]]);

  const model = mockModel(["hello"]);
  const llm = { provider: "p", model: "m", streamGenerate: (req) => toStream(model.streamGenerate(req)) };
  const out3 = await collect(floe.createSession({ llm }).run("x"));
  assert.deepEqual(checkStream(out3), []);
  assert.deepEqual(find(out3, "text").map((m) => m.payload.text), ["hello"]);
});

/** An async iterator's values as a ReadableStream. */
function toStream(it) {
  return new ReadableStream({
    async pull(c) {
      const { done, value } = await it.next();
      if (done) c.close();
      else c.enqueue(value);
    },
  });
}
