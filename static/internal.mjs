// Helpers shared by the modules of the package (not part of the API).

/** An Error whose name is "FloeError", with a code. */
export function floeError(code, message) {
  const e = new Error(message);
  e.name = "FloeError";
  e.code = code;
  return e;
}

export const isObject = (v) => v !== null && typeof v === "object";

export function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

export function badArg(name, want, got) {
  return floeError("bad_argument", `${name}: want ${want}, got ${describe(got)}`);
}

/** The message of a thrown value. */
export function errMessage(e) {
  if (e instanceof Error) return String(e.message);
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}
