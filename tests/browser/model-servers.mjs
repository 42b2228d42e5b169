// The loopback model servers of the playground's tests in Chromium and
// Firefox: OpenAI-compatible Chat Completions answered with real SSE bytes,
// CORS for any origin.
import { createServer } from "node:http";

/**
 * A loopback OpenAI-compatible server, CORS for any origin: answer(req, body, res, sse) answers each
 * request (body: its text), with sse(o) one Chat Completions chunk; sse.end(res) ends an event
 * stream with the usage chunk and [DONE]. server.requests gathers what answer pushes.
 */
export function chatServer(t, answer) {
  const sse = (o) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "test-model", ...o })}\n\n`;
  sse.cors = { "access-control-allow-origin": "*", "access-control-allow-headers": "authorization, content-type", "access-control-allow-methods": "POST" };
  sse.end = (res) => {
    res.write(sse({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } }));
    res.end("data: [DONE]\n\n");
  };
  const server = createServer((req, res) => {
    if (req.method === "OPTIONS") return res.writeHead(204, sse.cors).end();
    let body = "";
    req.on("data", (b) => (body += b));
    req.on("end", () => answer(server, req, body, res, sse));
  });
  server.requests = [];
  t.after(() => server.close());
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** A loopback OpenAI-compatible server: real Chat Completions SSE bytes; 401 for the key "bad". */
export function modelServer(t) {
  return chatServer(t, (server, req, body, res, sse) => {
    const cors = sse.cors;
    server.requests.push({ url: req.url, auth: req.headers.authorization, cookie: req.headers.cookie, body: body && JSON.parse(body) });
    if (req.headers.authorization === "Bearer redirect") {
      return res.writeHead(307, { ...cors, location: "/v1/elsewhere" }).end();
    }
    if (req.headers.authorization === "Bearer bad") {
      res.writeHead(401, { ...cors, "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "Incorrect API key provided", type: "invalid_request_error" } }));
    }
    res.writeHead(200, { ...cors, "content-type": "text/event-stream" });
    if (server.requests.at(-1).body?.model === "empty") {
      res.write(sse({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
      return sse.end(res);
    }
    if (server.requests.at(-1).body?.model === "cut") {
      res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: "Half a sen" }, finish_reason: null }] }));
      res.write(sse({ choices: [{ index: 0, delta: {}, finish_reason: "length" }] }));
      return sse.end(res);
    }
    res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: "Hello" }, finish_reason: null }] }));
    res.write(sse({ choices: [{ index: 0, delta: { content: " from **the server**" }, finish_reason: null }] }));
    res.write(sse({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
    sse.end(res);
  });
}

/** A port on 127.0.0.1 nothing listens on (a server's, closed). */
export function closedPort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}
