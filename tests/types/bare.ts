// The types with neither the DOM lib nor @types/node (tsconfig.bare.json).
import type { Floe, OmniMessage, Tool, Transcript, LoadOptions, RunOptions, ServerSentEvent, ReadBodyOptions } from "floe";
import { httpOutcome, readLines } from "floe";
import type { MockModel } from "floe/test";
export type Surface = [Floe, OmniMessage, Tool, Transcript, LoadOptions, RunOptions, MockModel];
export const run: RunOptions = { signal: undefined, approve: undefined };
export type Helpers = [ServerSentEvent, ReadBodyOptions];
// Without a platform's ReadableStream, a body is anything with getReader.
export const helpers = async (body: { getReader(): unknown }) => [await httpOutcome(new Error("x")), readLines(body, { signal: undefined })];
