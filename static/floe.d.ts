// Types of floe.mjs: the Floe agent context engine compiled to WebAssembly.
// Messages are the OmniMessage protocol's JSON (PROTOCOL.md), as plain
// objects. Every message is one union, discriminated by `type` and by
// `payload.type`, so a `switch` narrows it. The types need neither the DOM
// lib nor @types/node: the platform types they name (AbortSignal, URL,
// Response, WebAssembly.Module) come from whichever the project has.

// ---- platform types ---------------------------------------------------------------

type GlobalClass<K extends string, Fallback> = typeof globalThis extends { [k in K]: { prototype: infer T } } ? T : Fallback;
/** The platform's AbortSignal (DOM or Node), or its minimal shape when neither lib is loaded. */
export type AbortSignal = GlobalClass<"AbortSignal", {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}>;
type URLType = GlobalClass<"URL", { readonly href: string }>;
type ResponseType = GlobalClass<"Response", { readonly ok: boolean; readonly url: string; arrayBuffer(): Promise<ArrayBuffer> }>;
type ByteStream = GlobalClass<"ReadableStream", { getReader(): unknown }>;
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : { readonly __wasmModule: unique symbol };

// ---- protocol enums -------------------------------------------------------------

/** The six stop reasons / statuses (PROTOCOL.md §6). */
export type StopReason = "completed" | "failed" | "aborted" | "timeout" | "malformed" | "auth";
export type Role = "user" | "assistant";
/** Fragment event types (PROTOCOL.md §4). */
export type EventType = "start" | "delta" | "stop";
/** Approval decisions (PROTOCOL.md §5). */
export type Decision = "allow" | "deny" | "forbidden";
/** Senders of a user text; absent means "user". */
export type Sender = "user" | "parent_agent" | "harness" | "server";
export type CompactionReason = "context" | "turns" | "manual";
export type CompactionMode = "summarize" | "discard";
export type SessionSource = "subagent" | "schedule";
export type McpStatus = "completed" | "failed" | "aborted";
export type GoalOutcome = "complete" | "blocked" | "budget_limited" | "aborted";

/** An opaque JSON object passed through verbatim. */
export type Fidelity = { [key: string]: unknown };

// ---- payloads -----------------------------------------------------------------------

/** session_meta payload (PROTOCOL.md §2); it has no `type` key. */
export interface SessionMetaPayload {
  type?: undefined;
  session_id: string;
  provider: string;
  model_id: string;
  model_context_window: number | string;
  system_prompt: string;
  agent_state: string;
  workspace: string;
  source?: SessionSource;
}

export interface TextPayload {
  type: "text";
  role: Role;
  text: string;
  stop_reason?: StopReason;
  fidelity?: Fidelity;
  sender?: Sender;
}
export interface ImageURLPayload {
  type: "image_url";
  role: "user";
  image_url: string;
  stop_reason?: StopReason;
}
export interface InlineDataPayload {
  type: "inline_data";
  role: Role;
  data: string;
  mime_type: string;
  stop_reason?: StopReason;
  fidelity?: Fidelity;
}
export interface ThinkingPayload {
  type: "thinking";
  role: "assistant";
  thinking: string;
  stop_reason?: StopReason;
  fidelity?: Fidelity;
}
export interface InlineThinkingPayload {
  type: "inline_thinking";
  role: "assistant";
  data: string;
  mime_type: string;
  stop_reason?: StopReason;
  fidelity?: Fidelity;
}
export interface ToolCallPayload {
  type: "tool_call";
  role: "assistant";
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
  tool_call_id: string;
  stop_reason?: StopReason;
  fidelity?: Fidelity;
}
export interface ToolCallOutputPayload {
  type: "tool_call_output";
  role: "user";
  output: string;
  /** data: URLs. */
  images?: string[];
  tool_call_id: string;
  stop_reason?: StopReason;
}

export interface PartialTextPayload {
  type: "partial_text";
  role: "assistant";
  event_type: EventType;
  text: string;
  stop_reason?: StopReason;
}
export interface PartialThinkingPayload {
  type: "partial_thinking";
  role: "assistant";
  event_type: EventType;
  thinking: string;
  stop_reason?: StopReason;
}
export interface PartialToolCallPayload {
  type: "partial_tool_call";
  role: "assistant";
  event_type: EventType;
  name: string;
  arguments: string;
  tool_call_id: string;
  stop_reason?: StopReason;
}
export interface PartialToolCallOutputPayload {
  type: "partial_tool_call_output";
  role: "user";
  event_type: EventType;
  output: string;
  images?: string[];
  tool_call_id: string;
  stop_reason?: StopReason;
}

/**
 * Token accounting; all four keys are always present. Other keys a model's
 * token_usage carried (an `input` count, say) follow them as they came
 * (PROTOCOL.md P-5).
 */
export interface TokenCounts {
  cache_read: number;
  cache_write: number;
  output: number;
  total: number;
}

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema object. */
  parameters?: { [key: string]: unknown };
}

export interface RequestBeginPayload {
  type: "request_begin";
}
export interface RequestEndPayload {
  type: "request_end";
  status: StopReason;
  error_message?: string;
  attempt?: number;
  retry_in_ms?: number;
}
export interface ApprovalDecisionPayload {
  type: "approval_decision";
  decision: Decision;
  tool_call_id: string;
}
export interface TokenUsagePayload {
  type: "token_usage";
  session: TokenCounts;
  request: TokenCounts;
}
export interface CompactionBeginPayload {
  type: "compaction_begin";
  reason: CompactionReason;
  mode: CompactionMode;
  context: number;
  turns: number;
}
export interface CompactionEndPayload {
  type: "compaction_end";
  reason: CompactionReason;
  mode: CompactionMode;
  status: StopReason;
  attempt?: number;
  error_message?: string;
}
export interface AbortPayload {
  type: "abort";
  /** The engine always sets a string; readers accept null. */
  reason: string | null;
}
export interface SubagentPayload {
  type: "subagent";
  session_id: string;
}
export interface ToolListReadyPayload {
  type: "tool_list_ready";
  tools: ToolDefinition[];
}
export interface McpServerConnectResult {
  server: string;
  transport: "stdio" | "http" | "sse";
  status: McpStatus;
  duration_ms: number;
  tools?: number;
  error?: string;
}
export interface McpConnectBeginPayload {
  type: "mcp_connect_begin";
  servers: string[];
}
export interface McpConnectEndPayload {
  type: "mcp_connect_end";
  status: McpStatus;
  results: McpServerConnectResult[];
}
export interface GoalFinishedPayload {
  type: "goal_finished";
  outcome: GoalOutcome;
  rounds: number;
  tokens_used: number;
}

export type CompletePayload =
  | TextPayload
  | ImageURLPayload
  | InlineDataPayload
  | ThinkingPayload
  | InlineThinkingPayload
  | ToolCallPayload
  | ToolCallOutputPayload;
export type PartialPayload =
  | PartialTextPayload
  | PartialThinkingPayload
  | PartialToolCallPayload
  | PartialToolCallOutputPayload;
export type ModelPayload = CompletePayload | PartialPayload;
export type EventPayload =
  | RequestBeginPayload
  | RequestEndPayload
  | ApprovalDecisionPayload
  | TokenUsagePayload
  | CompactionBeginPayload
  | CompactionEndPayload
  | AbortPayload
  | SubagentPayload
  | ToolListReadyPayload
  | McpConnectBeginPayload
  | McpConnectEndPayload
  | GoalFinishedPayload;

// ---- envelopes ----------------------------------------------------------------------------

interface Envelope<T extends string, P> {
  /**
   * ISO-8601 UTC with milliseconds. Absent on messages not stamped yet; the
   * engine stamps every message it streams that has none with the time the
   * message reached it (the session's clock), not the time it is read.
   */
  timestamp?: string;
  type: T;
  payload: P;
  /** Subagent chain, outer → inner; absent for the session's own messages. */
  origin?: string[];
}

type EnvelopeOf<T extends string, P> = P extends unknown ? Envelope<T, P> : never;

export type SessionMetaMessage = Envelope<"session_meta", SessionMetaPayload>;
export type ModelMessage = EnvelopeOf<"model_msg", ModelPayload>;
export type EventMessage = EnvelopeOf<"event_msg", EventPayload>;
/** One OmniMessage; `switch (m.payload.type)` narrows `m.payload`. */
export type OmniMessage = SessionMetaMessage | ModelMessage | EventMessage;

export type TextMessage = Envelope<"model_msg", TextPayload>;
export type ToolCallMessage = Envelope<"model_msg", ToolCallPayload>;

// ---- callbacks ------------------------------------------------------------------------------

/** The terminal result of one model request (ENGINE.md §1). */
export interface Outcome {
  status: StopReason;
  errorMessage?: string;
  /** Only with status "failed": do not retry. */
  permanent?: boolean;
  /**
   * The wait the model's server asked for before another request (its
   * Retry-After), in milliseconds, 0 or more (a fraction rounded up): the
   * retry after a "timeout", "malformed" or "failed" (not permanent)
   * outcome waits it when it is longer than the backoff's delay, and the
   * request_end announces it as retry_in_ms. At most 120000: a longer wait
   * makes such an outcome "failed" and permanent, its errorMessage naming
   * the wait. Anything but a number of 0 or more fails the request, named.
   */
  retryAfterMs?: number;
}

export interface GenerateParams {
  /**
   * Only the new input of this request, never history: the model keeps the
   * conversation, adding this input and its reply once the request
   * completes (a failed attempt's input is sent again).
   */
  newMessages: OmniMessage[];
  /** Absent = the model's default; compaction requests never set it. */
  thinkingLevel?: string | undefined;
  /**
   * Aborts when the run is aborted; end promptly with status "aborted". Its
   * reason is the one the run's signal was aborted with, else (close(), a
   * break) an AbortError.
   */
  signal: AbortSignal;
  /** The session's tool list (the same frozen array on every request; [] when none). */
  tools: readonly ToolDefinition[];
  /** The session_meta's system_prompt ("" when none). */
  systemPrompt: string;
}

/**
 * What a producer callback returns: an async iterator (an async generator)
 * whose return value is R. (A Promise of one is accepted at run time too.)
 */
export type Producer<R> = AsyncIterator<OmniMessage, R, undefined>;

/**
 * One stateful model context. streamGenerate yields partial_* fragments and
 * complete messages (token_usage last: a message after it, or a fragment
 * open at it, is "malformed") and returns the Outcome; ending
 * without a value means {status: "completed"}. Throwing or rejecting is a
 * failed request (ENGINE.md E-1.2); yielding something that is not an
 * OmniMessage ends the request as "malformed".
 */
export interface LLM {
  streamGenerate(params: GenerateParams): Producer<Outcome | void>;
  /**
   * A resumed session hands the replayed history to a fresh context: the
   * complete messages of its context, with their fidelity (no fragments,
   * no events). sessionTokens are the session's totals as its Trace last
   * stated them: a token_usage's session counts go on from them (E-17.5).
   * Throwing is an "llm" diagnostic; the context starts empty. A model
   * without loadHistory starts empty too, and an "llm" diagnostic says so. signal
   * aborts when the run is aborted or the session closed first: the run
   * does not wait for the Promise then.
   */
  loadHistory?(history: OmniMessage[], sessionTokens: TokenCounts, context: { readonly signal: AbortSignal }): void | Promise<void>;
  /** session_meta.provider of a session made without meta.provider (default "custom"). */
  readonly provider?: string | undefined;
  /** session_meta.model_id of a session made without meta.model_id (else a string `model` key; default "custom"). */
  readonly modelId?: string | undefined;
  /** session_meta.model_context_window (default 0: unknown). */
  readonly contextWindow?: number | string | undefined;
}

/**
 * What createSession accepts as llm before CheckModel looks at its yields:
 * objects (typed contextually, so literal messages keep their literal
 * types) and primitives (so that CheckModel, not this constraint, names the
 * mistake).
 */
export interface ModelShape {
  streamGenerate(params: GenerateParams): AsyncIterator<OmniMessage | ({ type: string } & object) | string | number | boolean | bigint | null | undefined, Outcome | void, undefined>;
  loadHistory?(history: OmniMessage[], sessionTokens: TokenCounts, context: { readonly signal: AbortSignal }): void | Promise<void>;
}

/**
 * The compile-time check of a model's yields: unknown when streamGenerate
 * yields OmniMessages, else a type whose text says what is wrong.
 */
export type CheckModel<L> = L extends { streamGenerate(params: GenerateParams): AsyncIterator<infer Y, any, any> }
  ? [Y] extends [OmniMessage]
    ? unknown
    : { llm: { streamGenerate: "Error: a yield of streamGenerate is not an OmniMessage (floe.msg builds them)" } }
  : unknown;

/**
 * Decides one real tool call. Throwing, rejecting or any other value means
 * "deny". A decision returned at once (a string, not a Promise: a policy
 * rather than a prompt) costs the engine no wait for a settle.
 * TypeScript widens the one literal of an async arrow (`async () => "allow"`
 * is `Promise<string>`, microsoft/TypeScript#30185): write `"allow" as const`.
 */
export type Approver = (toolCall: ToolCallMessage) => Decision | Promise<Decision>;

export interface ToolRequest {
  toolCall: ToolCallMessage;
  /** The run's approver, for tools that start subagents; absent when the run has none. */
  approve?: Approver | undefined;
  /** Aborts when the run is aborted, with the reason its signal was aborted with (else an AbortError). */
  signal: AbortSignal;
}

/**
 * Runs approved tool calls: yields the tool's messages (partial_tool_call_output
 * fragments, the complete tool_call_output, forwarded subagent messages).
 * Throwing or rejecting is a tool error. The tools a session announces are
 * its tools option: a listTools() (the reference's environments have one)
 * is not called, and an environment that has one, given without tools, is
 * "bad_argument".
 */
export interface Environment {
  executeTool(request: ToolRequest): Producer<unknown>;
}

/** The engine's only source of time and of waiting. */
export interface Clock {
  /** Milliseconds since the epoch: also the timestamps of messages that carry none. */
  now(): number;
  /** Waits ms; resolves false (or rejects) when signal aborted first. */
  sleep(ms: number, signal: AbortSignal): Promise<boolean | void> | boolean | void;
}

/** Receives the session's Trace records in order; rotate starts the next file. */
export interface TraceSink {
  write(record: OmniMessage): void | Promise<void>;
  rotate?(): void | Promise<void>;
}

/**
 * What a diagnostic is about: "trace" (a Trace write failed), "approver" (an
 * approver failed: deny), "tool" (a tool's message was dropped, or it failed
 * after its output), "llm" (a model's message was dropped or not dispatched,
 * loadHistory failed), "panic" (a recovered Go panic, with stack),
 * "subagent" (a subagent run could not start), "clock" (the injected clock
 * failed).
 */
export type DiagnosticKind = "trace" | "approver" | "tool" | "llm" | "panic" | "subagent" | "clock";

export interface Diagnostic {
  kind: DiagnosticKind;
  message: string;
  stack?: string;
}

// ---- options ---------------------------------------------------------------------------------

/**
 * ENGINE.md §2; an absent key takes the default, a present 0 means zero.
 * A plain object (an array, Map or Date is "bad_argument"); every number is
 * an integer in the range given, else "bad_argument" naming the key.
 */
export interface Config {
  /** Turns per run; ≤ 0 = no cap (default). −(2^31 − 1) … 2^31 − 1. */
  maxTurns?: number | undefined;
  /** Retries per turn (default 5). 0 … 2^31 − 1. */
  maxReconnects?: number | undefined;
  /** Backoff base in ms (default 2000). 0 … 2^31 − 1 (the longest timer hosts honour, about 24.8 days). */
  reconnectBackoffMs?: number | undefined;
  /** Backoff ceiling in ms (default 30000). 0 … 2^31 − 1. */
  reconnectBackoffMaxMs?: number | undefined;
  /** Retries per compaction (default: maxReconnects). 0 … 2^31 − 1. */
  compactionMaxReconnects?: number | undefined;
  /** Automatic compaction; needs newLLM (or a Model as llm): without it createSession and resumeSession throw "bad_argument". */
  compaction?: {
    /** > 0: compact when the last request's total reaches it; ≤ 0: never. A safe integer. */
    maxContextLength?: number | undefined;
    /** > 0: compact when the context's turn count reaches it; ≤ 0: never. A safe integer. */
    maxSessionTurns?: number | undefined;
    mode: CompactionMode;
    prompt?: string | undefined;
  } | undefined;
}

/**
 * Every value is read once, when the function is called, on the JavaScript
 * side: a getter or Proxy that throws, a BigInt, a circular or too deeply
 * nested value is "bad_argument" naming the option; so is a key that is
 * none of these options (and in config, config.compaction and meta, a key
 * that is none of theirs), named with the option it is closest to.
 */
export interface SessionOptions {
  /**
   * The session's session_meta payload, checked per PROTOCOL.md §2: every
   * key present with its type ("bad_argument" naming the key). Absent keys
   * take defaults: session_id a new newSessionId(), provider / model_id /
   * model_context_window from llm.provider / llm.modelId / llm.contextWindow
   * ("custom", "custom", 0), system_prompt from system (""), agent_state
   * "floe", workspace the page's origin (Node: the working directory). The
   * session_id names the Trace files `<yyyy-mm-dd>/<session_id>_NNN.jsonl`:
   * non-empty, at most 200 bytes, no "/", "\" or control character, not
   * starting with "." (e.g. the reference's
   * `session-YYYY-MM-DD-HH-mm-ss-<8 hex>`).
   */
  meta?: Partial<SessionMetaPayload> | undefined;
  /** Your model callbacks, or a built-in adapter (floe.openai() and the like). */
  llm: LLM | Model;
  /** The system prompt (session_meta.system_prompt). */
  system?: string | undefined;
  /**
   * A fresh model context after a compaction. With a Model as llm it may be
   * left out: the model is its own factory (a fresh context of the same
   * model). A Model here means a fresh context of that model.
   */
  newLLM?: ((sessionTokens: TokenCounts) => LLM | Model) | Model | undefined;
  /**
   * Runs approved calls of tools that are not tool()s; without it (and
   * without tool()s) every tool call fails.
   */
  environment?: Environment | undefined;
  /**
   * Announced with tool_list_ready on the first run and handed to the model.
   * tool()s run themselves; plain definitions run through environment.
   */
  tools?: ReadonlyArray<Tool<any> | ToolDefinition | StandardToolDefinition> | undefined;
  config?: Config | undefined;
  /** Default: real time. */
  clock?: Clock | undefined;
  /** Also receives every Trace record, whatever the store. */
  trace?: TraceSink | undefined;
  /** Failures that do not change the stream (store failures: kind "trace"). Default: console.warn("floe: <kind>: <message>"), the kind once when the message starts with it; () => {} silences them. */
  onDiagnostic?: ((d: Diagnostic) => void) | undefined;
  /** How long a callback may run on after its abort before it is abandoned (default 1000). 0 … 2^31 − 1. */
  abortGraceMs?: number | undefined;
  /**
   * For a model without vision (ENGINE.md E-11.6): receives each steering entry
   * that holds an image_url, before it is wrapped into its [user_steering] block,
   * and returns the messages to deliver instead, typically each image saved and
   * replaced by a user text "[attached image: <path>]". A run's own prompt is
   * yours to fold before run(). A throw, a rejection or a result that still
   * holds an image_url drops the images (the block says so; an "llm" diagnostic).
   */
  foldInputImages?: ((messages: OmniMessage[]) => OmniMessage[] | Promise<OmniMessage[]>) | undefined;
  /**
   * Where the session's Trace is persisted: default "indexeddb" in a browser,
   * "memory" elsewhere; false persists nothing. An id already stored is not
   * written again (a "trace" diagnostic): resume it with resumeSession.
   */
  store?: StoreOption | false | undefined;
}

/**
 * A Trace store: "indexeddb" (the browser's, one database "floe" per
 * origin), "memory" (this floe instance's), or a directory in the reference
 * layout `<yyyy-mm-dd>/<id>_NNN.jsonl` (Node: floe-node.wasm).
 */
export type StoreOption = "indexeddb" | "memory" | { dir: string };

/** Options of resumeSession: a session's options without meta (the Trace's session_meta is used). */
export interface ResumeOptions extends Omit<SessionOptions, "meta" | "store" | "system"> {
  /** Default as for SessionOptions.store. */
  store?: StoreOption | undefined;
}

/** The store option of the session functions; the default is SessionOptions.store's. */
export interface StoreOptions {
  store?: StoreOption | undefined;
}

/** One stored session, as listSessions returns it. */
export interface SessionSummary {
  id: string;
  /** The text of the session's first user text (at most 1000 bytes); "" when none. */
  firstPrompt: string;
  /** ISO 8601 time of the last write; null when the store does not know. */
  lastActivity: string | null;
  /** Bytes over all its files. */
  size: number;
  /** Trace files (one per model context). */
  files: number;
  /**
   * The source its session_meta names: "subagent" for a subagent's child
   * session (subagentTool, createSubagent), which readSession shows inside
   * its parent, so a session list can leave it out; null for a session of
   * its own.
   */
  source: "subagent" | "schedule" | null;
}

/** One Trace file: the same bytes the reference's JSONL store writes. */
export interface TraceFile {
  /** "<yyyy-mm-dd>/<session_id>_<NNN>.jsonl" */
  name: string;
  /** JSONL: one envelope per line, each ending in "\n". */
  text: string;
}

export interface RunOptions {
  /** Absent: every tool call is denied. */
  approve?: Approver | undefined;
  /**
   * Aborting it aborts the run; the stream ends with an abort message
   * (reason "aborted by user"). Its reason is the reason of the signals
   * the run's model, tools, clock.sleep and fetch get.
   */
  signal?: AbortSignal | undefined;
  /** Forwarded to every request of the run. */
  thinkingLevel?: string | undefined;
}

/**
 * A run's messages. `break` (return()) aborts the run and resolves once the
 * engine finished; after the end every next() gives {done: true}.
 */
export interface MessageStream extends AsyncIterator<OmniMessage, undefined, undefined> {
  [Symbol.asyncIterator](): MessageStream;
  next(): Promise<IteratorResult<OmniMessage, undefined>>;
  /**
   * Aborts the run (a `break`); a stream dropped before its end, with no next() pending, is abandoned so once collected.
   * Called elsewhere (a Stop button), the loop's next() then gives {done: true} once the engine finished too.
   */
  return(value?: unknown): Promise<IteratorReturnResult<undefined>>;
  /** Aborts like return(), then rejects with err. */
  throw(err?: unknown): Promise<IteratorResult<OmniMessage, undefined>>;
}

export type Compactability = "ok" | "unsupported" | "empty" | "just_compacted";

export interface Session {
  readonly id: string;
  /**
   * Throws a FloeError with code "session_busy" while a run or compaction is
   * in flight. With a persisted store and Web Locks, the run holds the lock
   * "floe:session:<id>" until its records are stored; when another tab holds
   * it, the first next() rejects with "session_busy" and nothing is run;
   * until that first next(), a resumeSession, importSession or
   * deleteSession of the session in this program (a parent's delete of it
   * as its child too) rejects with "session_busy", as it does without Web
   * Locks. Without Web Locks (Node), and with the memory store, a lock of the
   * program does the same at once: while another session object of the
   * same session runs, run() throws "session_busy". The lock is the
   * store's: sessions of one id in two stores (two { dir } directories, or
   * the memory store and one) run at once. With a { dir } store
   * the run also holds the file <dir>/.<id>.lock: while another process
   * runs the session, run() throws "session_busy" naming it; a lock file
   * that cannot be made, written or read (a read-only directory, a full
   * disk, a directory in its place) throws "storage" naming the file and
   * the system's error, and nothing runs.
   */
  run(prompt: string | OmniMessage[], options?: RunOptions): MessageStream;
  /**
   * Queues steering for the run in flight (E-11.1) and returns its id (an
   * integer ≥ 1, so truthy) for unsteer(); false when no run is in flight (a manual compaction is none).
   * Input with no steering content (only blank text) queues nothing and
   * still gets an id. An invalid OmniMessage is "bad_argument".
   */
  steer(input: string | OmniMessage[]): SteerID | false;
  /**
   * Withdraws the steering steer() returned id for, if it has not been
   * delivered yet (E-11.2); true when it was still pending. False once it
   * was delivered, withdrawn, or dropped at the end of its run. An id that
   * is not an integer ≥ 1 is "bad_argument".
   */
  unsteer(id: SteerID): boolean;
  /** Wakes a pending reconnect backoff; false when none is pending. */
  skipReconnectWait(): boolean;
  /** A manual compaction between runs; yields nothing when compactability() is not "ok" ("unsupported": no config.compaction or no newLLM). */
  compact(options?: { signal?: AbortSignal | undefined }): MessageStream;
  compactability(): Compactability;
  /**
   * Aborts the run or compaction in flight, if any, as its signal would:
   * its stream still delivers the rest, request_end{aborted} … abort last,
   * as in the Trace. Resolves once that stream has ended and its records
   * are stored (whether or not its consumer is pulling, also after a return()
   * made elsewhere and not awaited); records a failed
   * write held (a full quota) are written once more, or an onDiagnostic of
   * kind "trace" says how many it drops. The same promise on every call. Later calls of other methods throw "closed". Called from
   * inside a callback of the run, do not await it there: the run ends only
   * after that callback returns (or is abandoned after abortGraceMs).
   * A session dropped without close() is closed once it is collected (a
   * stream that can still be read keeps it).
   */
  close(): Promise<void>;
}

/** The id of one steer() call (an integer ≥ 1, unique within the session). */
export type SteerID = number;

/** A child session for a tool (ENGINE.md §15). */
export interface Subagent {
  readonly id: string;
  /**
   * The child's messages, origin prepended; the first run starts with its session_meta.
   * With a store, the run holds its session's lock as Session.run's does
   * (Web Locks from its first next(), this program's lock and a { dir }
   * store's lock file at once) until its records are stored: while another
   * run of the id is in flight it throws, or its first next() rejects with,
   * "session_busy", and deleteSession and resumeSession of the id (and a
   * deleteSession of a parent whose Trace names it) reject with it while
   * this run is in flight, from run() on (not from its first next() only).
   */
  run(prompt: string, options?: { approve?: Approver | undefined; signal?: AbortSignal | undefined }): MessageStream;
  /** Aborts its run in flight (the stream ends with the abort; a stream nobody reads is read to its end, the rest kept for its reader, so the session's lock is let go) and releases the child; one dropped without close() is released once it is collected (its streams keep it). */
  close(): void;
}

export interface Floe {
  /** A session hosted by a Floe server; the same as the module's connect(). */
  connect: typeof connect;
  /** A yield that is not an OmniMessage in options.llm is a compile error naming it (see CheckModel). */
  createSession<L extends ModelShape | Model = LLM>(options: Omit<SessionOptions, "llm"> & { llm: L } & CheckModel<L>): Session;
  /** A child session for a tool (ENGINE.md §15); it writes its own Trace to options.store (the default store when absent, none with false). */
  createSubagent(options: SessionOptions): Subagent;
  /**
   * Resumes a stored session (ENGINE.md §17) with fresh callbacks: history
   * (handed to llm.loadHistory before the first request, when non-empty),
   * carry-over and counters come from its Trace, which it continues.
   * Rejects with "not_found", "invalid_trace", "storage" or "session_busy"
   * (another tab or worker, or another session object of this program, is running it).
   */
  resumeSession(id: string, options: ResumeOptions): Promise<Session>;
  /** The stored sessions, most recent activity first. */
  listSessions(options?: StoreOptions): Promise<SessionSummary[]>;
  /**
   * The session's Trace files, in index order, then those of its subagents'
   * child sessions (and theirs), each named as the reference names a
   * session's files: importSession takes them back as one.
   */
  exportSession(id: string, options?: StoreOptions): Promise<TraceFile[]>;
  /**
   * The stored session as its runs showed it, to render it again (push each
   * into a transcript()): every record of its Trace files in order,
   * session_meta lines included, and after each subagent record the records
   * of the child session it names (when stored in the same store and its
   * Trace starts with a session_meta of source "subagent"), its id
   * prepended to their origin. Read as a resume reads them: a line torn by a
   * crash, or malformed, is left out; so is a child whose Trace does not
   * read, said on the console. What a run in flight has not stored yet
   * is not there. Rejects with "not_found" or "storage".
   */
  readSession(id: string, options?: StoreOptions): Promise<OmniMessage[]>;
  /**
   * Stores a Trace as a new session and returns its id: files as
   * exportSession gives them (a session with its subagents' sessions, stored
   * all or none: a "storage" error names any it stored and could not remove again), or one JSONL text (its session_meta names the session).
   * Rejects with "session_exists" for a stored id and with "invalid_trace",
   * naming the file and line, for a malformed one, or naming the session,
   * for a subagent record naming a stored session the files do not hold.
   * It takes the lock of each session it stores, as a run does: while a
   * run of one is in flight (one that has not stored its first record
   * yet), in any tab or, on a { dir } store, any process, it rejects with
   * "session_busy" naming it, and imports nothing.
   */
  importSession(files: TraceFile[] | string, options?: StoreOptions): Promise<string>;
  /** Deletes a stored session with its subagents' child sessions ("not_found" if there is none; "session_busy", deleting nothing, while a run or compaction of it, or a run of one of those child sessions, is in flight, in any tab or, on a { dir } store, any process; a child session its Trace names that is not stored yet, its run's first record not written, counts too). A session or subagent object of this program still open on it, or on such a child, stores nothing more. */
  deleteSession(id: string, options?: StoreOptions): Promise<void>;
  isFloeError(e: unknown): e is FloeError;
  tool: typeof tool;
  /** A tool running a child session per call (ENGINE.md §15); see SubagentToolSpec. */
  subagentTool(spec: SubagentToolSpec): Tool<{ prompt: string }>;
  msg: typeof msg;
  isMessage: typeof isMessage;
  transcript: typeof transcript;
}

// ---- models: the built-in adapters ----------------------------------------------------------

declare const modelBrand: unique symbol;

/**
 * A built-in model adapter to pass as `llm` (or `newLLM`): the session runs
 * it in Go inside floe.wasm, reading the provider's stream through `fetch`.
 * A frozen description; the key is not one of its properties. One Model may
 * serve any number of sessions (each gets its own context).
 */
export interface Model {
  readonly [modelBrand]: true;
  readonly provider: "openai-chat" | "openai-responses" | "anthropic";
  readonly model: string;
  /** Without the trailing slashes of its path; its query, if any, as given. */
  readonly baseURL: string;
}

export interface ModelOptions {
  /** The model name the server knows. */
  model: string;
  /**
   * Sent only to baseURL (redirects are not followed): `Authorization:
   * Bearer` for OpenAI, `x-api-key` for Anthropic. A key with a line break
   * (read from a file with it), another control character or a character
   * above U+00FF throws bad_argument.
   */
  apiKey?: string | undefined;
  /**
   * Requests go to baseURL + "/chat/completions", "/responses" or
   * "/messages", the path before baseURL's query if it has one, which
   * each request keeps: Azure OpenAI's
   * "https://R.openai.azure.com/openai/deployments/D?api-version=2024-10-21"
   * requests ".../deployments/D/chat/completions?api-version=2024-10-21".
   * A fragment (#) or credentials (user:password@) throw bad_argument.
   * Errors quote the URL without its query; the model's baseURL keeps it,
   * so a key belongs in apiKey or headers rather than in the query.
   */
  baseURL?: string | undefined;
  /**
   * Extra request headers (also sent only to baseURL): a name that is not
   * an HTTP token, or a value with a line break, another control character
   * but a tab or a character above U+00FF, throws bad_argument.
   */
  headers?: Record<string, string> | undefined;
  /**
   * max_tokens (max_output_tokens on the Responses API, max_completion_tokens
   * on OpenAI's own Chat API). Anthropic's default is 8192, raised to the
   * thinking budget + 8192 when the budget is at or above it; a budget at or
   * above a maxTokens given takes half of it (one of 2048 or less is raised
   * so too).
   */
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  /** Sent as top_p. */
  topP?: number | undefined;
  /**
   * The default of RunOptions.thinkingLevel for this model's runs:
   * reasoning_effort (Chat), reasoning.effort (Responses), Anthropic's
   * budget_tokens ("minimal" 1024, "low" 2048, "medium" 8192, "high" 16384,
   * "max" 32768, or a number of tokens as a string; "none"/"off": none).
   */
  thinkingLevel?: string | undefined;
  /**
   * Members added to every request body (provider-specific fields such as
   * seed or top_k). To the Chat adapters, stream_options replaces theirs
   * ({ include_usage: true }) and null sends none.
   */
  body?: Record<string, unknown> | undefined;
  /**
   * A request that waits this long on the server without a byte (for its
   * headers, or in a read of its body) ends as `timeout` and is retried by
   * the session, within a quarter more. The time the session holds the
   * stream (the loop reading run() busy, a call awaiting approval) does
   * not count. Default 300000 (5 minutes); 0 = none; at most 86400000.
   */
  idleTimeoutMs?: number | undefined;
  /**
   * How many bytes the images of a request may take (their data: URLs'
   * base64, or their URLs; a PDF's base64 counts too): past it, or past
   * maxImages, the oldest go as a text saying so, until those kept take
   * half of it, so that a session of many screenshots stays within the
   * API's request limit; an image larger than it alone goes so too. The history keeps them all. Default
   * 24000000 for Anthropic, 40000000 for OpenAI (16000000 to Gemini); 0 =
   * no limit.
   */
  maxImageBytes?: number | undefined;
  /**
   * How many images a request may carry (as maxImageBytes): default 100 for
   * Anthropic, 500 for OpenAI; 0 = no limit. Whatever it is, a request to
   * Anthropic of more than 20 images, one over 2000 px a side, sends the
   * newest (down to 10), and an image over 5 MB of base64 or 8000 px a
   * side goes as a text saying so: the API refuses both.
   */
  maxImages?: number | undefined;
  /**
   * The fetch function requests go through; default globalThis.fetch, looked
   * up at each request. Must return a Response whose body is a
   * ReadableStream of Uint8Array chunks.
   */
  fetch?: ((url: string, init: FetchInit) => Promise<ResponseType>) | undefined;
}

/** What a model's fetch is called with. */
export interface FetchInit {
  method: "POST";
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  redirect: "manual";
}

/** floe.openaiResponses(): baseURL defaults to https://api.openai.com/v1; apiKey required unless baseURL is given. */
export interface OpenAIResponsesOptions extends ModelOptions {
  /**
   * false for a model without vision (one behind LM Studio's Responses
   * API): each image, a user's or a tool output's, goes as the text
   * "[image not sent: the model takes no images]" (a tool output's in its
   * output). No model name turns it off. Default: true.
   */
  images?: boolean | undefined;
  /**
   * true for a reasoning model whose chat template opens its thinking
   * (DeepSeek-R1's, QwQ's, Qwen3's thinking models': the prompt ends in
   * "<think>\n") on a server that leaves the thinking in the text
   * (llama.cpp's server with --reasoning-format none, vLLM without
   * --reasoning-parser): the reply is thinking until its </think>, all of
   * it if none comes, streamed as it comes. A reply whose thinking comes
   * apart (a reasoning field or item) has its text as text. Default:
   * false (only a reply that opens with <think> holds thinking).
   */
  startsInThinking?: boolean | undefined;
}

/** floe.openai(): baseURL defaults to https://api.openai.com/v1; apiKey required unless baseURL is given. */
export interface OpenAIOptions extends ModelOptions {
  /**
   * Speaks Gemini's dialect of the Chat Completions wire (thought signatures
   * sent back, its reasoning efforts): for Gemini behind a proxy or on
   * Vertex AI. Google's own host is told without it. Default: false.
   */
  gemini?: boolean | undefined;
  /**
   * false for a model without vision (DeepSeek's API answers 400 to any
   * image): each image, a user's or a tool output's, goes as the text
   * "[image not sent: the model takes no images]" (a tool output's in its
   * tool message). No model name turns it off. Default: true.
   */
  images?: boolean | undefined;
  /**
   * true for a reasoning model whose chat template opens its thinking
   * (DeepSeek-R1's, QwQ's, Qwen3's thinking models': the prompt ends in
   * "<think>\n") on a server that leaves the thinking in the text
   * (llama.cpp's server with --reasoning-format none, vLLM without
   * --reasoning-parser): the reply is thinking until its </think>, all of
   * it if none comes, streamed as it comes. A reply whose thinking comes
   * apart (a reasoning field or item) has its text as text. Default:
   * false (only a reply that opens with <think> holds thinking).
   */
  startsInThinking?: boolean | undefined;
}

/** floe.openaiCompatible(): Ollama, llama.cpp's server, LM Studio, vLLM, OpenRouter, Gemini…; apiKey optional. */
export interface OpenAICompatibleOptions extends OpenAIOptions {
  baseURL: string;
}

export interface AnthropicOptions extends ModelOptions {
  /**
   * Sends `anthropic-dangerous-direct-browser-access: true`, which Anthropic
   * requires of requests from a page, a Worker or an extension. Default: true
   * in a browser, false in Node.
   */
  browserAccess?: boolean | undefined;
  /** The anthropic-version header (default "2023-06-01"). */
  version?: string | undefined;
  /**
   * Prompt-cache breakpoints (`cache_control`) on the system prompt and on
   * the conversation's last blocks, so that each request reads the prefix
   * the one before cached. Default: true (the API's 5 minutes); "1h" caches
   * each prefix for an hour (its write costs twice the input price, against
   * 1.25 times: worth it when a session pauses longer than 5 minutes); false
   * for a proxy or a compatible server that refuses the field.
   */
  cache?: boolean | "5m" | "1h" | undefined;
  /**
   * false for a model without vision (DeepSeek's Anthropic API takes no
   * images): each image, a user's or a tool result's, goes as the text
   * "[image not sent: the model takes no images]" (a tool result's in its
   * tool_result). Default: true.
   */
  images?: boolean | undefined;
}

/**
 * OpenAI Chat Completions. The four factories need no floe.wasm: they are
 * named exports and methods of the loaded Floe (the same functions).
 */
export function openai(options: OpenAIOptions): Model;
/** An OpenAI-compatible server (the Chat Completions wire). */
export function openaiCompatible(options: OpenAICompatibleOptions): Model;
/** The OpenAI Responses API (also Azure OpenAI, LM Studio). */
export function openaiResponses(options: OpenAIResponsesOptions): Model;
/** Anthropic Messages. */
export function anthropic(options: AnthropicOptions): Model;

export interface Floe {
  /** OpenAI Chat Completions. */
  openai: typeof openai;
  /** An OpenAI-compatible server (the Chat Completions wire). */
  openaiCompatible: typeof openaiCompatible;
  /** The OpenAI Responses API (also Azure OpenAI, LM Studio). */
  openaiResponses: typeof openaiResponses;
  /** Anthropic Messages. */
  anthropic: typeof anthropic;
  newSessionId: typeof newSessionId;
}

// ---- helpers for a model of your own ----------------------------------------------------------

/**
 * The outcome of a failed HTTP request, as Floe's adapters give it (README:
 * Models). For a fetch Response: null when it is ok, else by its status —
 * 401, 403 "auth"; 408, 409, 429, 5xx "timeout"; another 4xx or a redirect
 * not followed "failed", permanent for 400, 402, 404, 405, 413, 415, 422,
 * a redirect and a 429 of insufficient_quota (a quota spent) — with an errorMessage naming `name`, the status, the
 * server's own message (a JSON error's type and message, an HTML page's
 * title, or the first line; read from at most 64 KiB of the body, the rest
 * cancelled) and Retry-After; a "timeout" has the wait the server asked
 * for as its retryAfterMs (retry-after-ms; else Retry-After, seconds or an
 * HTTP date in any of its three forms; else Gemini's retryDelay in the
 * body), none when it asked for none. For what a fetch or a read of its body
 * threw: "aborted" once `signal` aborted (or for an AbortError),
 * "malformed" for a SyntaxError (JSON.parse) or readEvents' "truncated"
 * error, "failed" and permanent for a FloeError (a misuse), else "timeout"
 * (the network failed), naming the error and its cause. Needs no floe.wasm.
 */
export function httpOutcome(response: ResponseType, name?: string, signal?: AbortSignal): Promise<Outcome | null>;
export function httpOutcome(thrown: unknown, name?: string, signal?: AbortSignal): Promise<Outcome>;

/** An event of a text/event-stream body (readEvents). */
export interface ServerSentEvent {
  /** The event field; "message" when the event named none. */
  event: string;
  /** The data lines joined with "\n". */
  data: string;
  /** The last id the stream set (it persists from event to event); "" when none. */
  id: string;
}

export interface ReadBodyOptions {
  /** Aborting it cancels the body (the connection is closed) and the iteration throws its reason. */
  signal?: AbortSignal | undefined;
}

/**
 * The lines of an NDJSON (JSON Lines) body, decoded as UTF-8 (a character
 * split across reads comes whole): split at LF, a CR before it dropped, a
 * last line without its LF yielded too; lines of only whitespace skipped.
 * Leaving the loop early cancels the body. A null body (or any other
 * non-stream) throws "bad_argument". Needs no floe.wasm.
 */
export function readLines(body: ByteStream | null, options?: ReadBodyOptions): AsyncGenerator<string, void, undefined>;

/**
 * The events of a text/event-stream body, framed as the WHATWG HTML
 * standard says (CRLF, LF or CR line ends, comments, data lines joined,
 * an event dispatched at a blank line when it has data, a leading BOM
 * ignored; retry and unknown fields ignored, but llama-server's line
 * "error: {…}", the data of an event of type "error"). A last event whose blank line
 * never came is yielded; a body that ends inside a line throws an Error
 * whose code is "truncated" (httpOutcome reads it as "malformed"), so a
 * stream cut mid-event is told apart from a clean end. Leaving the loop
 * early cancels the body. Needs no floe.wasm.
 */
export function readEvents(body: ByteStream | null, options?: ReadBodyOptions): AsyncGenerator<ServerSentEvent, void, undefined>;

export interface Floe {
  httpOutcome: typeof httpOutcome;
  readLines: typeof readLines;
  readEvents: typeof readEvents;
}

// ---- errors and loading -----------------------------------------------------------------------

export type FloeErrorCode =
  | "bad_argument"
  | "session_busy"
  | "closed"
  | "internal"
  /** No stored session has that id. */
  | "not_found"
  /** importSession: the id is already stored. */
  | "session_exists"
  /** A Trace that does not read (file and line named), or is not resumable. */
  | "invalid_trace"
  /** The store failed: quota, IndexedDB unavailable (private mode), a blocked upgrade, I/O. */
  | "storage"
  /** load(): the bytes are not a WebAssembly module (an HTML page: the message names the likely cause), or no file was found (a missing file, a failed fetch, an HTTP error). */
  | "bad_wasm";

/** Thrown or rejected for API misuse only; callback failures are messages on the stream. */
export interface FloeError extends Error {
  name: "FloeError";
  code: FloeErrorCode;
}

export function isFloeError(e: unknown): e is FloeError;

export interface LoadOptions {
  /**
   * floe.wasm: default new URL("./floe.wasm", import.meta.url), in Node
   * ./floe-node.wasm when present (the build with {dir} stores). A string is
   * resolved against the page (or, in Node, this module); file: URLs are
   * read with node:fs. Serve it as application/wasm to compile while it
   * downloads.
   */
  wasm?: string | URLType | ArrayBuffer | ArrayBufferView | ResponseType | WasmModule | undefined;
}

/**
 * Loads floe.wasm once; later calls, also those made while it loads, return the same Floe, whatever wasm they name (an argument of the wrong kind is still "bad_argument").
 * In Node a timer holds the event loop open until it settles, and none is left after.
 */
export function load(options?: LoadOptions): Promise<Floe>;

// ---- remote sessions (connect.mjs) ------------------------------------------------------------

export interface ConnectOptions {
  /** Sent as "Authorization: Bearer <token>" on every request, the stream included. */
  token?: string | undefined;
  /** A fetch implementation; default globalThis.fetch. */
  fetch?: ((url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<ResponseType>) | undefined;
  /** Wait before reopening a dropped stream (with Last-Event-ID), or posting a lost decision again; default 1000. */
  reconnectDelayMs?: number | undefined;
  /** A stream that brings nothing for this long, not even the server's ping (every 20 s), is reopened; a first connection that meets only a proxy's 502, 503 or 504 for this long ends with it; a request (a POST, /messages, the stream's head) not answered within it is given up, a FloeError "timeout" (the stream's reopened). Default 45000. */
  stallMs?: number | undefined;
}

export interface RemoteRunOptions {
  /**
   * Answers approval requests, each pending call once (however often the
   * server re-sends it, across reconnects and resyncs); without it they stay
   * pending for another client. As for Approver, TypeScript widens the one
   * literal of an async arrow: write `() => "allow"` or `"allow" as const`.
   */
  approve?: ((toolCall: ToolCallMessage) => "allow" | "deny" | Promise<"allow" | "deny">) | undefined;
  /**
   * Aborts the run (POST …/abort). Aborted while the client connects, the
   * run yields its abort and is never posted; an abort the server does not
   * take (it is down) ends the run here with an abort saying so.
   */
  signal?: AbortSignal | undefined;
  thinkingLevel?: string | undefined;
}

export interface RemoteMessagesOptions {
  /** Answers the approval requests of every run while following (another client's too), each pending call once. */
  approve?: ((toolCall: ToolCallMessage) => "allow" | "deny" | Promise<"allow" | "deny">) | undefined;
}

/** GET /api/sessions/{id}/messages. */
export interface RemoteHistory {
  sessionId: string;
  state: "idle" | "running" | "compacting";
  /** The Trace's records, every file in order (session_meta lines included). */
  messages: OmniMessage[];
  pendingApprovals?: ToolCallMessage[];
  /** While a run or compaction is in flight: the channel's last id and the open fragments. */
  live?: { cursor: string; fragments: OmniMessage[] };
}

/**
 * An error from a remote session: name "FloeError", the server's error code
 * ("session_busy" for a busy session, "session_not_found", "unauthorized",
 * "origin_not_allowed", "approval_not_found", "bad_request", …, or
 * "http_<status>") and the HTTP status; "network" (no status, the fetch
 * error as cause) when the request or a first connection of the stream
 * reached no server; "bad_response" when an answer is not the API's (not
 * JSON, or a stream whose Content-Type is not text/event-stream).
 */
export interface RemoteError extends Error {
  name: "FloeError";
  code: string;
  status?: number;
}

export interface RemoteSession {
  readonly id: string;
  /** The run state as last reported by the server. */
  readonly state: "idle" | "running" | "compacting";
  /** Tool calls awaiting a decision, oldest first. */
  readonly pendingApprovals: ToolCallMessage[];
  /**
   * Every message of the session: the complete messages delivered so far (on
   * first use, the history), then the live stream; each complete message
   * once, across reconnects and resyncs. Never ends on its own once
   * connected; a first connection that reaches no server ends it with code
   * "network".
   */
  messages(options?: RemoteMessagesOptions): MessageStream;
  /**
   * Starts a task and yields its messages like a local run (the prompt is
   * not yielded). Rejects with code "session_busy" while another task runs,
   * having yielded nothing of it, "network" when the server cannot be
   * reached.
   * break aborts the run and resolves once the server reports it idle.
   */
  run(prompt: string | OmniMessage[], options?: RemoteRunOptions): MessageStream;
  /** Steering for the run in flight; false when none is. */
  steer(text: string, images?: string[]): Promise<boolean>;
  /** Aborts the run in flight (pending approvals are denied); false when idle. */
  abort(): Promise<boolean>;
  /** Answers a pending approval by tool_call_id. */
  approve(toolCallId: string, decision: "allow" | "deny"): Promise<void>;
  /** Skips the engine's pending reconnect wait; false when none was pending. */
  retryNow(): Promise<boolean>;
  /** Starts a manual compaction. */
  compact(): Promise<void>;
  history(): Promise<RemoteHistory>;
  /**
   * Closes the stream and ends what is in flight (requests, reconnect
   * waits); iterators end, and later calls fail with code "closed".
   */
  close(): void;
}

/** Connects to session sessionId of the Floe server at baseURL (no WebAssembly needed). */
export function connect(baseURL: string, sessionId: string, options?: ConnectOptions): RemoteSession;

declare const floe: {
  load: typeof load;
  isFloeError: typeof isFloeError;
  tool: typeof tool;
  msg: typeof msg;
  isMessage: typeof isMessage;
  transcript: typeof transcript;
  connect: typeof connect;
  newSessionId: typeof newSessionId;
  httpOutcome: typeof httpOutcome;
  readLines: typeof readLines;
  readEvents: typeof readEvents;
  openai: typeof openai;
  openaiCompatible: typeof openaiCompatible;
  openaiResponses: typeof openaiResponses;
  anthropic: typeof anthropic;
};
export default floe;

// ---- tools ------------------------------------------------------------------------------------

/** A JSON value. */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };

/**
 * A JSON Schema of the supported keyword set (README: Tools): type
 * (incl. "integer" and arrays with "null"), nullable, enum, const,
 * properties, required, additionalProperties, min/maxProperties, items,
 * prefixItems, min/maxItems, uniqueItems, minimum, maximum,
 * exclusiveMinimum/Maximum, multipleOf, min/maxLength, pattern,
 * anyOf/oneOf/allOf/not, $ref to local $defs; annotations ignored. Any
 * other keyword makes tool() throw.
 */
/** A JSON Schema: an object, or a boolean inside one (a property's, an item's…). */
export type JSONSchema = boolean | JSONSchemaObject;
/** A JSON Schema object, as a tool's parameters must be. */
export type JSONSchemaObject = { [keyword: string]: unknown };

/** What a tool's execute may return: the output text, a value serialized as JSON, output with images, or output fragments. */
export type ToolResult = string | { output: string; images?: string[] | undefined } | ToolFragments | JSONValue | void;
/** Output fragments (an async generator yielding strings), streamed as partial_tool_call_output deltas. */
export type ToolFragments = AsyncIterable<string>;

export interface ToolContext {
  /**
   * Aborts when the run is aborted, with the reason the run's signal was
   * aborted with (else an AbortError). A tool that ends after it, however
   * it ends, gets the output it gave followed by "[interrupted: tool
   * aborted by user]", stop_reason "aborted". With timeoutMs it also aborts
   * at the limit, its reason a DOMException "TimeoutError".
   */
  signal: AbortSignal;
  toolCall: ToolCallMessage;
  /** A string streams an output fragment (part of the output); a message with origin is forwarded as is (a subagent's). */
  emit(fragmentOrForwarded: string | OmniMessage): void;
  /**
   * The run's approver (for subagents); absent when the run has none. Once
   * the run is aborted it rejects with a FloeError "closed" (the approver
   * is not asked, or no longer waited for); a message that is not a
   * tool_call is "bad_argument". An approver that throws, rejects or
   * answers no decision gives "deny", with an "approver" diagnostic.
   */
  approve?: Approver | undefined;
}

export interface ToolSpec<A, R = ToolResult> {
  name: string;
  description?: string | undefined;
  /** The arguments' JSON Schema, an object (true or false only inside it); default { type: "object", properties: {} }. A Standard Schema (zod, Valibot, ArkType) is the other overload of tool(). */
  parameters?: JSONSchemaObject | undefined;
  /**
   * Runs one approved call with the parsed arguments, valid against
   * parameters (invalid ones never get here: the call gets a failed
   * output naming what was wrong). Throwing is a tool error.
   */
  execute(args: A, context: ToolContext): R;
  /**
   * The longest a call may run, in milliseconds (an integer; 0 or absent:
   * no limit). At the limit the call's signal aborts and the call ends at
   * once, failed, with "[tool error] timed out after 120 s" after what it
   * streamed; a tool that ignores its signal is not waited for, and the
   * run goes on.
   */
  timeoutMs?: number | undefined;
  /**
   * The longest output, in characters as String length counts them
   * (UTF-16 code units; an integer, 0 or absent: no limit). A longer one,
   * returned or streamed, keeps its head (never half a surrogate pair)
   * followed by the line "[output cut: N of M characters left out]";
   * fragments past it are not streamed. Images do not count.
   */
  maxOutputLength?: number | undefined;
}

/**
 * The compile-time check of what a tool's execute returns: unknown when it
 * is a ToolResult (or a Promise of one), else a type whose text says what is
 * wrong, so the error reads it.
 */
export type CheckToolResult<R> = [Awaited<R>] extends [infer V]
  ? [V] extends [never]
    ? unknown // an execute that only throws (a stub, a test's failing tool)
    : V extends AsyncIterable<infer Y>
      ? [Y] extends [string]
        ? unknown
        : { execute: "Error: a tool's async generator must yield strings (its output fragments)" }
      : [V] extends [ToolResult]
        ? unknown
        : { execute: "Error: a tool's execute must return a string, a JSON value, { output, images }, or an async iterable of strings" }
  : never;

/** A tool made by tool(): a ToolDefinition that runs itself. */
export interface Tool<A = Record<string, unknown>> extends ToolDefinition {
  readonly description: string;
  readonly execute: (args: A, context: ToolContext) => ToolResult | Promise<ToolResult>;
}

/**
 * The arguments' type a JSON Schema describes, for the keywords that name
 * a type: type (one), enum, const, nullable (null too, with type or
 * enum), properties with required, items and additionalProperties: false
 * (an object without it may hold more keys). Anything else is unknown; an
 * array with prefixItems or a tuple's items is unknown[].
 */
export type FromSchema<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E | OrNull<S>
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly type: "string" }
      ? string | OrNull<S>
      : S extends { readonly type: "number" | "integer" }
        ? number | OrNull<S>
        : S extends { readonly type: "boolean" }
          ? boolean | OrNull<S>
          : S extends { readonly type: "null" }
            ? null
            : S extends { readonly type: "array" }
              ? (S extends { readonly prefixItems: unknown }
                  ? unknown[]
                  : S extends { readonly items: infer I }
                    ? FromSchema<I>[]
                    : unknown[]) | OrNull<S>
              : S extends { readonly type: "object" }
                ? ObjectFromSchema<S> | OrNull<S>
                : unknown;

// nullable: true (OpenAPI) lets null through type and enum.
type OrNull<S> = S extends { readonly nullable: true } ? null : never;
type RequiredKeys<S> = S extends { readonly required: readonly (infer K)[] } ? K : never;
type Flat<T> = { [K in keyof T]: T[K] } & {};
type ObjectFromSchema<S> = S extends { readonly properties: infer P }
  ? Flat<
      { -readonly [K in keyof P as K extends RequiredKeys<S> ? K : never]: FromSchema<P[K]> } & {
        -readonly [K in keyof P as K extends RequiredKeys<S> ? never : K]?: FromSchema<P[K]>;
      }
    > &
      (S extends { readonly additionalProperties: false } ? {} : { [key: string]: unknown })
  : { [key: string]: unknown };

/** A parameters schema whose arguments' type tool() reads (FromSchema). */
export type ObjectSchema = { readonly type: "object"; readonly [keyword: string]: unknown };

/**
 * A Standard Schema (standardschema.dev, v1) that also implements Standard
 * JSON Schema: a zod 4.2+ or ArkType 2 schema, a Valibot 1 schema wrapped
 * in toStandardJsonSchema() of @valibot/to-json-schema. Declared here
 * structurally: Floe imports no schema library.
 */
export interface StandardJSONSchema<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    /** Checks a value: its output (defaults and transforms applied), or its issues. May be async. */
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema: {
      /** The JSON Schema of what validate() takes: what the model gets, asked with target "draft-07". */
      readonly input: (options: { readonly target: "draft-07" }) => Record<string, unknown>;
    };
  };
}

/** What a Standard Schema's validate() gives: the output value, or the issues. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> };

/** The type of a Standard Schema's output: what a tool's execute gets. */
export type InferStandardOutput<S extends StandardJSONSchema> = NonNullable<S["~standard"]["types"]>["output"];

/**
 * A plain definition (run by the environment) whose parameters are a
 * Standard Schema: the model gets its JSON Schema; checking the arguments
 * stays the environment's.
 */
export interface StandardToolDefinition {
  name: string;
  description?: string | undefined;
  parameters: StandardJSONSchema;
}

/**
 * Makes a tool. With a Standard Schema as parameters (zod, Valibot,
 * ArkType: StandardJSONSchema), the model gets its JSON Schema, its own
 * validate() checks each call and execute gets its output, typed as the
 * schema's output.
 */
export function tool<S extends StandardJSONSchema, R = ToolResult>(
  spec: Omit<ToolSpec<InferStandardOutput<S>, R>, "parameters"> & { parameters: S } & CheckToolResult<R>,
): Tool<InferStandardOutput<S>>;
/**
 * Makes a tool. With an object schema as parameters and no type arguments,
 * the arguments' type is read from it (FromSchema); otherwise A is the
 * arguments' type (declare it to match parameters).
 * Throws "bad_argument" for a schema with an unsupported or malformed keyword.
 */
export function tool<const S extends ObjectSchema, R = ToolResult>(
  spec: ToolSpec<FromSchema<S>, R> & { parameters: S } & CheckToolResult<R>,
): Tool<FromSchema<S>>;
export function tool<A = Record<string, unknown>, R = ToolResult>(spec: ToolSpec<A, R> & CheckToolResult<R>): Tool<A>;

export interface SubagentToolSpec {
  /** Default "run_subagent". */
  name?: string | undefined;
  description?: string | undefined;
  /** The child's session options for each call (source "subagent" is set). */
  create(): SessionOptions | Promise<SessionOptions>;
  /**
   * The longest a call may run, in milliseconds (an integer; 0 or absent:
   * no limit), create() included. At the limit the child's run is aborted
   * (its signal's reason a DOMException "TimeoutError") and the call waits
   * for the child's stream to end, which its abort grace bounds when its
   * model ignores the signal, so that each of the child's requests in the
   * stream has its end; the call then fails with "[tool error] timed out
   * after 120 s".
   */
  timeoutMs?: number | undefined;
  /** The longest final text, as ToolSpec.maxOutputLength says. */
  maxOutputLength?: number | undefined;
}

// ---- builders and guards ----------------------------------------------------------------------

type ModelMsg<P> = Envelope<"model_msg", P>;
export type PartialTextMessage = ModelMsg<PartialTextPayload>;
export type TokenUsageMessage = Envelope<"event_msg", TokenUsagePayload>;

/** Builders of OmniMessages: the same shapes and key order as the Go omni builders; no timestamp. An argument PROTOCOL.md refuses (an unknown event type, stop reason or sender, a count below 0) throws "bad_argument" naming it. */
export declare const msg: {
  userText(text: string, sender?: Sender): ModelMsg<TextPayload>;
  text(text: string, stopReason?: StopReason): ModelMsg<TextPayload>;
  thinking(thinking: string, stopReason?: StopReason): ModelMsg<ThinkingPayload>;
  /** args: the JSON text, or a value to serialize (default "{}"). */
  toolCall(id: string, name: string, args?: string | JSONValue): ToolCallMessage;
  toolOutput(id: string, output: string, stopReason?: StopReason, images?: string[]): ModelMsg<ToolCallOutputPayload>;
  partialText(eventType: EventType, text?: string, stopReason?: StopReason): ModelMsg<PartialTextPayload>;
  partialThinking(eventType: EventType, thinking?: string, stopReason?: StopReason): ModelMsg<PartialThinkingPayload>;
  partialToolCall(eventType: EventType, args: string, id: string, name: string, stopReason?: StopReason): ModelMsg<PartialToolCallPayload>;
  partialToolOutput(eventType: EventType, output: string, id: string, stopReason?: StopReason): ModelMsg<PartialToolCallOutputPayload>;
  /** The model's last message: session = the context's totals, request = this request's (request.total is what maxContextLength compares). Absent counts are 0; request defaults to session. */
  tokenUsage(session: Partial<TokenCounts>, request?: Partial<TokenCounts>): TokenUsageMessage;
};

/** The payload types (and "session_meta"). */
export type MessageType = NonNullable<OmniMessage["payload"]["type"]> | "session_meta";
/** The message whose payload type (or, for "session_meta", envelope type) is T. */
export type MessageOf<T extends MessageType> = T extends "session_meta"
  ? SessionMetaMessage
  : Extract<ModelMessage | EventMessage, { payload: { type: T } }>;

/** Narrows a whole message by its payload type: isMessage(m, "tool_call") gives a ToolCallMessage. */
export function isMessage<T extends MessageType>(m: OmniMessage | null | undefined, type: T): m is MessageOf<T>;

/** A session id in the reference's format session-YYYY-MM-DD-HH-mm-ss-<8 hex> (UTC). */
export function newSessionId(now?: number): string;

// ---- transcript -------------------------------------------------------------------------------

export interface TextItem {
  kind: "text" | "thinking";
  /** The text so far. */
  text: string;
  /** The complete message arrived. */
  done: boolean;
}

/** A file the model made (an assistant inline_data message, such as an image an image model generated). */
export interface FileItem {
  kind: "file";
  mimeType: string;
  /** The file's bytes, base64. */
  data: string;
  /** A name for a download: "image-1.png", "file-2.pdf" (counted in the transcript, the extension from the media type, "bin" when it names none). */
  name: string;
  /** An image's data: URL, to draw it as a user's image is; absent for another file (make a Blob of data to offer it). */
  url?: string;
}

export type CardStatus = "streaming" | "awaiting_approval" | "running" | "done" | "failed" | "aborted" | "denied";

/** A tool call and its output, paired by tool_call_id and origin. */
export interface ToolCard {
  kind: "tool";
  id: string;
  name: string;
  /** The origin chain of the call ([] for the session's own). */
  origin: string[];
  /** The arguments' JSON text so far. */
  arguments: string;
  /** The parsed arguments, once the complete tool_call arrived: {} for empty ones, as a tool() gets them; undefined if not JSON. */
  args: unknown;
  status: CardStatus;
  decision: Decision | null;
  /** The output so far, then the complete output. */
  output: string;
  images: string[];
  stopReason: StopReason | null;
  /** Output arrived after its turn's request_end. */
  late: boolean;
  /** The index of its turn in turns. */
  turn: number;
}

export interface UserTurn {
  role: "user";
  /** The user's text; of a steering message, the words inside its [user_steering] markers (trimmed). */
  text: string;
  sender: Sender;
  /** true on a delivered steering message (a user text that is one [user_steering] block, E-11); absent otherwise. */
  steering?: true;
  /** The images of the user's image_url and image inline_data messages that follow the text (inline data as data: URLs); absent when none came. */
  images?: string[];
}

/** One model request. */
export interface AssistantTurn {
  role: "assistant";
  items: Array<TextItem | ToolCard | FileItem>;
  status: "streaming" | StopReason;
  error: string | null;
  /** This request's token counts. */
  usage: TokenCounts | null;
  attempt: number | null;
}

export interface Transcript {
  /** User texts and one assistant turn per model request, in stream order. */
  readonly turns: Array<UserTurn | AssistantTurn>;
  /** The text streamed so far in the last assistant turn. */
  readonly text: string;
  /** Cards whose tool_call arrived and whose approval_decision did not yet: this transcript's, then its subagents'. None after an abort or end() (those cards are "aborted"). */
  readonly pendingApprovals: ToolCard[];
  /** The reconnect being waited for; null when none. until: ms since the epoch, from the message's timestamp. */
  readonly retry: { attempt: number | null; inMs: number; until: number | null; error: string | null } | null;
  /** "failed": the stream consume() read threw (session_busy, a network failure); error holds what it threw. A user prompt or request_begin after it sets "running" again. */
  readonly status: "idle" | "running" | "done" | "aborted" | "failed";
  /** What consume()'s stream threw, with status "failed"; null otherwise. */
  readonly error: unknown;
  readonly abortReason: string | null;
  /** The session's token counts of the last token_usage. */
  readonly usage: TokenCounts | null;
  /** The session_meta payload (a subagent's stream starts with one). */
  readonly meta: SessionMetaPayload | null;
  readonly compaction: { reason: CompactionReason; mode: CompactionMode; status: StopReason | null; error: string | null } | null;
  /** Subagents' transcripts by child session id (origin[0]). */
  readonly subagents: Map<string, Transcript>;
  /** This transcript's origin chain ([] for the root). */
  readonly origin: string[];
  /** Grows on every change. */
  readonly version: number;
  /** This transcript's own cards, in call order. */
  readonly cards: ToolCard[];
  /** The card of a call: its tool_call_id and origin chain (the latest call of the id). */
  card(toolCallId: string, origin?: string[]): ToolCard | undefined;
  push(message: OmniMessage): void;
  /** Pushes every message of a stream, then end(); when the stream throws, status is "failed" and the error is rethrown. */
  consume(stream: AsyncIterable<OmniMessage>): Promise<Transcript>;
  /**
   * The run ended: status "done" unless aborted or failed. A request left
   * without its request_end (a Trace read back that a crash or a reload cut
   * mid-run) ends "aborted", its turn and undecided cards too; so does one
   * followed by another request_begin. A call still "running" (its output
   * never came: a Trace cut while a tool ran) ends "aborted", and the run
   * with it; one of an earlier request ends so at the next request_begin
   * (a resumed session's), which every output of the requests before comes
   * ahead of, and the run goes on.
   */
  end(): void;
  /** fn(transcript, null) at once (the store contract: Svelte's $view), then fn(transcript, message) after every change (message null for end()); returns the unsubscribe function. */
  subscribe(fn: (t: Transcript, m: OmniMessage | null) => void): () => void;
}

export function transcript(options?: { onChange?: ((t: Transcript, m: OmniMessage | null) => void) | undefined } | ((t: Transcript, m: OmniMessage | null) => void)): Transcript;
