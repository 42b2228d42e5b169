// A small JSON Schema validator for tool arguments. It interprets the
// schema (no eval, no new Function: it runs under an extension's CSP) and
// supports a fixed keyword set; compiling a schema with any other keyword
// fails, so nothing a schema says is silently ignored.
//
// Validating keywords: type (string, number, integer, boolean, object,
// array, null, or an array of them), nullable (OpenAPI: also accepts
// null), enum, const, properties, required, additionalProperties,
// minProperties, maxProperties, items (a schema, or an array for tuples),
// prefixItems, minItems, maxItems, uniqueItems, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (numbers; draft-4 booleans too),
// multipleOf (exact, on the decimals), minLength, maxLength (in code
// points), pattern (a RegExp with the "u" flag), anyOf, oneOf, allOf,
// not, $ref to a local JSON pointer ("#", "#/$defs/x", "#/definitions/x"):
// one to anything but a schema is refused. Annotations accepted and
// ignored: $schema, $id, $comment, $defs, definitions, title, description,
// default, examples, format, readOnly, writeOnly, deprecated.

const VALIDATING = [
  "type", "nullable", "enum", "const", "properties", "required", "additionalProperties",
  "minProperties", "maxProperties", "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
  "pattern", "anyOf", "oneOf", "allOf", "not", "$ref",
];
const ANNOTATIONS = [
  "$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default", "examples",
  "format", "readOnly", "writeOnly", "deprecated",
];
const KNOWN = new Set([...VALIDATING, ...ANNOTATIONS]);
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** The keywords compileSchema accepts: [validating, annotations]. */
export const SCHEMA_KEYWORDS = Object.freeze({ validating: Object.freeze(VALIDATING), annotations: Object.freeze(ANNOTATIONS) });

const MAX_ERRORS = 8;
// The longest problem of an anyOf's or a oneOf's branch quoted, in UTF-16 units.
const MAX_QUOTED = 200;
// The deepest value checked: a tool call's arguments nest at most as deep.
const MAX_DEPTH = 1000;

class SchemaError extends Error {}

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function describe(v) {
  const t = typeOf(v);
  return t === "integer" ? "number" : t === "object" || t === "array" ? `an ${t}` : t;
}

// shown names a malformed keyword's value: a string, number, boolean or
// null as it is written, anything else by its type.
function shown(v) {
  if (v === null || v === undefined || typeof v === "boolean" || typeof v === "number") return String(v);
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? head(v, 40) + "…" : v);
  return typeof v === "object" ? describe(v) : `a ${typeof v}`;
}

// pathKey appends a property to a path: $.a, $["odd key"].
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const pathKey = (path, k) => (IDENT.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

// canonical is a JSON text with sorted keys, for equality of JSON values.
function canonical(v) {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (isObj(v)) {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }
  return JSON.stringify(v) ?? "null";
}

// jsonValue throws naming the first value under v, at path at, that JSON
// would drop or change: a function, a symbol, a bigint, NaN or ±Infinity,
// an array's hole or undefined item (an object's undefined member is
// absent, as in JSON). Objects are walked by their own keys; a cycle is
// check's to name.
function jsonValue(v, at, seen = new Set()) {
  const t = typeof v;
  if (t === "undefined" || t === "function" || t === "symbol" || t === "bigint" || (t === "number" && !Number.isFinite(v))) {
    const what = t === "number" || t === "undefined" ? String(v) : `a ${t}`;
    throw new SchemaError(`${at}: ${what} is not JSON (the model would not get the schema checked)`);
  }
  if (v === null || t !== "object" || seen.has(v)) return;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw new SchemaError(`${at}[${i}]: a hole is not JSON (the model would get null)`);
      jsonValue(v[i], `${at}[${i}]`, seen);
    }
  } else for (const k of Object.keys(v)) if (v[k] !== undefined) jsonValue(v[k], pathKey(at, k), seen);
  seen.delete(v);
}

const short = (v) => {
  const s = canonical(v);
  return s.length > 60 ? head(s, 57) + "..." : s;
};

// decimal is a finite number as JavaScript writes it (the shortest
// decimal that reads back as it: the JSON text's, up to 15 significant
// digits) in integers: [digits, exponent], the number digits × 10^exponent.
function decimal(v) {
  const [, sign, int, frac = "", exp = "0"] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(v));
  return [BigInt(sign + int + frac), Number(exp) - frac.length];
}

// multiple reports whether v is a multiple of m (m > 0), exactly, on
// their decimals: dividing in floating point, whose error grows with the
// quotient, refused 1234567.89 as a multiple of 0.01.
function multiple(v, m) {
  const [a, p] = decimal(v);
  const [b, r] = decimal(m);
  const e = Math.min(p, r);
  return (a * 10n ** BigInt(p - e)) % (b * 10n ** BigInt(r - e)) === 0n;
}

// head is the first n UTF-16 units of s, one fewer when the last is the
// first half of a surrogate pair: an error names a value by its head, and
// half an emoji would reach the model (and the Trace) as U+FFFD.
function head(s, n) {
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

/**
 * Compiles a JSON Schema (an object or a boolean). Throws an Error naming
 * the schema path of a keyword that is unknown or malformed. The result
 * validates a parsed JSON value and returns the list of what is wrong
 * (empty when the value is valid), each entry starting with the value's
 * path ("$", "$.path", "$.items[2]").
 */
export function compileSchema(schema) {
  const patterns = new Map(); // schema node → RegExp
  const open = new Set(); // the schema objects being checked, from the root down
  const checked = new Set(); // every schema object checked
  const check = (s, at) => {
    if (typeof s === "boolean") return;
    if (!isObj(s)) throw new SchemaError(`${at}: want a schema (an object or a boolean), got ${shown(s)}`);
    if (open.has(s)) throw new SchemaError(`${at}: the schema contains itself (a recursive schema refers to itself with $ref)`);
    checked.add(s);
    open.add(s);
    checkNode(s, at);
    open.delete(s);
  };
  const checkNode = (s, at) => {
    for (const k of Object.keys(s)) {
      if (!KNOWN.has(k)) {
        throw new SchemaError(`${at}: unsupported keyword "${k}" (supported: ${VALIDATING.join(", ")})`);
      }
      // The model gets the schema's JSON: a value JSON would change (a
      // hole, NaN, a function) would check other than it says. A key set
      // to undefined is absent, as in JSON (the checks below name a
      // validating keyword's).
      if (s[k] !== undefined) jsonValue(s[k], `${at}.${k}`);
    }
    const want = (k, ok, what) => {
      if (k in s && !ok(s[k])) throw new SchemaError(`${at}.${k}: want ${what}, got ${shown(s[k])}`);
    };
    const count = (v) => Number.isInteger(v) && v >= 0;
    const num = (v) => typeof v === "number" && Number.isFinite(v);
    want("type", (v) => (typeof v === "string" ? TYPES.has(v) : Array.isArray(v) && v.length > 0 && v.every((t) => TYPES.has(t))), `one of ${[...TYPES].join(", ")} or an array of them`);
    want("nullable", (v) => typeof v === "boolean", "a boolean");
    want("enum", (v) => Array.isArray(v) && v.length > 0, "a non-empty array (an empty enum matches no value)");
    want("properties", isObj, "an object of schemas");
    want("required", (v) => Array.isArray(v) && v.every((x) => typeof x === "string"), "an array of strings");
    for (const k of ["minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength"]) want(k, count, "a non-negative integer");
    for (const k of ["minimum", "maximum"]) want(k, num, "a number");
    for (const k of ["exclusiveMinimum", "exclusiveMaximum"]) want(k, (v) => num(v) || typeof v === "boolean", "a number");
    want("multipleOf", (v) => num(v) && v > 0, "a positive number");
    want("uniqueItems", (v) => typeof v === "boolean", "a boolean");
    want("pattern", (v) => typeof v === "string", "a string");
    want("prefixItems", Array.isArray, "an array of schemas");
    for (const k of ["anyOf", "oneOf", "allOf"]) want(k, (v) => Array.isArray(v) && v.length > 0, "a non-empty array of schemas");
    want("$ref", (v) => typeof v === "string", "a string");
    for (const k of ["$defs", "definitions"]) want(k, isObj, "an object of schemas");
    if ("pattern" in s) {
      try {
        patterns.set(s, new RegExp(s.pattern, "u"));
      } catch (e) {
        throw new SchemaError(`${at}.pattern: ${e.message}`);
      }
    }
    if ("$ref" in s) resolve(s.$ref, `${at}.$ref`);
    for (const k of ["properties", "$defs", "definitions"]) {
      if (k in s) for (const [name, sub] of Object.entries(s[k])) check(sub, pathKey(`${at}.${k}`, name));
    }
    for (const k of ["additionalProperties", "not"]) if (k in s) check(s[k], `${at}.${k}`);
    if ("items" in s) {
      if (Array.isArray(s.items)) s.items.forEach((sub, i) => check(sub, `${at}.items[${i}]`));
      else check(s.items, `${at}.items`);
    }
    for (const k of ["prefixItems", "anyOf", "oneOf", "allOf"]) {
      if (k in s) s[k].forEach((sub, i) => check(sub, `${at}.${k}[${i}]`));
    }
  };
  const refs = new Map();
  const resolve = (ref, at) => {
    if (refs.has(ref)) return refs.get(ref);
    if (ref !== "#" && !ref.startsWith("#/")) throw new SchemaError(`${at}: only local references ("#/$defs/name") are supported, got ${JSON.stringify(ref)}`);
    let node = schema;
    for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
      let key;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {
        throw new SchemaError(`${at}: ${JSON.stringify(ref)} is not a JSON pointer (a malformed %-escape)`);
      }
      const next = node !== null && typeof node === "object" && Object.hasOwn(node, key) ? node[key] : undefined;
      if (next === undefined) throw new SchemaError(`${at}: ${JSON.stringify(ref)} does not resolve`);
      node = next;
    }
    refs.set(ref, node);
    refAt.set(ref, at);
    return node;
  };
  const refAt = new Map(); // a reference → the path of its first $ref
  check(schema, "parameters");
  // A reference must lead to a schema. One that leads elsewhere (a
  // keyword's value, "#/$defs" itself) is checked as a schema here: a
  // string or null would throw at every call, an object of schemas would
  // check nothing. (The map grows as the targets' own references resolve.)
  for (const [ref, node] of refs) if (!checked.has(node)) check(node, `${refAt.get(ref)} (${JSON.stringify(ref)})`);
  // A chain of $ref (through allOf, anyOf, oneOf or not, which apply to the
  // same value) that comes back to where it started never reaches a value's
  // member: every call would fail as nesting too deep, as if the model's
  // arguments were wrong. Refused here, naming the reference.
  const sameValue = (s) => {
    const out = [];
    if (!isObj(s)) return out;
    if ("$ref" in s) out.push(refs.get(s.$ref));
    for (const k of ["anyOf", "oneOf", "allOf"]) if (k in s) out.push(...s[k]);
    if ("not" in s) out.push(s.not);
    return out;
  };
  const done = new Set();
  const onPath = new Set();
  const loops = (s) => {
    if (!isObj(s) || done.has(s)) return false;
    if (onPath.has(s)) return true;
    onPath.add(s);
    const found = sameValue(s).some(loops);
    onPath.delete(s);
    done.add(s);
    return found;
  };
  for (const [ref, node] of refs) {
    if (loops(node)) throw new SchemaError(`parameters: $ref ${JSON.stringify(ref)} refers back to itself without going into the value (through $ref, allOf, anyOf, oneOf or not only): it could check nothing`);
  }

  const run = (s, v, path, errs, depth) => {
    if (errs.length >= MAX_ERRORS) return;
    if (s === true) return;
    if (s === false) {
      errs.push(`${path}: no value is allowed here`);
      return;
    }
    if (depth > MAX_DEPTH) {
      errs.push(`${path}: the value nests deeper than ${MAX_DEPTH} levels`);
      return;
    }
    // depth counts the value's levels: $ref, allOf, anyOf, oneOf and not
    // apply to the same value (a chain of them is finite: loops are
    // refused above), so a recursive schema checks a list or a tree as
    // deep as a call may nest.
    if ("$ref" in s) run(refs.get(s.$ref), v, path, errs, depth);
    const t = typeOf(v);
    if ("type" in s) {
      const types = typeof s.type === "string" ? [s.type] : s.type;
      // A number JSON.parse reads as ±Infinity (1e400) is none: execute
      // would get Infinity, which JSON writes as null.
      const huge = t === "number" && !Number.isFinite(v);
      const ok = (!huge && types.some((w) => w === t || (w === "number" && t === "integer"))) || (v === null && s.nullable === true);
      if (!ok) {
        const got = v === null ? "null" : huge ? `a number beyond JavaScript's range (read as ${v})` : t === "number" && types.includes("integer") ? "a fraction" : describe(v);
        errs.push(`${path}: want ${types.join(" or ")}${s.nullable ? " or null" : ""}, got ${got}`);
        return;
      }
    }
    if ("const" in s && canonical(v) !== canonical(s.const)) errs.push(`${path}: want ${short(s.const)}, got ${short(v)}`);
    if ("enum" in s) {
      const c = canonical(v);
      if (!s.enum.some((e) => canonical(e) === c) && !(v === null && s.nullable === true)) {
        errs.push(`${path}: want one of ${s.enum.map(short).join(", ")}, got ${short(v)}`);
      }
    }
    if (t === "number" || t === "integer") {
      const exMin = s.exclusiveMinimum === true ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum : undefined;
      const exMax = s.exclusiveMaximum === true ? s.maximum : typeof s.exclusiveMaximum === "number" ? s.exclusiveMaximum : undefined;
      if (typeof s.minimum === "number" && s.exclusiveMinimum !== true && v < s.minimum) errs.push(`${path}: ${v} is less than the minimum ${s.minimum}`);
      if (typeof s.maximum === "number" && s.exclusiveMaximum !== true && v > s.maximum) errs.push(`${path}: ${v} is more than the maximum ${s.maximum}`);
      if (exMin !== undefined && v <= exMin) errs.push(`${path}: ${v} is not more than ${exMin}`);
      if (exMax !== undefined && v >= exMax) errs.push(`${path}: ${v} is not less than ${exMax}`);
      if (typeof s.multipleOf === "number" && !multiple(v, s.multipleOf)) errs.push(`${path}: ${v} is not a multiple of ${s.multipleOf}`);
    }
    if (t === "string") {
      const n = "minLength" in s || "maxLength" in s ? [...v].length : 0;
      if ("minLength" in s && n < s.minLength) errs.push(`${path}: ${n} characters, want at least ${s.minLength}`);
      if ("maxLength" in s && n > s.maxLength) errs.push(`${path}: ${n} characters, want at most ${s.maxLength}`);
      const re = patterns.get(s);
      if (re && !re.test(v)) errs.push(`${path}: ${short(v)} does not match the pattern ${s.pattern}`);
    }
    if (t === "array") {
      if ("minItems" in s && v.length < s.minItems) errs.push(`${path}: ${v.length} items, want at least ${s.minItems}`);
      if ("maxItems" in s && v.length > s.maxItems) errs.push(`${path}: ${v.length} items, want at most ${s.maxItems}`);
      if (s.uniqueItems === true) {
        const seen = new Map();
        v.forEach((x, i) => {
          const c = canonical(x);
          if (seen.has(c)) errs.push(`${path}: items ${seen.get(c)} and ${i} are equal, want unique items`);
          else seen.set(c, i);
        });
      }
      const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null;
      const rest = Array.isArray(s.items) ? undefined : s.items;
      v.forEach((x, i) => {
        const sub = tuple && i < tuple.length ? tuple[i] : rest;
        if (sub !== undefined) run(sub, x, `${path}[${i}]`, errs, depth + 1);
      });
    }
    if (t === "object") {
      const keys = Object.keys(v);
      if ("minProperties" in s && keys.length < s.minProperties) errs.push(`${path}: ${keys.length} properties, want at least ${s.minProperties}`);
      if ("maxProperties" in s && keys.length > s.maxProperties) errs.push(`${path}: ${keys.length} properties, want at most ${s.maxProperties}`);
      for (const k of s.required ?? []) if (!Object.hasOwn(v, k)) errs.push(`${path}: missing the required property ${JSON.stringify(k)}`);
      const props = s.properties ?? {};
      for (const k of keys) {
        if (Object.hasOwn(props, k)) run(props[k], v[k], pathKey(path, k), errs, depth + 1);
        else if (s.additionalProperties === false) errs.push(`${path}: unexpected property ${JSON.stringify(k)}`);
        else if (s.additionalProperties !== undefined) run(s.additionalProperties, v[k], pathKey(path, k), errs, depth + 1);
      }
    }
    if ("allOf" in s) for (const sub of s.allOf) run(sub, v, path, errs, depth);
    for (const k of ["anyOf", "oneOf"]) {
      if (!(k in s)) continue;
      const results = s[k].map((sub) => {
        const e = [];
        run(sub, v, path, e, depth);
        return e;
      });
      const ok = results.filter((e) => e.length === 0).length;
      // Each branch's first problem is quoted by its head: one that is
      // itself an anyOf's would nest the quotes as deep as the value.
      if (ok === 0) errs.push(`${path}: matches none of ${k} (${results.map((e) => (e[0].length > MAX_QUOTED ? head(e[0], MAX_QUOTED - 1) + "…" : e[0])).join("; ")})`);
      else if (k === "oneOf" && ok > 1) errs.push(`${path}: matches ${ok} schemas of oneOf, want exactly one`);
    }
    if ("not" in s) {
      const e = [];
      run(s.not, v, path, e, depth);
      if (e.length === 0) errs.push(`${path}: matches the schema under "not"`);
    }
  };

  return (value) => {
    const errs = [];
    run(schema, value, "$", errs, 0);
    return errs;
  };
}

export { SchemaError };
