// A chat over one stored session, written as the README's React section
// says: the session is resumed (or created) in an effect whose cleanup
// closes it, the transcript is read with useSyncExternalStore, approvals
// are buttons, Stop aborts the run.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { load, msg, tool, transcript } from "@floehq/floe";
import { echoModel } from "./model.js";

const shout = tool({
  name: "shout",
  description: "Upper-cases a text",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: ({ text }) => text.toUpperCase(),
});

// What the test reads: each step of the page, in order, and the Trace.
export const events = (window.chatEvents ??= []);
window.chatTrace = async (id) => (await load()).exportSession(id);

// useSession resumes the stored session id (or creates it) and its
// transcript, with the stored history; the effect's cleanup closes it.
function useSession(id) {
  const [state, setState] = useState({ session: null, view: null, error: null });
  useEffect(() => {
    let session;
    let gone = false;
    (async () => {
      const floe = await load();
      const options = { llm: echoModel(), tools: [shout] };
      const view = transcript();
      try {
        session = await floe.resumeSession(id, options);
        for (const m of await floe.readSession(id)) view.push(m);
        view.end();
      } catch (e) {
        if (e.code !== "not_found") throw e;
        session = floe.createSession({ ...options, system: "Be brief.", meta: { session_id: id } });
      }
      events.push(`ready ${view.turns.length}`);
      if (!gone) setState({ session, view, error: null });
      else session.close();
    })().catch((error) => {
      events.push(`error ${error.code}: ${error.message}`);
      if (!gone) setState({ session: null, view: null, error });
    });
    return () => {
      gone = true;
      session?.close();
    };
  }, [id]);
  return state;
}

const none = () => () => {};

export function Chat({ id }) {
  const { session, view, error } = useSession(id);
  useSyncExternalStore(view ? view.subscribe : none, () => view?.version ?? -1);
  const [failure, setFailure] = useState(null);
  const stop = useRef(null);
  const decisions = useRef(new Map()); // tool_call_id → the approver's resolve

  async function send(prompt) {
    const controller = (stop.current = new AbortController());
    setFailure(null);
    try {
      const stream = session.run(prompt, {
        signal: controller.signal,
        approve: (call) => new Promise((resolve) => decisions.current.set(call.payload.tool_call_id, resolve)),
      });
      let first = true;
      for await (const m of stream) {
        if (first) view.push(msg.userText(prompt)); // the run started: not refused
        first = false;
        (window.chatMessages ??= []).push([m, JSON.stringify(m)]);
        view.push(m);
      }
      view.end();
      events.push(`ended ${prompt} ${view.status}`);
    } catch (e) {
      events.push(`failed ${prompt} ${e.code}`);
      setFailure(e);
    }
  }

  const decide = (card, decision) => {
    decisions.current.get(card.id)?.(decision);
    decisions.current.delete(card.id);
  };

  if (error) return <p role="alert">{error.message}</p>;
  if (!view) return <p>Loading…</p>;
  return (
    <section>
      <ol aria-label="Conversation">
        {view.turns.map((turn, i) =>
          turn.role === "user" ? (
            <li key={i} className="user">{turn.text}</li>
          ) : (
            turn.items.map((item, j) => (
              <li key={`${i}.${j}`} className={item.kind}>
                {item.kind === "tool" ? `${item.name}: ${item.output || item.status}` : item.text}
              </li>
            ))
          ),
        )}
      </ol>
      {view.pendingApprovals.map((card) => (
        <p key={card.id}>
          Run {card.name}? <button onClick={() => decide(card, "allow")}>Allow</button>
          <button onClick={() => decide(card, "deny")}>Deny</button>
        </p>
      ))}
      {failure && <p role="alert">{failure.message}</p>}
      <p aria-label="Status">{view.status}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          send(e.currentTarget.prompt.value);
        }}
      >
        <input name="prompt" aria-label="Prompt" />
        <button type="submit">Send</button>
        <button type="button" onClick={() => stop.current?.abort()}>Stop</button>
      </form>
    </section>
  );
}
