// Types of floe.mjs: the Floe agent context engine compiled to WebAssembly.
// Messages are the OmniMessage protocol's JSON (PROTOCOL.md), as plain
// objects. Every message is one union, discriminated by `type` and by
// `payload.type`, so a `switch` narrows it.

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

/** Token accounting; all four keys are always present. */
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
  /** ISO-8601 UTC with milliseconds; absent on messages not stamped yet. */
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
}

export interface GenerateParams {
  /** Only the new input of this request, never history. */
  newMessages: OmniMessage[];
  /** Absent = the model's default; compaction requests never set it. */
  thinkingLevel?: string;
  /** Aborts when the run is aborted; end promptly with status "aborted". */
  signal: AbortSignal;
}

/**
 * What a producer callback returns: an async iterator (an async generator)
 * whose return value is R. (A Promise of one is accepted at run time too.)
 */
export type Producer<R> = AsyncIterator<OmniMessage, R, undefined>;

/**
 * One stateful model context. streamGenerate yields partial_* fragments and
 * complete messages (token_usage last) and returns the Outcome; ending
 * without a value means {status: "completed"}. Throwing or rejecting is a
 * failed request (ENGINE.md E-1.2); yielding something that is not an
 * OmniMessage ends the request as "malformed".
 */
export interface LLM {
  streamGenerate(params: GenerateParams): Producer<Outcome | void>;
  /** A resumed session hands the replayed history to a fresh context. */
  loadHistory?(history: OmniMessage[]): void | Promise<void>;
}

/** Decides one real tool call. Throwing, rejecting or any other value means "deny". */
export type Approver = (toolCall: ToolCallMessage) => Decision | Promise<Decision>;

export interface ToolRequest {
  toolCall: ToolCallMessage;
  /** The run's approver, for tools that start subagents; absent when the run has none. */
  approve?: Approver;
  /** Aborts when the run is aborted. */
  signal: AbortSignal;
}

/**
 * Runs approved tool calls: yields the tool's messages (partial_tool_call_output
 * fragments, the complete tool_call_output, forwarded subagent messages).
 * Throwing or rejecting is a tool error.
 */
export interface Environment {
  executeTool(request: ToolRequest): Producer<unknown>;
}

/** The engine's only source of time and of waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits ms; resolves false (or rejects) when signal aborted first. */
  sleep(ms: number, signal: AbortSignal): Promise<boolean | void> | boolean | void;
}

/** Receives the session's Trace records in order; rotate starts the next file. */
export interface TraceSink {
  write(record: OmniMessage): void | Promise<void>;
  rotate?(): void | Promise<void>;
}

export interface Diagnostic {
  kind: "trace" | "approver" | "tool" | "llm" | "panic" | "clock" | (string & {});
  message: string;
  stack?: string;
}

// ---- options ---------------------------------------------------------------------------------

/** ENGINE.md §2; an absent key takes the default, a present 0 means zero. */
export interface Config {
  /** Turns per run; ≤ 0 = no cap (default). */
  maxTurns?: number;
  /** Retries per turn (default 5). */
  maxReconnects?: number;
  /** Backoff base in ms (default 2000). */
  reconnectBackoffMs?: number;
  /** Backoff ceiling in ms (default 30000). */
  reconnectBackoffMaxMs?: number;
  /** Retries per compaction (default: maxReconnects). */
  compactionMaxReconnects?: number;
  /** Automatic compaction; needs newLLM. */
  compaction?: {
    maxContextLength?: number;
    maxSessionTurns?: number;
    mode: CompactionMode;
    prompt?: string;
  };
}

export interface SessionOptions {
  /** The session's session_meta payload. */
  meta: SessionMetaPayload;
  llm: LLM;
  /** A fresh model context after a compaction. */
  newLLM?: (sessionTokens: TokenCounts) => LLM;
  /** Runs approved tools; without it every tool call fails. */
  environment?: Environment;
  /** Announced with tool_list_ready on the first run. */
  tools?: ToolDefinition[];
  config?: Config;
  /** Default: real time. */
  clock?: Clock;
  /** Also receives every Trace record, whatever the store. */
  trace?: TraceSink;
  /** Failures that do not change the stream (store failures: kind "trace"). */
  onDiagnostic?: (d: Diagnostic) => void;
  /** How long a callback may run on after its abort before it is abandoned (default 1000). */
  abortGraceMs?: number;
  /**
   * Where the session's Trace is persisted: default "indexeddb" in a browser,
   * "memory" elsewhere; false persists nothing. An id already stored is not
   * written again (a "trace" diagnostic): resume it with resumeSession.
   */
  store?: StoreOption | false;
}

/**
 * A Trace store: "indexeddb" (the browser's, one database "floe" per
 * origin), "memory" (this floe instance's), or a directory in the reference
 * layout `<yyyy-mm-dd>/<id>_NNN.jsonl` (Node: floe-node.wasm).
 */
export type StoreOption = "indexeddb" | "memory" | { dir: string };

/** Options of resumeSession: a session's options without meta (the Trace's session_meta is used). */
export interface ResumeOptions extends Omit<SessionOptions, "meta" | "store"> {
  /** Default as for SessionOptions.store. */
  store?: StoreOption;
}

/** The store option of the session functions; the default is SessionOptions.store's. */
export interface StoreOptions {
  store?: StoreOption;
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
  approve?: Approver;
  /** Aborting it aborts the run; the stream ends with an abort message. */
  signal?: AbortSignal;
  /** Forwarded to every request of the run. */
  thinkingLevel?: string;
}

/**
 * A run's messages. `break` (return()) aborts the run and resolves once the
 * engine finished; after the end every next() gives {done: true}.
 */
export interface MessageStream extends AsyncIterator<OmniMessage, undefined, undefined> {
  [Symbol.asyncIterator](): MessageStream;
  next(): Promise<IteratorResult<OmniMessage, undefined>>;
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
   * it, the first next() rejects with "session_busy" and nothing is run.
   */
  run(prompt: string | OmniMessage[], options?: RunOptions): MessageStream;
  /** Queues steering for the run in flight; false when none is. */
  steer(input: string | OmniMessage[]): boolean;
  /** Wakes a pending reconnect backoff; false when none is pending. */
  skipReconnectWait(): boolean;
  /** A manual compaction between runs. */
  compact(options?: { signal?: AbortSignal }): MessageStream;
  compactability(): Compactability;
  /** Aborts the run in flight, if any; later calls throw "closed". */
  close(): Promise<void>;
}

/** A child session for a tool (ENGINE.md §15). */
export interface Subagent {
  readonly id: string;
  /** The child's messages, origin prepended; the first run starts with its session_meta. */
  run(prompt: string, options?: { approve?: Approver; signal?: AbortSignal }): MessageStream;
  close(): void;
}

export interface Floe {
  /** A session hosted by a Floe server; the same as the module's connect(). */
  connect: typeof connect;
  createSession(options: SessionOptions): Session;
  createSubagent(options: SessionOptions): Subagent;
  /**
   * Resumes a stored session (ENGINE.md §17) with fresh callbacks: history
   * (handed to llm.loadHistory before the first request, when non-empty),
   * carry-over and counters come from its Trace, which it continues.
   * Rejects with "not_found", "invalid_trace", "storage" or "session_busy".
   */
  resumeSession(id: string, options: ResumeOptions): Promise<Session>;
  /** The stored sessions, most recent activity first. */
  listSessions(options?: StoreOptions): Promise<SessionSummary[]>;
  /** The session's Trace files, in index order. */
  exportSession(id: string, options?: StoreOptions): Promise<TraceFile[]>;
  /**
   * Stores a Trace as a new session and returns its id: files as
   * exportSession gives them, or one JSONL text (its session_meta names the
   * session). Rejects with "session_exists" for a stored id and with
   * "invalid_trace", naming the file and line, for a malformed one.
   */
  importSession(files: TraceFile[] | string, options?: StoreOptions): Promise<string>;
  /** Deletes a stored session ("not_found" if there is none). */
  deleteSession(id: string, options?: StoreOptions): Promise<void>;
  isFloeError(e: unknown): e is FloeError;
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
  | "storage";

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
  wasm?: string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module;
}

/** Loads floe.wasm once; later calls return the same Floe. */
export function load(options?: LoadOptions): Promise<Floe>;

// ---- remote sessions (connect.mjs) ------------------------------------------------------------

export interface ConnectOptions {
  /** Sent as "Authorization: Bearer <token>" on every request, the stream included. */
  token?: string;
  /** A fetch implementation; default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Wait before reopening a dropped stream (with Last-Event-ID); default 1000. */
  reconnectDelayMs?: number;
}

export interface RemoteRunOptions {
  /** Answers approval requests; without it they stay pending for another client. */
  approve?: (toolCall: ToolCallMessage) => "allow" | "deny" | Promise<"allow" | "deny">;
  /** Aborts the run (POST …/abort). */
  signal?: AbortSignal;
  thinkingLevel?: string;
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
 * "approval_not_found", "bad_request", …, or "http_<status>") and the HTTP
 * status.
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
   * once, across reconnects and resyncs. Never ends on its own.
   */
  messages(): MessageStream;
  /**
   * Starts a task and yields its messages like a local run (the prompt is
   * not yielded). Rejects with code "session_busy" while another task runs.
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
  /** Closes the stream; iterators end. */
  close(): void;
}

/** Connects to session sessionId of the Floe server at baseURL (no WebAssembly needed). */
export function connect(baseURL: string, sessionId: string, options?: ConnectOptions): RemoteSession;

declare const floe: { load: typeof load; isFloeError: typeof isFloeError; connect: typeof connect };
export default floe;
