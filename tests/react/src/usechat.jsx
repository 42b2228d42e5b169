// The README's "Floe behind useChat" example as written (the lines
// between the marks, which the test compares with the README's), with
// the model and tools it leaves to the reader, rendering the chat's parts:
// text, reasoning, tool parts with their states, Approve and Deny on a
// call asked, and Stop. After a reload the chat starts from
// toUIMessages(await floe.readSession(id), { transport }); "Hide chat"
// unmounts it and "Show chat" mounts it again with the messages it had
// (kept here, as a store would) or, after window.restore(), with those of
// the stored session, its run going on meanwhile.
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { tool } from "@floehq/floe";
import { scriptedModel } from "./scripted.js";

const llm = scriptedModel();
const tools = [
  tool({
    name: "search_docs",
    description: "Searches the docs",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    execute: ({ query }) => `3 pages about ${query}`,
  }),
  tool({
    name: "send_email",
    description: "Sends an email",
    parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    execute: ({ to }) => `sent to ${to}`,
  }),
];

// --- the README's example ---
import { useChat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { load } from "@floehq/floe";
import { floeChatTransport, toUIMessages } from "@floehq/floe/ai-sdk";

const floe = await load();
const transport = floeChatTransport({
  // one session per chat: resumed when stored, else made with the chat's id
  createSession: (chatId) =>
    floe.resumeSession(chatId, { llm, tools }).catch((e) => {
      if (e.code !== "not_found") throw e;
      return floe.createSession({ llm, tools, meta: { session_id: chatId } });
    }),
  approve: (call) => (call.payload.name === "search_docs" ? "allow" : "ask"),
});

// stored: the messages the chat had when it was last shown (kept in a store, for a
// chat mounted again), or toUIMessages(await floe.readSession(id), { transport }) or []
function Chat({ id, stored }) {
  const { messages, status, error, sendMessage, stop, setMessages, addToolApprovalResponse } = useChat({
    id, transport, messages: stored,
    resume: true, // mounted again while its run goes on, it picks the run up
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  // Stop: stop() ends a response; a run waiting on an approval has none
  const onStop = async () => { stop(); setMessages(await transport.stop(id)); };
  // render messages' parts; a tool part in state "approval-requested" gets
  // buttons calling addToolApprovalResponse({ id: part.approval.id, approved })
// --- end of the example ---
  useEffect(() => {
    window.uiMessages = messages; // what the test compares after a reload
    kept = messages;
  });
  return (
    <section>
      <ol aria-label="Messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role}>
            <ul aria-label={m.role === "user" ? "User message" : "Assistant message"}>
              {m.parts.map((part, j) => (
                <Part key={j} part={part} answer={(approved) => addToolApprovalResponse({ id: part.approval.id, approved })} />
              ))}
            </ul>
          </li>
        ))}
      </ol>
      {error && <p role="alert">{error.message}</p>}
      <p aria-label="Status">{status}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const input = e.currentTarget.prompt;
          sendMessage({ text: input.value });
          input.value = "";
        }}
      >
        <input name="prompt" aria-label="Prompt" />
        <button type="submit">Send</button>
        <button type="button" onClick={onStop}>Stop</button>
      </form>
    </section>
  );
}

function Part({ part, answer }) {
  if (part.type === "text") return <li className="text">{part.text}</li>;
  if (part.type === "reasoning") return <li className="reasoning">Reasoning: {part.text}</li>;
  if (!part.type.startsWith("tool-")) return null;
  const shown = part.state === "output-available" ? `: ${part.output}` : part.state === "output-error" ? `: ${part.errorText}` : "";
  return (
    <li className="tool">
      {part.type.slice(5)}({JSON.stringify(part.input)}) {part.state}
      {shown}
      {part.state === "approval-requested" && (
        <>
          {" "}
          <button onClick={() => answer(true)}>Approve</button>
          <button onClick={() => answer(false)}>Deny</button>
        </>
      )}
    </li>
  );
}

const ID = "usechat";
// The chat's messages while it is shown, for the Chat mounted again.
let kept = await floe.readSession(ID).then((stored) => toUIMessages(stored, { transport }), (e) => {
  if (e.code !== "not_found") throw e;
  return [];
});
window.readTrace = () => floe.readSession(ID);
// The chat hidden, its messages for "Show chat" restored from the stored
// session, as a route that loads them as it mounts does.
window.restore = async () => {
  kept = toUIMessages(await floe.readSession(ID), { transport });
};

function App() {
  const [shown, setShown] = useState(true);
  return (
    <>
      <button type="button" onClick={() => setShown((s) => !s)}>{shown ? "Hide chat" : "Show chat"}</button>
      {shown && <Chat id={ID} stored={kept} />}
    </>
  );
}

createRoot(document.getElementById("root")).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
