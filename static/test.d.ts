// Types of floe/test (test.mjs): a scripted model and a stream checker.
import type { GenerateParams, LLM, OmniMessage, StopReason, AbortSignal, TokenCounts } from "./floe.js";

type PartKey = "text" | "thinking" | "chunks" | "toolCall" | "delay" | "error" | "status" | "permanent" | "throws";
/** A part of one kind: the keys of the other kinds are refused, as mockModel refuses them. */
type Part<T> = T & { [K in Exclude<PartKey, keyof T>]?: never };

/** A JSON value, readonly too (a script written `as const`). */
type JSONInput = string | number | boolean | null | readonly JSONInput[] | { readonly [key: string]: JSONInput };

/** One part of a scripted reply (see mockModel). */
export type ReplyPart =
  | string
  | Part<{ text: string; chunks?: readonly string[] | undefined }>
  | Part<{ thinking: string; chunks?: readonly string[] | undefined }>
  | Part<{
      toolCall: {
        name: string;
        /** Encoded as JSON; a string is sent as the arguments' JSON text as it is (not as a JSON string). Default {}. */
        args?: JSONInput | undefined;
        id?: string | undefined;
      };
    }>
  | Part<{ delay: number }>
  | Part<{ error: string; status?: Exclude<StopReason, "completed"> | undefined; permanent?: boolean | undefined }>
  | Part<{ throws: string }>;

/** The answer to one request: one part or several, streamed in order. */
export type Reply = ReplyPart | readonly ReplyPart[];

export interface MockModelOptions {
  provider?: string | undefined;
  modelId?: string | undefined;
  /** An integer, 0 or more. */
  contextWindow?: number | undefined;
  /** Waits of { delay }: resolve false (or see the signal aborted) to end the request "aborted". Default: setTimeout. */
  sleep?: ((ms: number, signal: AbortSignal) => Promise<boolean | void> | boolean | void) | undefined;
}

export interface MockModel extends LLM {
  readonly provider: string;
  readonly modelId: string;
  readonly contextWindow: number;
  /** The params of every request, in order. */
  readonly calls: GenerateParams[];
  /** What a resumed session handed to loadHistory; null before. Its token_usage's session counts go on from the totals handed with it. */
  readonly history: OmniMessage[] | null;
  loadHistory(history: OmniMessage[], sessionTokens: TokenCounts): void;
}

/**
 * A model answering request k with replies[k] in proper fragment
 * discipline, each completed reply ending with token_usage. Requests past
 * the last reply fail permanently with a message saying so.
 */
export function mockModel(replies: readonly Reply[], options?: MockModelOptions): MockModel;

/** The broken ENGINE.md §7 guarantees of a collected stream, "#<index> <what>"; [] when none. */
export function checkStream(messages: readonly OmniMessage[]): string[];

/** Throws an Error listing checkStream's findings; returns the messages when there are none. */
export function assertStream<M extends readonly OmniMessage[]>(messages: M): M;
