// What both chats share: the shout tool, the page's events and Trace for
// the test, and the stored history read into a transcript.
import { load, tool } from "@floehq/floe";

export const shout = tool({
  name: "shout",
  description: "Upper-cases a text",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: ({ text }) => text.toUpperCase(),
});

// What the test reads: each step of the page, in order, and the Trace.
export const events = (window.chatEvents ??= []);
window.chatTrace = async (id) => (await load()).exportSession(id);
