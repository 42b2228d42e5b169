// Checks of a stored Trace against ENGINE.md §16 (and the parts of §17 that
// decide what a resumed session owes a tool call), for the persistence
// tests. No imports: the test page loads this module too.
//
// A Trace here is what exportSession returns: [{ name, text }], one JSONL
// text per file, in file-index order.

/** The resume placeholder of ENGINE.md §18. */
export const PLACEHOLDER = "[interrupted: process exited before the tool finished]";

/** P-11: `<yyyy-mm-dd>/<session_id>_<NNN>.jsonl`. */
export const FILE_NAME = /^(\d{4}-\d\d-\d\d)\/(.+)_(\d{3})\.jsonl$/;

/** Reports whether m is a message the Trace records (E-16.1). */
export function isRecordable(m) {
  if (!m || typeof m !== "object" || (m.origin != null && m.origin.length !== 0)) return false;
  if (m.type === "session_meta" || m.type === "event_msg") return true;
  return m.type === "model_msg" && !String(m.payload?.type).startsWith("partial_");
}

/**
 * Reports whether record r is Trace-only in the scripted sessions of these
 * tests (PROTOCOL §7): the session's session_meta and the run's Prompt (a
 * user text). Everything else in the Trace also went through the stream.
 */
export function isTraceOnly(r) {
  if (r.type === "session_meta") return true;
  return r.type === "model_msg" && r.payload?.type === "text" && r.payload?.role === "user";
}

/** JSON with sorted keys: equal JSON values give equal strings. */
export function canon(v) {
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  if (v && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

/** A one-line description of a message or record, for failure reports. */
export function brief(m) {
  const p = m?.payload ?? {};
  const parts = [m?.type === "model_msg" ? p.type : `${m?.type}:${p.type ?? ""}`];
  if (p.role) parts.push(p.role);
  if (p.status) parts.push(p.status);
  if (p.decision) parts.push(p.decision);
  if (p.tool_call_id) parts.push(p.tool_call_id);
  const body = p.text ?? p.output ?? p.arguments;
  if (typeof body === "string") parts.push(JSON.stringify(body.length > 40 ? body.slice(0, 40) + "…" : body));
  if (m?.origin) parts.push("origin");
  return parts.join(" ");
}

/**
 * Parses exported files strictly (PROTOCOL §8: one envelope per line, each
 * line ending in "\n"). Returns { records: [{ file, line, rec }], problems }.
 */
export function parseFiles(files) {
  const records = [];
  const problems = [];
  if (!Array.isArray(files)) return { records, problems: [`export returned ${typeof files}, want an array of {name, text}`] };
  files.forEach((f, i) => {
    if (!f || typeof f.name !== "string" || typeof f.text !== "string") {
      problems.push(`P-10: file #${i} is not {name: string, text: string}`);
      return;
    }
    if (f.text.length > 0 && !f.text.endsWith("\n")) problems.push(`P-10: ${f.name} does not end with "\\n" (torn last line)`);
    const lines = f.text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    lines.forEach((line, j) => {
      let rec;
      try {
        rec = JSON.parse(line);
      } catch {
        problems.push(`P-10: ${f.name} line ${j + 1} is not one JSON envelope: ${line.slice(0, 80)}`);
        return;
      }
      records.push({ file: f.name, line: j + 1, rec });
    });
  });
  return { records, problems };
}

/** The records of files, flattened in order. */
export function recordsOf(files) {
  return parseFiles(files).records.map((r) => r.rec);
}

/**
 * Checks files against ENGINE.md §16. Options:
 * - cut: the number of records stored when the page was cut off (reload or
 *   restart); a request open at that point may lack its request_end;
 * - placeholders: Map tool_call_id → number of resume placeholders the
 *   resumed model received for it (in its history or first request);
 * - sessionId: every file must belong to it (P-11 name, session_meta id).
 * Returns a list of violations, each naming its rule; [] when all hold.
 */
export function checkTrace(files, { cut = -1, placeholders = new Map(), sessionId } = {}) {
  const { records, problems } = parseFiles(files);
  const v = [...problems];
  const at = (i) => `#${i} (${records[i].file}:${records[i].line} ${brief(records[i].rec)})`;

  // Every file starts with session_meta (PROTOCOL §7, E-16.9); names P-11.
  const seenFiles = new Set();
  records.forEach(({ file, rec }, i) => {
    if (seenFiles.has(file)) return;
    seenFiles.add(file);
    if (rec.type !== "session_meta") v.push(`first record of ${file} is not session_meta: ${at(i)}`);
    else if (sessionId && rec.payload?.session_id !== sessionId) {
      v.push(`session_meta of ${file} has session_id ${rec.payload?.session_id}, want ${sessionId}`);
    }
  });
  for (const f of Array.isArray(files) ? files : []) {
    if (f && typeof f.text === "string" && f.text.length === 0) v.push(`${f.name} is empty (no session_meta)`);
    const m = FILE_NAME.exec(f?.name ?? "");
    if (!m) v.push(`P-11: file name ${JSON.stringify(f?.name)} is not <yyyy-mm-dd>/<session_id>_<NNN>.jsonl`);
    else if (sessionId && m[2] !== sessionId) v.push(`P-11: file name ${f.name} is not of session ${sessionId}`);
  }

  // E-16.1 / E-16.4: no partial_*, nothing with origin, nothing unrecordable.
  records.forEach(({ rec }, i) => {
    if (String(rec.payload?.type).startsWith("partial_")) v.push(`E-16.4: partial record in the Trace: ${at(i)}`);
    if (rec.origin != null && rec.origin.length !== 0) v.push(`E-16.4: record with origin in the Trace: ${at(i)}`);
    if (!["session_meta", "model_msg", "event_msg"].includes(rec.type)) v.push(`E-16.1: unrecordable envelope type: ${at(i)}`);
  });

  // E-16.5: one request_begin / request_end pair per request; an open request
  // is tolerated only where the page was cut off. Requests do not span files.
  const requestOf = new Array(records.length).fill(-1); // record → request number
  const requests = []; // { begin, end, status }
  let open = -1;
  let file = null;
  records.forEach(({ rec, file: f }, i) => {
    const type = rec.type === "event_msg" ? rec.payload?.type : null;
    if (f !== file) {
      if (open >= 0) v.push(`E-16.9: request opened at ${at(requests[open].begin)} is still open when ${f} starts`);
      open = -1;
      file = f;
    }
    if (type === "request_begin") {
      if (open >= 0) {
        const begin = requests[open].begin;
        if (!(cut >= 0 && begin < cut && i >= cut)) {
          v.push(`E-16.5: request_begin ${at(i)} while the request begun at ${at(begin)} has no request_end`);
        }
      }
      requests.push({ begin: i, end: -1, status: null });
      open = requests.length - 1;
    } else if (type === "request_end") {
      if (open < 0) v.push(`E-16.5: request_end without request_begin: ${at(i)}`);
      else {
        requests[open].end = i;
        requests[open].status = rec.payload.status;
        requestOf[i] = open;
        open = -1;
      }
    } else if (open >= 0) requestOf[i] = open;
  });
  if (open >= 0) v.push(`E-16.5: the Trace ends inside the request begun at ${at(requests[open].begin)} (no request_end after the resumed run ended)`);

  // Pairing (E-6.7, E-16.5, E-17.3): every tool call that got a decision has
  // exactly one tool_call_output — in the Trace, or for a call of a committed
  // request cut off by the exit, the resume placeholder the model received.
  const calls = new Map(); // id → { i, committed, decisions, outputs }
  records.forEach(({ rec }, i) => {
    const p = rec.payload ?? {};
    if (rec.type === "model_msg" && p.type === "tool_call" && p.stop_reason === "completed") {
      if (calls.has(p.tool_call_id)) v.push(`tool_call id ${p.tool_call_id} used twice: ${at(i)}`);
      const r = requestOf[i];
      calls.set(p.tool_call_id, { i, committed: r >= 0 && requests[r].status === "completed", decisions: 0, outputs: 0 });
    } else if (rec.type === "event_msg" && p.type === "approval_decision") {
      const c = calls.get(p.tool_call_id);
      if (!c) v.push(`approval_decision for an unknown tool call: ${at(i)}`);
      else c.decisions++;
    } else if (rec.type === "model_msg" && p.type === "tool_call_output") {
      const c = calls.get(p.tool_call_id);
      if (!c) v.push(`tool_call_output for an unknown tool call: ${at(i)}`);
      else {
        if (c.decisions === 0) v.push(`E-7.2: tool_call_output before its approval_decision: ${at(i)}`);
        c.outputs++;
      }
    }
  });
  for (const [id, c] of calls) {
    const ph = placeholders.get(id) ?? 0;
    if (c.decisions > 1) v.push(`E-5.1: tool call ${id} has ${c.decisions} approval_decision records`);
    if (c.decisions === 0) {
      if (c.outputs > 0) v.push(`tool call ${id} has an output but no approval_decision`);
      continue;
    }
    if (c.outputs > 1) v.push(`E-6.7: tool call ${id} has ${c.outputs} tool_call_output records, want 1`);
    if (c.committed) {
      if (c.outputs + ph !== 1) {
        v.push(
          `E-6.7/E-17.3: tool call ${id} (decided, its request completed) has ${c.outputs} tool_call_output ` +
            `record(s) and the resumed model got ${ph} placeholder(s); want exactly one output in all`,
        );
      }
    } else if (ph > 0) {
      v.push(`E-17.3: tool call ${id} belongs to a request that was not committed, yet the resumed model got a placeholder for it`);
    }
  }
  for (const [id, n] of placeholders) {
    if (!calls.has(id) && n > 0) v.push(`E-17.3: the resumed model got a placeholder for ${id}, which is not a tool call of the Trace`);
  }
  return v;
}

/**
 * Compares the records stored at a cut with the records after it: every
 * stored record must still be there, first, in order (no committed record
 * lost, none rewritten). Returns a violation or null.
 */
export function lostRecords(before, after) {
  for (let i = 0; i < before.length; i++) {
    if (i >= after.length) return `E-16: ${before.length - i} stored record(s) lost, from #${i} (${brief(before[i])}) on; only ${after.length} remain`;
    if (canon(before[i]) !== canon(after[i])) {
      return `E-16: record #${i} changed or lost: stored ${brief(before[i])}, now ${brief(after[i])}`;
    }
  }
  return null;
}

/**
 * Compares the Trace records of one run segment with what the page saw on
 * the stream (E-16.1, E-16.2): without the Trace-only records, the segment
 * must equal the recordable stream messages, in order. Returns a violation
 * or null.
 */
export function streamMismatch(segment, seen, what) {
  const stored = segment.filter((r) => !isTraceOnly(r));
  const want = seen.filter(isRecordable);
  const n = Math.max(stored.length, want.length);
  for (let i = 0; i < n; i++) {
    if (i >= stored.length) {
      return `E-16.2 (${what}): ${want.length - i} record(s) seen on the stream are missing from the Trace, from ${brief(want[i])} on`;
    }
    if (i >= want.length) return `E-16.1 (${what}): the Trace holds ${stored.length - i} record(s) the stream never showed, from ${brief(stored[i])} on`;
    if (canon(stored[i]) !== canon(want[i])) {
      return `E-16.2 (${what}): record ${i} of the stream part is ${brief(stored[i])}, but the stream showed ${brief(want[i])}` +
        (brief(stored[i]) === brief(want[i]) ? ` (fields differ: ${canon(stored[i])} vs ${canon(want[i])})` : "");
    }
  }
  return null;
}

/**
 * Like streamMismatch, for a cut while records were still being written:
 * the segment may lack a tail of the stream's records, never one in the
 * middle (a crash loses at most the uncommitted tail). key(record) is what
 * is compared (default: the whole record). Returns { problem, kept, seen }.
 */
export function prefixMismatch(segment, seen, what, key = canon) {
  const stored = segment.filter((r) => !isTraceOnly(r));
  const want = seen.filter(isRecordable);
  for (let i = 0; i < stored.length; i++) {
    if (i >= want.length) {
      return { problem: `E-16.1 (${what}): the Trace holds ${stored.length - i} record(s) the stream never showed, from ${brief(stored[i])} on`, kept: i, seen: want.length };
    }
    if (key(stored[i]) !== key(want[i])) {
      return {
        problem: `E-16.2 (${what}): record ${i} of the stream part is ${brief(stored[i])}, but the stream showed ${brief(want[i])} there: a record in the middle is missing or out of order`,
        kept: i,
        seen: want.length,
      };
    }
  }
  return { problem: null, kept: stored.length, seen: want.length };
}

/**
 * Counts the resume placeholders a model received, by tool_call_id, in the
 * messages it was handed (loadHistory and the first request).
 */
export function countPlaceholders(...lists) {
  const n = new Map();
  for (const list of lists) {
    for (const m of list ?? []) {
      const p = m?.payload ?? {};
      if (p.type === "tool_call_output" && p.output === PLACEHOLDER) n.set(p.tool_call_id, (n.get(p.tool_call_id) ?? 0) + 1);
    }
  }
  return n;
}
