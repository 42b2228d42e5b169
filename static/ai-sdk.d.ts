// Types of floe/ai-sdk (ai-sdk.mjs): an AI SDK language model as a Floe model.
// Structural, so that the package needs none of the AI SDK's: any
// LanguageModelV3 or LanguageModelV4 (@ai-sdk/provider) fits.
import type { AbortSignal, Decision, LLM, MessageStream, OmniMessage, Session, TokenCounts, ToolCallMessage } from "./floe.js";

/** What fromAISDK reads of an AI SDK LanguageModel (specification v3 or v4). */
export interface AISDKLanguageModel {
  readonly specificationVersion: "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doStream(options: any): PromiseLike<{ stream: { getReader(): unknown } }>;
}

/** The AI SDK's providerOptions: keyed by provider name (`{ anthropic: { … } }`). */
export type AISDKProviderOptions = Record<string, Record<string, unknown>>;

export interface FromAISDKOptions {
  /**
   * Sent with every request; a function gets the run's thinkingLevel (absent
   * when none) and returns them, for a provider's own thinking options.
   */
  providerOptions?: AISDKProviderOptions | ((request: { thinkingLevel: string | undefined }) => AISDKProviderOptions | undefined) | undefined;
  /** An integer, 1 or more. */
  maxOutputTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  stopSequences?: string[] | undefined;
  seed?: number | undefined;
  /** Extra request headers. */
  headers?: Record<string, string> | undefined;
  /** session_meta.model_context_window of a session made with this model. */
  contextWindow?: number | undefined;
  /** The session totals the token_usage counts go on from (newLLM's argument, for compaction). */
  sessionTokens?: Partial<TokenCounts> | undefined;
  /**
   * A request whose model sends nothing this long (no answer from doStream,
   * no part of its stream) ends as timeout and is retried; the time the
   * session holds the stream does not count. 0 … 86400000; 0 = none;
   * default 300000.
   */
  idleTimeoutMs?: number | undefined;
}

/**
 * A Floe model (one conversation) that streams from model.doStream. Throws a
 * FloeError (bad_argument) for a value that is no such model, a
 * specificationVersion other than "v3" and "v4", or a bad option.
 */
export declare function fromAISDK(model: AISDKLanguageModel, options?: FromAISDKOptions): LLM & { readonly provider: string; readonly modelId: string };

// The AI SDK's UI (useChat, Chat): declared structurally, the chunks and
// parts Floe makes being members of the AI SDK's own UIMessageChunk and
// UIMessagePart unions, so that they fit its types without importing them.

type Value = unknown;
/**
 * The platform's ReadableStream (of any chunk: the AI SDK's
 * ReadableStream<UIMessageChunk> takes it), or its minimal shape when
 * neither the DOM lib nor @types/node is loaded.
 */
type ChunkStream = typeof globalThis extends { ReadableStream: { prototype: infer T } } ? T : { getReader(): unknown; cancel(reason?: unknown): Promise<void> };

/** A UIMessageChunk (AI SDK 5 and later) of the kinds toUIMessageStream makes. */
export type FloeUIMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "reset-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: Value }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; isAutomatic?: boolean }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }
  | { type: "tool-output-available"; toolCallId: string; output: Value; preliminary?: boolean }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "steering-message"; id: string; parts: Array<{ type: "text"; text: string }> }
  | { type: "file"; url: string; mediaType: string }
  | { type: "finish"; finishReason?: "stop" | "tool-calls" | "error" }
  | { type: "abort"; reason?: string }
  | { type: "error"; errorText: string };

/** What the transport reads of a UIMessage (useChat's messages). */
export interface UIMessageLike {
  id: string;
  role: "system" | "user" | "assistant";
  parts: Array<{ type: string }>;
}

/**
 * A run's messages (session.run(…)) as a ReadableStream of UIMessageChunks,
 * for the AI SDK's readUIMessageStream or a ChatTransport of your own.
 * Cancelling it aborts the run (the stream's return()); its promise
 * settles once the run has ended. Throws a FloeError (bad_argument) for a
 * value that is no message stream, or an options key.
 */
export declare function toUIMessageStream(stream: MessageStream | AsyncIterable<OmniMessage>, options?: Record<string, never>): ChunkStream;

export interface FloeChatTransportOptions {
  /** The session every chat runs in (give this or createSession). */
  session?: Session | undefined;
  /**
   * A chat's session, made (or resumed) the first time the chat sends;
   * called once per chat id, and again after one that failed, or at a
   * message whose session the app closed.
   */
  createSession?: ((chatId: string) => Session | PromiseLike<Session>) | undefined;
  /**
   * Decides a tool call without the chat: "allow", "deny", "forbidden", or
   * "ask" (and undefined) to show it in the chat as a tool part awaiting
   * approval (addToolApprovalResponse answers it). Absent: every call is asked.
   * A subagent's call it asks about is denied. Throwing or anything else denies.
   */
  approve?: ((call: ToolCallMessage) => Decision | "ask" | undefined | PromiseLike<Decision | "ask" | undefined>) | undefined;
  /** Forwarded to every run. */
  thinkingLevel?: string | undefined;
}

/** A ChatTransport of the AI SDK's UI (useChat({ transport }), new Chat({ transport })). */
export interface FloeChatTransport {
  sendMessages(options: {
    trigger: "submit-message" | "regenerate-message";
    chatId: string;
    messageId: string | undefined;
    messages: UIMessageLike[];
    abortSignal: AbortSignal | undefined;
  }): Promise<ChunkStream>;
  /**
   * The chat's run from its start, for a chat made again with the id of
   * one that went away while the run went on (useChat({ resume: true })
   * asks as it mounts): its assistant message replayed, then live. Null
   * when there is none (none since a reload: a run lives in the page), it
   * began before the chat first asked (its chunks are kept only for a
   * chat that asked), or it was stopped or read to its end. Once a chat
   * has asked, the abort of its response is a disconnect: its run goes
   * on; stop(chatId) stops it.
   */
  reconnectToStream(options: { chatId: string; abortSignal?: AbortSignal | undefined }): Promise<ChunkStream | null>;
  /** The stream reconnectToStream gives replays the run's message from its start. */
  readonly resumeStreamIsReplay: true;
  /**
   * Ends the chat's run, streaming or waiting on an approval (which
   * useChat's stop() cannot reach: no response runs), or about to start
   * (a message waiting for the chat's session or for the run it aborts:
   * the run starts aborted), and resolves once it has, with a function for setMessages: the messages given, those holding
   * a call the run left asked changed (new objects) to show it not run
   * (output-error). A chatId that is not a string is "bad_argument".
   */
  stop(chatId: string): Promise<<M extends UIMessageLike>(messages: M[]) => M[]>;
}

/**
 * A ChatTransport that runs a Floe session in the page: each user message
 * is a run; a call asked in the chat waits on addToolApprovalResponse.
 * Throws a FloeError (bad_argument) for bad options.
 */
export declare function floeChatTransport(options: FloeChatTransportOptions): FloeChatTransport;

type ToolState =
  | { state: "input-available"; input: Value }
  | { state: "approval-requested"; input: Value; approval: { id: string; isAutomatic?: boolean } }
  | { state: "approval-responded"; input: Value; approval: { id: string; approved: boolean; isAutomatic?: boolean; reason?: string } }
  | { state: "output-available"; input: Value; output: Value }
  | { state: "output-error"; input: Value; errorText: string }
  | { state: "output-denied"; input: Value; approval: { id: string; approved: false; isAutomatic?: boolean; reason?: string } };

/** A UIMessagePart of the kinds toUIMessages makes. */
export type FloeUIPart =
  | { type: "step-start" }
  | { type: "text"; text: string; state?: "streaming" | "done" }
  | { type: "reasoning"; text: string; state?: "streaming" | "done" }
  | { type: "file"; mediaType: string; url: string }
  | { type: "steering-message"; id: string; parts: Array<{ type: "text"; text: string }> }
  | ({ type: `tool-${string}`; toolCallId: string } & ToolState);

/** A UIMessage toUIMessages makes. */
export interface FloeUIMessage {
  id: string;
  role: "user" | "assistant";
  parts: FloeUIPart[];
}

/**
 * A stored session's messages (readSession) as UIMessages, for useChat({
 * messages }): a user message per prompt (its images as file parts), an
 * assistant message per run (the files its model made as file parts). Ids are idPrefix (default "floe-") and the
 * index of the message each starts at. Given transport, the reply of the
 * session's last run, when that transport holds the run (it goes on, or
 * it is the chat's last), has the id the transport gives the run's
 * message (floe-run-…): a chat restored while the run goes on gets it
 * replayed into that message, not as a second one. Throws a FloeError
 * (bad_argument) for a value that is no array, or a bad option.
 */
export declare function toUIMessages(messages: readonly OmniMessage[], options?: { idPrefix?: string | undefined; transport?: FloeChatTransport | undefined }): FloeUIMessage[];
