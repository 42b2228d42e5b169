// transcript(): what a UI renders, folded from a session's stream. It is
// framework-agnostic: push() every message (or consume() a stream), read
// the state, and redraw from onChange. The objects are updated in place;
// `version` grows on every change.

import { badArg, errMessage, floeError, isArrayArg, knownKeys, readKeys, steeringText } from "./internal.mjs";

const key = (origin, id) => (origin.length ? origin.join("\u0000") + "\u0001" : "") + id;

/**
 * transcript({ onChange }) → a Transcript.
 * onChange(transcript, message) runs after every message that changed it
 * (a message of a subagent changes the sub-transcript and this one).
 */
export function transcript(opts = {}) {
  if (typeof opts === "function") return new Transcript(opts, []);
  // A misspelt onChange would leave a UI that never redraws, without a word.
  if (opts === null || typeof opts !== "object" || isArrayArg(opts, "transcript: options")) throw badArg("transcript: options", "{ onChange } or a function", opts);
  knownKeys(opts, TRANSCRIPT_KEYS, "transcript: options");
  const { onChange } = readKeys(opts, ["onChange"], "transcript: options");
  if (onChange !== undefined && typeof onChange !== "function") throw badArg("transcript: options.onChange", "a function", onChange);
  return new Transcript(onChange, []);
}

const TRANSCRIPT_KEYS = new Set(["onChange"]);

class Transcript {
  /** Conversation order: user texts, and one assistant turn per model request. */
  turns = [];
  #pending = [];
  /** The reconnect being waited for: {attempt, inMs, until?, error}; null when none. */
  retry = null;
  /** "idle" before the first request, "running" during a run, then "done" or "aborted", or "failed" when consume()'s stream threw. */
  status = "idle";
  /** What consume()'s stream threw (status "failed"); null otherwise. */
  error = null;
  /** The abort reason, once the stream ended with abort. */
  abortReason = null;
  /** The session's token counts from the last token_usage. */
  usage = null;
  /** The session_meta payload, when the stream carried one (a subagent's does). */
  meta = null;
  /** The compaction in flight or last finished: {reason, mode, status?, error?}. */
  compaction = null;
  /** Sub-transcripts of subagents by child session id (origin[0]), in first-seen order. */
  subagents = new Map();
  /** The origin chain of this transcript (empty for the root). */
  origin;
  /** Grows on every change. */
  version = 0;

  // Not "Object": Vue's ref() and reactive() leave the transcript as it
  // is instead of wrapping it in a Proxy, which its private fields refuse.
  get [Symbol.toStringTag]() {
    return "Transcript";
  }

  #cards = new Map(); // key(origin, id) → the id's latest card, for this transcript's own calls
  #allCards = []; // every card of this transcript's own calls, in the order they came
  #called = new WeakSet(); // the cards whose complete tool_call came
  #onChange;
  #listeners = new Set();
  #turn = null; // the assistant turn being streamed (or the last one)
  #inRequest = false; // #turn's request_begin came, its request_end not yet
  #open = { text: null, thinking: null };
  #files = 0; // the files the model made so far, which their names count

  constructor(onChange, origin) {
    this.#onChange = typeof onChange === "function" ? onChange : null;
    this.origin = origin;
    // Bound: a store's subscribe is passed on alone, as React's
    // useSyncExternalStore(view.subscribe, () => view.version) does, and
    // push as a callback (messages.forEach(view.push), onMessage(view.push)).
    for (const k of ["subscribe", "push", "consume", "end"]) {
      Object.defineProperty(this, k, { value: this[k].bind(this), writable: true, configurable: true });
    }
  }

  /**
   * Tool calls whose approval is pending (a complete tool_call without a
   * decision yet): this transcript's, then its subagents' (their cards
   * carry the origin the approver sees).
   */
  get pendingApprovals() {
    const all = [...this.#pending];
    for (const sub of this.subagents.values()) all.push(...sub.pendingApprovals);
    return all;
  }

  /** The text streamed so far in the current (last) assistant turn. */
  get text() {
    const t = this.#turn;
    if (!t) return "";
    return t.items.filter((i) => i.kind === "text").map((i) => i.text).join("");
  }

  /** The tool card of a call: tool_call_id and the origin chain of the call ([] or absent for this session's own). */
  card(toolCallId, origin = []) {
    if (origin.length === 0) return this.#cards.get(key([], toolCallId));
    return this.subagents.get(origin[0])?.card(toolCallId, origin.slice(1));
  }

  /** Every tool card of this transcript (not of subagents), in call order. */
  get cards() {
    return [...this.#allCards];
  }

  /**
   * Calls fn(transcript, null) at once, then fn(transcript, message) after
   * every change; returns the unsubscribe function. The call at once is
   * the store contract (Svelte's $view reads the value it is given then).
   */
  subscribe(fn) {
    // Checked here: a non-function would throw from the next push() instead.
    if (typeof fn !== "function") throw badArg("transcript.subscribe: fn", "a function (transcript, message) => void", fn);
    fn(this, null);
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Consumes a message stream to its end (rethrowing what it throws). */
  async consume(stream) {
    if (stream === null || typeof stream !== "object" || (typeof stream[Symbol.asyncIterator] !== "function" && typeof stream[Symbol.iterator] !== "function")) {
      throw badArg("transcript.consume: stream", "an async iterable of messages (a run's stream)", stream);
    }
    try {
      for await (const m of stream) this.push(m);
    } catch (e) {
      // A stream that throws (session_busy, a network failure) did not
      // end: a UI bound to status shows it failed, not done.
      this.status = "failed";
      this.error = e;
      throw e;
    } finally {
      this.end();
    }
    return this;
  }

  /** Marks the run ended (consume() does it when the stream ends): status "done" unless aborted or failed (a request cut short: aborted). */
  end() {
    this.#cut();
    // A call still running when its stream ends got no output: only a
    // Trace cut while a tool ran (or a loop left early) ends so, as a
    // live run gives every call its output before it ends.
    if (this.#settle(true) && this.status === "running") this.status = "aborted";
    if (this.status !== "aborted" && this.status !== "failed") this.status = "done";
    this.retry = null;
    for (const sub of this.subagents.values()) if (sub.status === "running") sub.end();
    this.#changed(null);
  }

  /** Folds one message in. */
  push(m) {
    let p;
    try {
      p = m === null || typeof m !== "object" ? null : m.payload;
    } catch (e) {
      throw floeError("bad_argument", `transcript.push: message: reading it threw: ${errMessage(e)}`);
    }
    if (p === null || typeof p !== "object") {
      throw badArg("transcript.push: message", "an OmniMessage ({ type, payload })", m);
    }
    if (Array.isArray(m.origin) && m.origin.length > 0) {
      const [child, ...rest] = m.origin;
      let sub = this.subagents.get(child);
      if (!sub) {
        sub = new Transcript(null, [...this.origin, child]);
        this.subagents.set(child, sub);
      }
      sub.push(rest.length ? { ...m, origin: rest } : { ...m, origin: undefined });
      this.#changed(m);
      return;
    }
    if (this.#fold(m)) this.#changed(m);
  }

  #changed(m) {
    this.version++;
    if (this.#onChange) this.#onChange(this, m);
    for (const f of this.#listeners) f(this, m);
  }

  #fold(m) {
    if (m.type === "session_meta") {
      this.meta = m.payload;
      return true;
    }
    const p = m.payload;
    switch (p.type) {
      case "request_begin":
        this.#cut(); // a request a crash or a reload cut off (a Trace read back) never ends
        // Every output of the requests before, late ones too, comes
        // before the next request (E-7.2): a call still running got none
        // (a Trace cut while a tool ran, then resumed).
        this.#settle(true);
        this.#inRequest = true;
        this.retry = null;
        this.status = "running";
        this.error = null;
        this.#turn = { role: "assistant", items: [], status: "streaming", error: null, usage: null, attempt: null };
        this.#open = { text: null, thinking: null };
        this.turns.push(this.#turn);
        return true;
      case "request_end": {
        this.#inRequest = false;
        const t = this.#turn;
        if (t) {
          t.status = p.status;
          t.error = p.error_message ?? null;
          t.attempt = p.attempt ?? null;
        }
        if (p.retry_in_ms != null) {
          const at = typeof m.timestamp === "string" ? Date.parse(m.timestamp) : NaN;
          this.retry = { attempt: p.attempt ?? null, inMs: p.retry_in_ms, until: Number.isNaN(at) ? null : at + p.retry_in_ms, error: p.error_message ?? null };
        }
        return true;
      }
      case "token_usage":
        this.usage = p.session;
        if (this.#turn) this.#turn.usage = p.request;
        return true;
      case "abort":
        this.status = "aborted";
        this.abortReason = p.reason ?? null;
        this.retry = null;
        this.#settle(true);
        return true;
      case "compaction_begin":
        this.compaction = { reason: p.reason, mode: p.mode, status: null, error: null };
        return true;
      case "compaction_end":
        this.compaction = { reason: p.reason, mode: p.mode, status: p.status, error: p.error_message ?? null };
        return true;
      case "text":
        if (p.role === "user") {
          // A steering message shows the words the user gave, marked as steering.
          const steered = typeof p.text === "string" ? steeringText(p.text) : null;
          if (steered === null) this.turns.push({ role: "user", text: p.text, sender: p.sender ?? "user" });
          else this.turns.push({ role: "user", text: steered, sender: p.sender ?? "user", steering: true });
          if (this.status !== "running") {
            this.status = "running";
            this.error = null;
          }
          return true;
        }
        return this.#block("text", p.text, true);
      case "image_url":
      case "inline_data": {
        const image = p.type === "inline_data" && typeof p.mime_type === "string" && /^image\//i.test(p.mime_type);
        if (p.type === "inline_data" && p.role === "assistant" && typeof p.data === "string" && typeof p.mime_type === "string") {
          // A file the model made (an image a model generated): an item of
          // its turn, named for a download; an image also as a data: URL,
          // as a user's image is.
          const f = { kind: "file", mimeType: p.mime_type, data: p.data, name: fileName(p.mime_type, ++this.#files) };
          if (image) f.url = `data:${p.mime_type};base64,${p.data}`;
          this.#open = { text: null, thinking: null };
          this.#current().items.push(f);
          return true;
        }
        // A user's image: on the user turn it follows (a prompt's text,
        // then its images), or a turn of its own.
        const url = p.type === "image_url" ? p.image_url : image ? `data:${p.mime_type};base64,${p.data}` : null;
        if (p.role !== "user" || typeof url !== "string") return false;
        let t = this.turns.at(-1);
        if (t?.role !== "user") this.turns.push((t = { role: "user", text: "", sender: "user" }));
        (t.images ??= []).push(url);
        return true;
      }
      case "thinking":
        return this.#block("thinking", p.thinking, true);
      case "partial_text":
        return this.#partial("text", p.event_type, p.text);
      case "partial_thinking":
        return this.#partial("thinking", p.event_type, p.thinking);
      case "partial_tool_call": {
        const c = this.#callCard(p, true);
        if (p.event_type === "delta") c.arguments += p.arguments;
        return true;
      }
      case "tool_call": {
        const c = this.#callCard(p, true);
        this.#called.add(c);
        c.arguments = p.arguments;
        try {
          // Empty arguments are {}, as a tool() gets them.
          c.args = typeof p.arguments === "string" && p.arguments.trim() === "" ? {} : JSON.parse(p.arguments);
        } catch {
          c.args = undefined;
        }
        c.status = "awaiting_approval";
        this.#pending.push(c);
        return true;
      }
      case "approval_decision": {
        const c = this.#cards.get(key([], p.tool_call_id));
        if (!c) return false;
        c.decision = p.decision;
        c.status = p.decision === "allow" ? "running" : "denied";
        this.#pending = this.#pending.filter((x) => x !== c);
        return true;
      }
      case "partial_tool_call_output": {
        const c = this.#outputCard(p.tool_call_id);
        if (p.event_type === "delta") {
          c.output += p.output;
          if (p.images?.length) c.images = [...p.images]; // one delta carries them whole (P-7)
        }
        return true;
      }
      case "tool_call_output": {
        const c = this.#outputCard(p.tool_call_id);
        c.output = p.output;
        c.images = p.images ?? [];
        c.stopReason = p.stop_reason ?? "completed";
        if (c.status !== "denied") c.status = c.stopReason === "completed" ? "done" : c.stopReason === "aborted" ? "aborted" : "failed";
        this.#pending = this.#pending.filter((x) => x !== c);
        return true;
      }
    }
    return false;
  }

  // #settle ends the calls the run ended before deciding (an abort while
  // an approval was pending, a call cut off mid-stream): no decision and
  // no output will come, so they are aborted, not pending.
  // At the stream's end (ended) or its abort, which the outputs of the
  // calls that ran come before, a call still running is cut off too; it
  // reports whether there was one.
  #settle(ended = false) {
    let cut = false;
    for (const c of this.#allCards) {
      if (c.status === "streaming" || c.status === "awaiting_approval" || (ended && c.status === "running")) {
        cut ||= c.status === "running";
        c.status = "aborted";
      }
    }
    this.#pending = [];
    return cut;
  }

  // #cut ends the last turn when its request is over without a
  // request_end, which only a Trace cut short holds (a crash, a page
  // reloaded mid-run: resume drops that request): it is aborted, its
  // undecided calls and the run too, not streaming and awaiting approval
  // for ever.
  #cut() {
    if (!this.#inRequest) return;
    this.#inRequest = false;
    if (this.#turn.status === "streaming") this.#turn.status = "aborted";
    if (this.status === "running") this.status = "aborted";
    this.#settle();
  }

  // #current returns the turn model output goes to (one is made when a
  // model message comes without request_begin).
  #current() {
    if (!this.#turn) {
      this.#turn = { role: "assistant", items: [], status: "streaming", error: null, usage: null, attempt: null };
      this.turns.push(this.#turn);
    }
    return this.#turn;
  }

  #partial(kind, ev, body) {
    const t = this.#current();
    let item = this.#open[kind];
    if (ev === "start" || !item) {
      item = { kind, text: "", done: false };
      t.items.push(item);
      this.#open[kind] = item;
    }
    if (ev === "delta") item.text += body;
    return true;
  }

  #block(kind, body, done) {
    const t = this.#current();
    const open = this.#open[kind];
    if (open && !open.done) {
      open.text = body;
      open.done = done;
    } else {
      t.items.push({ kind, text: body, done });
    }
    this.#open[kind] = null;
    return true;
  }

  // #callCard returns the card of a call (call: for its partial_tool_call
  // or its complete tool_call): a new one when the id's card already has
  // its complete call, as when a model reuses ids across requests (some
  // servers do), so the new call is not drawn into the old card.
  #callCard(p, call = false) {
    const k = key([], p.tool_call_id);
    let c = this.#cards.get(k);
    if (call && c && this.#called.has(c)) c = undefined;
    if (c && p.name) c.name = p.name; // a start may come without the name (P-8: the last non-empty one)
    if (!c) {
      const t = this.#current();
      c = {
        kind: "tool",
        id: p.tool_call_id,
        name: p.name,
        origin: this.origin,
        arguments: "",
        args: undefined,
        status: "streaming",
        decision: null,
        output: "",
        images: [],
        stopReason: null,
        late: false,
        turn: this.turns.indexOf(t),
      };
      this.#cards.set(k, c);
      this.#allCards.push(c);
      t.items.push(c);
    }
    return c;
  }

  // #outputCard finds the card an output belongs to; output after its
  // turn's request_end is marked late. An output without a call (a
  // resumed history, a misbehaving tool) gets a card of its own.
  #outputCard(id) {
    let c = this.#cards.get(key([], id));
    if (!c) c = this.#callCard({ tool_call_id: id, name: "" });
    if (this.turns[c.turn].status !== "streaming") c.late = true;
    if (c.status === "streaming" || c.status === "awaiting_approval") c.status = "running";
    return c;
  }
}

// fileName names the n-th file a model made for a download: "image-1.png",
// "file-2.pdf"; the extension is the media type's subtype when it is a
// plain word ("bin" when not), a few common ones as their usual extension.
function fileName(mime, n) {
  const [type, sub = ""] = mime.toLowerCase().split(";")[0].trim().split("/");
  let ext = sub.replace(/^x-/, "").replace(/\+.*$/, "");
  ext = FILE_EXTS.get(ext) ?? (/^[a-z0-9]{1,8}$/.test(ext) ? ext : "bin");
  return `${type === "image" ? "image" : "file"}-${n}.${ext}`;
}

const FILE_EXTS = new Map([["jpeg", "jpg"], ["plain", "txt"], ["markdown", "md"], ["octet-stream", "bin"], ["javascript", "js"]]);

export { Transcript };
