// Package provider holds what the model adapters share: the HTTP seam they
// talk through, the mapping of HTTP and stream failures to stop reasons, and
// the streaming-discipline emitter.
//
// # Layout
//
//	provider            Transport, Request, Response; Usage; Emitter; error mapping
//	provider/sse        the Server-Sent Events reader
//	provider/openai     OpenAI Chat Completions (and OpenAI-compatible servers)
//	provider/responses  OpenAI Responses API
//	provider/anthropic  Anthropic Messages
//	provider/nethttp    a Transport on net/http, for native programs
//	provider/replay     the replay runner behind cmd/floe-providers
//
// Every package except nethttp and replay is pure Go that the WebAssembly
// build links: none imports net/http, fmt, encoding/json, regexp or os. The
// browser supplies its own Transport (on fetch); native programs use
// nethttp.New.
//
// # The seam
//
// An adapter sends each model request as one [Request] through its
// [Transport] and reads the [Response] body as a byte stream:
//
//	type Transport interface {
//		RoundTrip(ctx context.Context, req *Request) (*Response, error)
//	}
//
// A Transport implementation must:
//
//   - send Method, URL, Header (names as given) and Body unchanged;
//   - return once the status line and headers are in, with Body streaming
//     the rest; Header names are lower case, repeated headers joined by
//     ", ";
//   - return a non-nil error only when no response arrived (a network
//     failure, a refused connection, a CORS rejection); an HTTP error status
//     is a Response, not an error. Such an error ends the request as
//     timeout (retried), unless it is a *[Failure], whose Status and
//     Permanent it keeps: a request the Transport cannot send (a header
//     [HeaderProblem] names) is failed, Permanent;
//   - make Body.Read return io.EOF at the normal end of the body and any
//     other error when the transfer fails before it (a reset connection, a
//     truncated chunked body);
//   - abort the request when ctx is cancelled: a pending RoundTrip returns,
//     and a pending or later Body.Read returns an error, promptly;
//   - tolerate Body.Close being called at any time, more than once.
//
// The adapters call Body.Close when they are done with a response. The
// Header map of a Request is shared between the requests of one adapter:
// a Transport must not modify it.
//
// # Adapters
//
// Each adapter's New(Options) (*Model, error) returns one stateful model
// context (ENGINE.md §1): an engine.LLM and engine.HistoryLoader that
// receives only the new messages of each request and keeps the
// conversation itself. A request's input and the
// model's reply join the conversation only when the request completes; a
// failed request leaves it as it was, since the engine resends the input on
// a retry. Factory returns the engine.LLMFactory for compaction, which
// starts a fresh context with the same options.
//
// A Model is one conversation, driven by one session: it is not safe for
// concurrent use, and two sessions need two Models (Factory gives a fresh
// one with the same options). Failures are never Go errors: a request
// that fails ends with its stop reason in the engine's request_end
// (status and error_message), below; New's errors name the option at fault.
//
// A program that uses an adapter needs only its Options, a Transport and
// the Model. The rest of this package (Conversation, Emitter, IDs,
// Decoder, JSONWriter, Stream and the helpers) and each adapter's Decoder
// are what the adapters share, exported for them and for a new adapter
// written the same way.
//
// # An adapter of your own
//
// Example (adapterOfYourOwn) is a whole one, for a server that streams
// newline-delimited JSON. Its Model holds a Conversation: New calls
// Conversation.Setup (it checks the Transport, the model, the base URL
// and the headers, naming the option at fault; its body argument is an
// ExtraBody to check, which the body function then writes with
// JSONWriter.Members); LoadHistory calls Conversation.Load;
// StreamGenerate calls Conversation.Generate with two functions: one that
// writes the request body for the messages sent (the history, then the
// new input), and one that returns the Decoder of the answer's events.
// The Decoder turns each event into Emitter calls, each text, thinking or
// tool call segment under a key of its choosing; it returns ErrDone after
// the terminal event and a *Failure for an error event (ErrorEvent) or a
// bad payload (BadEvent); End judges a body that ended without it; Usage
// gives the counts token_usage reports. Generate does the rest: the
// request, the HTTP failures' stop reasons, the idle timeout, the open
// segments closed, token_usage last, and the reply kept only when the
// request completes. Stream (and so Generate) reads Server-Sent Events
// only; NDJSON wraps the Transport of a server that streams JSON lines.
//
// Stop reasons (PROTOCOL.md §6), the same for every adapter:
//
//	401, 403; an authentication error event     auth
//	408, 409, 429, 5xx (529 too); the network   timeout (the message repeats Retry-After; the
//	                                            wait it asks, or retry-after-ms's, or
//	                                            Gemini's retryDelay in the body, is
//	                                            Outcome.RetryAfter; past MaxRetryAfter,
//	                                            failed, Permanent, naming the wait)
//	waiting Options.IdleTimeout on the server    timeout
//	  without a byte
//	an overload, rate-limit or server error     timeout
//	  event inside a 200 stream
//	other 4xx; other error events               failed (Permanent for 400, 402, 404, 405, 413, 415, 422)
//	3xx (a redirect the Transport did not        failed, Permanent
//	  follow, as the browser's does not)
//	a 200 answer whose body is JSON: an error   as an error event inside a 200 stream
//	  object
//	a 200 answer whose body is other JSON or    malformed
//	  HTML (the body decides, not Content-Type)
//	a header the Transport cannot send         failed, Permanent
//	  (one Options.APIKey or Options.Header
//	  gives is refused by New)
//	unparseable or truncated stream             malformed
//	ctx cancelled                               aborted (open fragments closed first)
//
// Every error message names the provider, the HTTP status where there is
// one, and the server's own message.
package provider
