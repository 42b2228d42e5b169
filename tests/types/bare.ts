// The types with neither the DOM lib nor @types/node (tsconfig.bare.json).
import type { Floe, OmniMessage, Tool, Transcript, LoadOptions, RunOptions } from "floe";
import type { MockModel } from "floe/test";
export type Surface = [Floe, OmniMessage, Tool, Transcript, LoadOptions, RunOptions, MockModel];
export const run: RunOptions = { signal: undefined, approve: undefined };
