// The useChat page's model: floe/test's mockModel playing one reply per
// request, picked by the prompt, over a context it keeps (the stored
// history at a resume, then every request's new messages):
//   "email <to>"  thinking, text, then a send_email call (asked in the chat)
//   "search <q>"  a search_docs call (allowed by approve)
//   "slow"        streams a text, then waits until the run is aborted
//   "hold <to>"   streams a text, waits until the page calls
//                 window.releaseHold() (window.holding is true meanwhile),
//                 then a text and a send_email call; window.heldDone once
//                 the model has given it all
//   "recall"      names the prompts of its context before this one
//   else          thinking, then "You said: <prompt>"
// after a tool output, "The tool said: <output>".
import { mockModel } from "@floehq/floe/test";

export function scriptedModel() {
  const context = [];
  const userTexts = () => context.filter((m) => m.payload.type === "text" && m.payload.role === "user").map((m) => m.payload.text);
  return {
    provider: "demo",
    modelId: "scripted",
    loadHistory(history) {
      context.splice(0, context.length, ...history);
    },
    async *streamGenerate(params) {
      context.push(...params.newMessages);
      // A tool output last: the reply to it (a prompt after a run cut off
      // comes after its calls' outputs, and is answered itself).
      const last = params.newMessages.at(-1);
      const output = last?.payload.type === "tool_call_output" ? last : null;
      const prompt = userTexts().at(-1) ?? "";
      const id = `call_${context.length}`;
      let reply;
      let sleep; // mockModel's default
      if (output) reply = [`The tool said: ${output.payload.output}`];
      else if (prompt.startsWith("email ")) {
        const to = prompt.slice(6);
        reply = [{ thinking: `They want an email sent to ${to}.` }, `Sending it to ${to}.`, { toolCall: { name: "send_email", args: { to }, id } }];
      } else if (prompt.startsWith("search ")) reply = [{ toolCall: { name: "search_docs", args: { query: prompt.slice(7) }, id } }];
      else if (prompt === "slow") reply = ["Thinking very slowly", { delay: 600_000 }];
      else if (prompt.startsWith("hold ")) {
        const to = prompt.slice(5);
        reply = [`Working for ${to}.`, { delay: 1 }, `Done for ${to}.`, { toolCall: { name: "send_email", args: { to }, id } }];
        sleep = (ms, signal) =>
          new Promise((resolve) => {
            window.releaseHold = () => resolve(true);
            signal.addEventListener("abort", () => resolve(false));
            window.holding = true;
          });
      }
      else if (prompt === "recall") reply = [`Earlier you said: ${userTexts().slice(0, -1).join(" | ")}`];
      else reply = [{ thinking: "An echo." }, `You said: ${prompt}`];
      const played = mockModel([reply], sleep ? { sleep } : {}).streamGenerate(params);
      for (;;) {
        const r = await played.next();
        if (r.done) {
          if (sleep) window.heldDone = true;
          return r.value;
        }
        // What the model said is in its context too.
        if (!r.value.payload.type.startsWith("partial_")) context.push(r.value);
        yield r.value;
      }
    },
  };
}
