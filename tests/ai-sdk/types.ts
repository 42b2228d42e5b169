// fromAISDK typed against the real providers: their models fit AISDKLanguageModel,
// the options and newLLM type-check, and a v2 model is a compile error.
import { load } from "@floehq/floe";
import { fromAISDK } from "@floehq/floe/ai-sdk";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenAI } from "@ai-sdk/openai";
import { MockLanguageModelV3 } from "ai/test";
const floe = await load();
const anthropic = createAnthropic({ apiKey: "k" });
const llm = fromAISDK(anthropic("claude-sonnet-4-5"), { providerOptions: { anthropic: { sendReasoning: true } }, maxOutputTokens: 4096 });
const llm2 = fromAISDK(createOpenAICompatible({ name: "x", baseURL: "http://x" }).chatModel("m"), { providerOptions: ({ thinkingLevel }) => ({ x: { a: thinkingLevel ?? null } }) });
const llm3 = fromAISDK(new MockLanguageModelV3());
const openai = createOpenAI({ apiKey: "k" });
const llm4 = fromAISDK(openai("gpt-5"), { providerOptions: { openai: { store: false, include: ["reasoning.encrypted_content"] } } });
const llm5 = fromAISDK(openai.chat("gpt-4.1"), { idleTimeoutMs: 600000 });
const s = floe.createSession({ llm, newLLM: (t) => fromAISDK(anthropic("claude-sonnet-4-5"), { sessionTokens: t }) });
void s; void llm2; void llm3; void llm4; void llm5;
// @ts-expect-error a specification v2 model is refused
fromAISDK({ specificationVersion: "v2", provider: "p", modelId: "m", doStream: async () => ({ stream: new ReadableStream() }) });

// The UI: floeChatTransport is a ChatTransport of the AI SDK's Chat, its
// chunks UIMessageChunks, toUIMessages' messages UIMessages.
import { AbstractChat, readUIMessageStream, type ChatState, type ChatTransport, type UIMessage, type UIMessageChunk } from "ai";
import { floeChatTransport, toUIMessageStream, toUIMessages, type FloeUIMessageChunk } from "@floehq/floe/ai-sdk";
// Every chunk Floe makes is one of the AI SDK's (the stream itself is typed ReadableStream<any>).
const chunkFits: FloeUIMessageChunk extends UIMessageChunk ? true : false = true;
const transport: ChatTransport<UIMessage> = floeChatTransport({ session: s, approve: (call) => (call.payload.name === "search" ? "allow" : "ask") });
floeChatTransport({ createSession: (chatId) => floe.resumeSession(chatId, { llm }) });
declare const state: ChatState<UIMessage>;
class Chat extends AbstractChat<UIMessage> {}
const restored: UIMessage[] = toUIMessages(await floe.readSession(s.id));
const live = floeChatTransport({ session: s });
const mounted: UIMessage[] = toUIMessages(await floe.readSession(s.id), { transport: live, idPrefix: "s-" });
// @ts-expect-error the transport is one floeChatTransport made
toUIMessages(await floe.readSession(s.id), { transport });
new Chat({ transport, state });
// stop's function gives the chat's own messages back (setMessages takes it).
const settled: UIMessage[] = (await floeChatTransport({ session: s }).stop("chat"))(restored);
const chunks: ReadableStream<UIMessageChunk> = toUIMessageStream(s.run("hi"));
readUIMessageStream({ stream: toUIMessageStream(s.run("hi")) });
void restored; void mounted; void chunks; void chunkFits; void settled;
// @ts-expect-error approve answers with a decision or "ask"
floeChatTransport({ session: s, approve: () => "maybe" });
