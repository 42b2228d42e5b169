// The chat's model: it echoes the prompt; "tool <text>" has the shout tool
// upper-case the text first; "slow" answers only once the run is aborted.
import { msg } from "@floehq/floe";

export function echoModel() {
  let calls = 0;
  return {
    provider: "demo",
    modelId: "echo",
    async *streamGenerate({ newMessages, signal }) {
      const output = newMessages.find((m) => m.payload.type === "tool_call_output");
      const prompt = newMessages.findLast((m) => m.payload.type === "text" && m.payload.role === "user")?.payload.text ?? "";
      if (output) {
        yield msg.text(`The tool said: ${output.payload.output}`);
      } else if (prompt === "slow") {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return { status: "aborted" };
      } else if (prompt.startsWith("tool ")) {
        yield msg.toolCall(`call_${++calls}`, "shout", { text: prompt.slice(5) });
      } else {
        yield msg.text(`You said: ${prompt}`);
      }
      yield msg.tokenUsage({ output: 1, total: 1 });
    },
  };
}
