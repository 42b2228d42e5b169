// Reads static/floe.d.ts and static/test.d.ts with the TypeScript compiler
// (tests/types's devDependency): the tests compare what they declare with
// what the runtime does. types(src) compiles src, a module next to the .d.ts
// files (import type * as F from "./floe.js"), and returns its type aliases
// by name, with the checker to read them.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(new URL("../types/package.json", import.meta.url));
let ts;
try {
  ts = require("typescript");
} catch {
  throw new Error("these tests read floe.d.ts with TypeScript: run npm ci in tests/types first");
}
export { ts };

const STATIC = fileURLToPath(new URL("../../static/", import.meta.url));
const OPTIONS = {
  strict: true,
  exactOptionalPropertyTypes: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts"],
  types: [],
  noEmit: true,
};

/** Compiles src beside the .d.ts files; throws on a type error. Returns { checker, aliases: Map name → Type }. */
export function types(src) {
  const file = STATIC + "__dts_probe__.ts";
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists } = host;
  host.getSourceFile = (f, ...rest) => (f === file ? ts.createSourceFile(f, src, ts.ScriptTarget.ES2022, true) : getSourceFile.call(host, f, ...rest));
  host.fileExists = (f) => f === file || fileExists.call(host, f);
  const program = ts.createProgram([file], OPTIONS, host);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  if (errors.length) throw new Error(`the probe of floe.d.ts does not compile:\n${errors.join("\n")}`);
  const checker = program.getTypeChecker();
  const aliases = new Map();
  for (const st of program.getSourceFile(file).statements) {
    if (ts.isTypeAliasDeclaration(st)) aliases.set(st.name.text, checker.getTypeAtLocation(st.name));
  }
  return { checker, aliases };
}

/**
 * The keys an options type declares: name → { optional, undefinedOK } (an
 * explicit undefined type-checks under exactOptionalPropertyTypes). A key
 * declared `?: never` (a key the type refuses) is left out.
 */
export function keysOf(checker, type) {
  const keys = new Map();
  for (const p of checker.getPropertiesOfType(type)) {
    const decl = p.declarations?.[0];
    const t = checker.getTypeOfSymbol(p);
    // `k?: never`, or a mapped type's key of type never (test.d.ts's Part).
    const never = checker.getNonNullableType(t).flags & ts.TypeFlags.Never;
    if (never && (!decl || decl.type?.kind === ts.SyntaxKind.NeverKeyword)) continue;
    const parts = t.isUnion() ? t.types : [t];
    const undefinedOK = parts.some((u) => u.flags & ts.TypeFlags.Undefined) && declaresUndefined(decl);
    keys.set(p.name, { optional: !!(p.flags & ts.SymbolFlags.Optional), undefinedOK });
  }
  return keys;
}

// declaresUndefined: whether the declaration's type itself holds undefined
// (`x?: T | undefined`, `x?: undefined`), not only the `?` of an optional
// key, which exactOptionalPropertyTypes does not let take undefined.
function declaresUndefined(decl) {
  const has = (n) =>
    !!n &&
    (n.kind === ts.SyntaxKind.UndefinedKeyword ||
      (ts.isLiteralTypeNode(n) && n.literal.kind === ts.SyntaxKind.UndefinedKeyword) ||
      (ts.isUnionTypeNode(n) && n.types.some(has)) ||
      (ts.isParenthesizedTypeNode(n) && has(n.type)));
  return !!decl && ts.isPropertySignature(decl) && has(decl.type);
}
