// What the Vue and Svelte useChat pages share (usechat-vue.html,
// usechat-svelte.html): floeChatTransport as the README's "Floe behind
// useChat" sets it up, over a model that plays one reply per request,
// picked by the prompt:
//   "email <to>"  thinking, text, then a send_email call (asked in the chat)
//   "slow"        streams a text, then waits until the run is aborted
//   else          "You said: <prompt>", streamed in three pieces
// after a tool output, "The tool said: <output>".
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
    if (last?.type === "tool_call_output") reply = [`The tool said: ${last.output}`];
    else if (last?.text.startsWith("email ")) {
      const to = last.text.slice(6);
      reply = [{ thinking: `They want an email sent to ${to}.` }, `Sending it to ${to}.`, { toolCall: { name: "send_email", args: { to }, id: `call_${++calls}` } }];
    } else if (last?.text === "slow") reply = ["Thinking very slowly", { delay: 600_000 }];
    else reply = [{ text: `You said: ${last?.text}`, chunks: ["You ", "said: ", String(last?.text)] }];
    return yield* mockModel([reply]).streamGenerate(params);
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
