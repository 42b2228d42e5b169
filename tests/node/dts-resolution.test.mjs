// The package's types as a TypeScript user meets them: static/ installed as
// node_modules/@floehq/floe, and tsc (strict, exactOptionalPropertyTypes)
// over an ES module and a CommonJS one importing "@floehq/floe", its
// "./test", "./ai-sdk" and "./connect.mjs" under moduleResolution node16, nodenext and
// bundler. connect.mjs exports connect only: its types must not offer
// floe.mjs's other exports, which would type-check and then fail to link.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ts } from "./dts.mjs";

const STATIC = fileURLToPath(new URL("../../static", import.meta.url));
const TSC = fileURLToPath(new URL("../types/node_modules/typescript/bin/tsc", import.meta.url));
void ts; // (dts.mjs says how to install TypeScript when it is missing)

const ESM = `
import floe, { load, connect, openai, type OmniMessage, type Session, type ConnectOptions } from "@floehq/floe";
import { mockModel, checkStream, type MockModel } from "@floehq/floe/test";
import { connect as connectAlone, type RemoteSession, type RemoteRunOptions, type MessageStream } from "@floehq/floe/connect.mjs";
import { fromAISDK, type AISDKLanguageModel } from "@floehq/floe/ai-sdk";

export async function main(): Promise<string[]> {
  const f = await load();
  const llm: MockModel = mockModel(["hi"]);
  const s: Session = f.createSession({ llm, store: false });
  const seen: OmniMessage[] = [];
  for await (const m of s.run("x")) seen.push(m);
  const opts: ConnectOptions = { token: "t" };
  const r: RemoteSession = connectAlone("http://127.0.0.1:8787", "s", opts);
  const run: RemoteRunOptions = { thinkingLevel: "low" };
  const stream: MessageStream = r.run("x", run);
  void stream;
  r.close();
  const model: AISDKLanguageModel = { specificationVersion: "v4", provider: "p", modelId: "m", doStream: async () => ({ stream: { getReader: () => null } }) };
  f.createSession({ llm: fromAISDK(model, { temperature: 0 }), store: false });
  void [floe.load, connect, openai({ model: "m", apiKey: "k" })];
  return checkStream(seen);
}
`;
// What connect.mjs does not export: each line must fail.
const WRONG = `
import { load } from "@floehq/floe/connect.mjs";
import connectDefault from "@floehq/floe/connect.mjs";
void [load, connectDefault];
`;
// The package is ES modules only: a CommonJS file imports its types with
// resolution-mode "import".
const CJS = `
import type { OmniMessage } from "@floehq/floe" with { "resolution-mode": "import" };
import type { MockModel } from "@floehq/floe/test" with { "resolution-mode": "import" };
import type { RemoteSession } from "@floehq/floe/connect.mjs" with { "resolution-mode": "import" };
import type { FromAISDKOptions } from "@floehq/floe/ai-sdk" with { "resolution-mode": "import" };
export type T = [OmniMessage, MockModel, RemoteSession, FromAISDKOptions];
`;

const dir = mkdtempSync(join(tmpdir(), "floe-types-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "node_modules", "@floehq"), { recursive: true });
symlinkSync(STATIC, join(dir, "node_modules", "@floehq", "floe"), "dir");
writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
writeFileSync(join(dir, "main.ts"), ESM);
writeFileSync(join(dir, "wrong.ts"), WRONG);
writeFileSync(join(dir, "types.cts"), CJS);

function tsc(resolution, files) {
  const module = resolution === "bundler" ? "esnext" : resolution;
  const config = `tsconfig.${resolution}.${files.join("+")}.json`;
  writeFileSync(
    join(dir, config),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022", module, moduleResolution: resolution, lib: ["ES2022"], types: [],
        strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: false,
      },
      files,
    }),
  );
  try {
    execFileSync(process.execPath, [TSC, "-p", config], { cwd: dir, encoding: "utf8" });
    return "";
  } catch (e) {
    return e.stdout + e.stderr;
  }
}

for (const resolution of ["node16", "nodenext", "bundler"]) {
  test(`moduleResolution ${resolution}: "@floehq/floe", "/test", "/ai-sdk" and "/connect.mjs" resolve their types`, () => {
    const files = resolution === "bundler" ? ["main.ts"] : ["main.ts", "types.cts"];
    assert.equal(tsc(resolution, files), "");
  });

  test(`moduleResolution ${resolution}: "/connect.mjs" offers only connect, as connect.mjs exports`, () => {
    const out = tsc(resolution, ["wrong.ts"]);
    assert.match(out, /wrong\.ts\(2,\d+\): error TS2305: Module '"@floehq\/floe\/connect\.mjs"' has no exported member 'load'/);
    // (bundler allows a synthetic default import: the bundler then warns)
    if (resolution !== "bundler") assert.match(out, /wrong\.ts\(3,\d+\): error TS1192: Module '"[^"]*connect[^"]*"' has no default export/);
    assert.equal(out.match(/error TS/g).length, resolution === "bundler" ? 1 : 2, out);
  });
}
