// A model of your own with the HTTP helpers, typed as a user writes it
// (strict, exactOptionalPropertyTypes), with the DOM lib and with @types/node.
import floeDefault, { httpOutcome, readEvents, readLines, load, msg, type GenerateParams, type Outcome, type ServerSentEvent } from "floe";

export const sseModel = {
  provider: "acme",
  async *streamGenerate({ signal }: GenerateParams) {
    let res: Response;
    try {
      res = await fetch("http://127.0.0.1:1/v1/stream", { method: "POST", signal });
    } catch (e) {
      return httpOutcome(e, "acme", signal); // what a fetch threw: an Outcome, never null
    }
    const failed: Outcome | null = await httpOutcome(res, "acme");
    if (failed) return failed;
    try {
      yield msg.partialText("start");
      for await (const ev of readEvents(res.body, { signal })) {
        const e: ServerSentEvent = ev;
        const kind: string = e.event;
        const id: string = e.id;
        if (kind === "error") return { status: "failed" as const, errorMessage: `acme: ${e.data} (${id})` };
        yield msg.partialText("delta", JSON.parse(e.data).text);
      }
    } catch (e) {
      const o: Outcome = await httpOutcome(e, "acme", signal);
      return o;
    }
    yield msg.tokenUsage({ output: 1, total: 2 });
    return { status: "completed" as const };
  },
};

export async function lines(res: Response, signal: AbortSignal) {
  const out: string[] = [];
  for await (const line of readLines(res.body, { signal: undefined })) out.push(line);
  for await (const line of readLines(res.body, { signal })) out.push(line);
  const floe = await load();
  floe.createSession({ llm: sseModel });
  // The loaded floe and the default export have them too.
  void [floe.httpOutcome, floe.readLines, floe.readEvents, floeDefault.httpOutcome, floeDefault.readLines, floeDefault.readEvents];
  // @ts-expect-error a name is a string
  void httpOutcome(res, 5);
  // @ts-expect-error readLines takes a byte stream, not a string
  void readLines("a\nb");
  // @ts-expect-error the one option is signal
  void readEvents(res.body, { sigal: signal });
  // @ts-expect-error an event's data is a string
  for await (const ev of readEvents(res.body)) void (ev.data satisfies number);
  return out;
}
