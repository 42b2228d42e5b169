// What the Vue and Svelte useChat pages share (usechat-vue.html,
// usechat-vue-chat.html, usechat-svelte.html): floeChatTransport as the
// README's "Floe behind useChat" sets it up, over a model that plays one
// reply per request, picked by the prompt:
//   "email <to>"  thinking, text, then a send_email call (asked in the chat)
//   "slow"        streams a text, then waits until the run is aborted
//                 (window.slowAborted counts the aborts)
//   "hold <to>"   streams a text, waits until the page calls
//                 window.releaseHold() (window.holding is true meanwhile),
//                 then a text and a send_email call; window.heldDone once
//                 the model has given it all
//   else          "You said: <prompt>", streamed in three pieces
// after a tool output, "The tool said: <output>". kept holds a chat's
// messages while it is shown, for the chat mounted again (as a store
// would), and toggle gives the page its "Hide chat" / "Show chat" button.
import { load, tool } from "@floehq/floe";
import { mockModel } from "@floehq/floe/test";
import { floeChatTransport } from "@floehq/floe/ai-sdk";

let calls = 0;
const llm = {
  provider: "demo",
  modelId: "scripted",
  async *streamGenerate(params) {
    const last = params.newMessages.at(-1)?.payload;
    let reply;
    let sleep; // mockModel's default
    if (last?.type === "tool_call_output") reply = [`The tool said: ${last.output}`];
    else if (last?.text.startsWith("email ")) {
      const to = last.text.slice(6);
      reply = [{ thinking: `They want an email sent to ${to}.` }, `Sending it to ${to}.`, { toolCall: { name: "send_email", args: { to }, id: `call_${++calls}` } }];
    } else if (last?.text === "slow") {
      reply = ["Thinking very slowly", { delay: 600_000 }];
      sleep = (ms, signal) =>
        new Promise((resolve) => {
          const aborted = () => {
            window.slowAborted = (window.slowAborted ?? 0) + 1;
            resolve(false);
          };
          if (signal.aborted) aborted();
          else signal.addEventListener("abort", aborted);
        });
    } else if (last?.text.startsWith("hold ")) {
      const to = last.text.slice(5);
      reply = [`Working for ${to}.`, { delay: 1 }, `Done for ${to}.`, { toolCall: { name: "send_email", args: { to }, id: `call_${++calls}` } }];
      sleep = (ms, signal) =>
        new Promise((resolve) => {
          window.releaseHold = () => resolve(true);
          signal.addEventListener("abort", () => resolve(false));
          window.holding = true;
        });
    } else reply = [{ text: `You said: ${last?.text}`, chunks: ["You ", "said: ", String(last?.text)] }];
    const played = yield* mockModel([reply], sleep ? { sleep } : {}).streamGenerate(params);
    if (last?.text?.startsWith("hold ")) window.heldDone = true;
    return played;
  },
};
const tools = [
  tool({
    name: "send_email",
    description: "Sends an email",
    parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    execute: ({ to }) => `sent to ${to}`,
  }),
];

const floe = await load();
export const transport = floeChatTransport({
  createSession: () => floe.createSession({ llm, tools, store: false }),
  approve: () => "ask",
});

export const kept = new Map();

// toggle puts a "Hide chat" / "Show chat" button before the page's chat:
// hide() unmounts the chat, show() mounts it again.
export function toggle({ show, hide }) {
  const button = document.createElement("button");
  button.type = "button";
  let shown = true;
  const label = () => (button.textContent = shown ? "Hide chat" : "Show chat");
  button.addEventListener("click", () => {
    shown = !shown;
    (shown ? show : hide)();
    label();
  });
  label();
  document.getElementById("app").before(button);
  show();
}
