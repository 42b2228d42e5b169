// Every JavaScript example of the README, type-checked against the
// package's types as a user's editor checks it: static/ installed as
// node_modules/@floehq/floe, each ```js block a JavaScript module of its own
// (checkJs, strict but for implicit any and null checks), its imports kept at the top and the rest in an async
// function. What an example leaves to the reader (the `approve` it passes,
// the `render` it calls, a session made earlier) is declared once below,
// with the package's own types. An example that calls a method the types
// do not have, passes an option they do not know or a value of the wrong
// type fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ts } from "./dts.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSC = fileURLToPath(new URL("../types/node_modules/typescript/bin/tsc", import.meta.url));
void ts; // (dts.mjs says how to install TypeScript when it is missing)

// What the README's examples use without making it.
const GIVEN = `
import type * as F from "@floehq/floe";
declare global {
  const floe: F.Floe;
  const load: typeof F.load;
  const session: F.Session;
  const llm: F.LLM;
  const tools: F.Tool[];
  const environment: F.Environment;
  const meta: F.SessionMetaPayload;
  const approve: (toolCall: F.ToolCallMessage) => Promise<"allow" | "deny">; // a local run's and a remote one's
  const signal: AbortSignal;
  const id: string;
  const token: string;
  const toolCallId: string;
  const OPENAI_API_KEY: string;
  function render(m: F.OmniMessage): void;
  function reload(): void; // a page of its own reads GET …/messages again
  function done(m: F.OmniMessage): boolean;
}
export {};
`;

// The AI SDK provider an example imports, as its types stand (the real
// ones are checked against floe/ai-sdk in tests/ai-sdk/types.test.mjs).
const AI_SDK = `
declare module "@ai-sdk/anthropic" {
  export function createAnthropic(options?: { apiKey?: string; baseURL?: string }): (modelId: string) => import("@floehq/floe/ai-sdk").AISDKLanguageModel;
}
`;

// zod as far as an example uses it, a Standard Schema as floe.d.ts declares
// it (the real zod, Valibot and ArkType are checked against floe.d.ts in
// tests/standard-schema/types.test.mjs).
const ZOD = `
declare module "zod" {
  import type { StandardJSONSchema } from "@floehq/floe";
  interface Schema<O> extends StandardJSONSchema<unknown, O> {
    int(): Schema<O>;
    min(n: number): Schema<O>;
    max(n: number): Schema<O>;
    describe(text: string): Schema<O>;
    default(value: O): Schema<O>;
  }
  export const z: {
    number(): Schema<number>;
    string(): Schema<string>;
    enum<const E extends readonly [string, ...string[]]>(values: E): Schema<E[number]>;
    object<S extends { [key: string]: Schema<any> }>(shape: S): Schema<{ [K in keyof S]: S[K] extends Schema<infer O> ? O : never }>;
  };
}
`;

/** The README's ```js blocks: [{ line, code }]. */
export function readmeBlocks(text) {
  const blocks = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```js") continue;
    const start = i + 1;
    while (++i < lines.length && lines[i] !== "```");
    blocks.push({ line: start + 1, code: lines.slice(start, i).join("\n") });
  }
  return blocks;
}

/**
 * A block as a module: its import lines first, the rest in an async
 * function. The prompt an example passes is a string of the reader's (in a
 * page the global prompt is window.prompt).
 */
function asModule({ code }) {
  const lines = code.split("\n");
  const imports = lines.filter((l) => /^import\s/.test(l));
  const body = lines.map((l) => (/^import\s/.test(l) ? "" : l)); // same line numbers
  const given = /\bprompt\b/.test(code) && !/\b(const|let|var) prompt\b/.test(code) ? ' const prompt = "";' : "";
  return `${imports.join("; ")}\nexport async function example() {${given}\n${body.join("\n")}\n}\n`;
}

const blocks = readmeBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));

test("the README has JavaScript examples to check", () => {
  assert.ok(blocks.length >= 6, `${blocks.length} blocks`);
});

test("every JavaScript example of the README type-checks against floe.d.ts (checkJs, strict)", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-"));
  try {
    mkdirSync(join(dir, "node_modules", "@floehq"), { recursive: true });
    symlinkSync(join(ROOT, "static"), join(dir, "node_modules", "@floehq", "floe"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    writeFileSync(join(dir, "given.d.ts"), GIVEN);
    writeFileSync(join(dir, "ai-sdk.d.ts"), AI_SDK);
    writeFileSync(join(dir, "zod.d.ts"), ZOD);
    const files = ["given.d.ts", "ai-sdk.d.ts", "zod.d.ts"];
    for (const b of blocks) {
      const name = `readme-${b.line}.mjs`;
      writeFileSync(join(dir, name), asModule(b));
      files.push(name);
    }
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022", module: "esnext", moduleResolution: "bundler", lib: ["ES2022", "DOM", "DOM.Iterable"], types: [],
          // strict, but a JavaScript reader's parameters untyped and a
          // DOM look-up not checked for null
          allowJs: true, checkJs: true, strict: true, noImplicitAny: false, strictNullChecks: false, noEmit: true, skipLibCheck: false,
        },
        files,
      }),
    );
    let out = "";
    try {
      execFileSync(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
    } catch (e) {
      out = e.stdout + e.stderr;
    }
    // An error's line in a block's module is told as the README's: the
    // module has two lines (the imports, the function) before the block's.
    out = out.replace(/readme-(\d+)\.mjs\((\d+),/g, (_, start, l) => `README.md line ${Number(start) + Number(l) - 3} (`);
    assert.equal(out, "", "README examples that do not type-check:\n" + out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
