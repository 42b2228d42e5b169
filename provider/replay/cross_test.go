package replay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

// A session switched to another model hands it a history another
// adapter produced. For every completed case of the provider corpus (the
// shared one and the project's own), the reply the case's adapter makes
// of it becomes a history (with an image, the calls' outputs, one with
// an image, a subagent's call and a compaction summary), which every
// target then sends, with and without a thinking level, to a loopback
// server that refuses what the real API refuses.
func TestHistoryOfAnotherProvider(t *testing.T) {
	var cases []*Case
	for _, dir := range []string{sharedProviders(t), filepath.Join("..", "..", "testdata", "providers")} {
		files, err := Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			c, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if c.Expect.Outcome.Status.Has(omni.StatusCompleted) {
				cases = append(cases, c)
			}
		}
	}
	if len(cases) < 20 {
		t.Fatalf("only %d completed cases", len(cases))
	}
	for _, c := range cases {
		res, err := Replay(context.Background(), c, Split{Name: "whole"})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if res.Outcome.Status != omni.StatusCompleted {
			t.Fatalf("%s: %+v", c.Name, res.Outcome)
		}
		hist := history(res.Messages)
		for _, tg := range targets {
			for _, level := range []string{"", "high"} {
				if err := sendTo(tg, c.Provider, hist, level); err != nil {
					t.Errorf("%s's history to %s (thinking level %q): %v", c.Name, tg.name, level, err)
				}
			}
		}
	}
}

// A model of one's own (a JavaScript callback) or a proxy names its calls
// as it likes: ids of 84 bytes that differ only past OpenAI's 40 and 64
// bytes, Kimi's "functions.get_weather:0", one of other letters. Each
// target takes them, each call still paired with its output.
func TestHistoryOfAModelOfOnesOwn(t *testing.T) {
	ids := []string{
		"codex_mcp__hermes-tools__kanban_complete_exec-3f1c6a2e-7b7d-4e0e-9a65-0c1b2d3e4f50",
		"codex_mcp__hermes-tools__kanban_complete_exec-3f1c6a2e-7b7d-4e0e-9a65-0c1b2d3e4f51",
		"functions.get_weather:0",
		"呼び出し-その一",
	}
	var reply []omni.Message
	for _, id := range ids {
		reply = append(reply, omni.ToolCallMsg(id, "get_weather", `{"city":"Oslo"}`))
	}
	hist := history(reply)
	for _, tg := range targets {
		if err := sendTo(tg, "own", hist, "high"); err != nil {
			t.Errorf("to %s: %v", tg.name, err)
		}
	}
}

// sharedProviders is the shared provider corpus: $FLOE_SHARED/providers,
// by default ../shared/providers beside the repository.
func sharedProviders(t *testing.T) string {
	base := os.Getenv("FLOE_SHARED")
	if base == "" {
		base = filepath.Join("..", "..", "..", "shared")
	}
	dir := filepath.Join(base, "providers")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("provider corpus not found at %s: set FLOE_SHARED to the shared folder", dir)
	}
	return dir
}

const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// history is a session's history around one reply: a compaction summary,
// a question with an image, the reply's complete messages, an output for
// each of its calls (the first with an image) and a call of a subagent,
// which no adapter sends.
func history(reply []omni.Message) []omni.Message {
	img := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: omni.RoleUser, StopReason: omni.StatusCompleted, Rest: &omni.Rest{MimeType: "image/png", Data: pixel}}}
	h := []omni.Message{omni.UserText(engine.ContextSummary("Earlier, the user asked for the weather.")), omni.UserText("What is in this picture, and the weather?"), img}
	var outputs []omni.Message
	for _, m := range reply {
		if m.Type != omni.TypeModelMsg || m.IsPartial() {
			continue
		}
		h = append(h, m)
		if m.Payload.Type == omni.ToolCall {
			out := omni.ToolOutput(m.Payload.ToolCallID, "Sunny, 21 °C.", omni.StatusCompleted)
			if len(outputs) == 0 {
				out.Payload.Rest = &omni.Rest{Images: []string{"data:image/png;base64," + pixel}}
			}
			outputs = append(outputs, out)
		}
	}
	sub := omni.ToolCallMsg("sub-call.1", "get_weather", `{"city":"Oslo"}`)
	sub.Origin = []string{"subagent-1"}
	return append(append(h, sub), outputs...)
}

// target is an API a history is sent to: how its adapter is made, what
// the loopback server checks of a request (src is the adapter the
// history came from) and what it answers.
type target struct {
	name  string
	base  string // the adapter's base URL: the host decides its dialect
	model func(t provider.Transport, base string) (engine.LLM, error)
	check func(req map[string]any, src, level string) error
	reply string
}

var (
	anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	mistralID   = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)
)

var targets = []target{
	{"Anthropic", "https://api.anthropic.com/v1", func(t provider.Transport, base string) (engine.LLM, error) {
		return anthropic.New(anthropic.Options{Transport: t, BaseURL: base, Model: "claude-sonnet-4-5", APIKey: "k"})
	}, checkAnthropic, anthropicReply},
	{"OpenAI Chat", "https://api.openai.com/v1", chatModel, func(req map[string]any, src, level string) error {
		return checkChat(req, func(id string) bool { return len(id) <= 40 }, false)
	}, chatReply},
	{"Mistral", "https://api.mistral.ai/v1", chatModel, func(req map[string]any, src, level string) error {
		return checkChat(req, mistralID.MatchString, false)
	}, chatReply},
	{"Gemini", "https://generativelanguage.googleapis.com/v1beta/openai", chatModel, func(req map[string]any, src, level string) error {
		return checkChat(req, func(string) bool { return true }, true)
	}, chatReply},
	{"OpenAI Responses", "https://api.openai.com/v1", func(t provider.Transport, base string) (engine.LLM, error) {
		return responses.New(responses.Options{Transport: t, BaseURL: base, Model: "gpt-5", APIKey: "k"})
	}, checkResponses, responsesReply},
}

func chatModel(t provider.Transport, base string) (engine.LLM, error) {
	return openai.New(openai.Options{Transport: t, BaseURL: base, Model: "some-model", APIKey: "k"})
}

// sendTo loads hist into tg's adapter and sends one more question through
// a Transport that takes every request to a loopback server answering as
// tg's API would.
func sendTo(tg target, src string, hist []omni.Message, level string) error {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req map[string]any
		err := json.Unmarshal(b, &req)
		if err == nil {
			err = tg.check(req, src, level)
		}
		if err != nil {
			refuse(w, err)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, tg.reply)
	}))
	defer srv.Close()
	native := nethttp.New(srv.Client())
	tr := provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		r := *req
		r.URL = srv.URL + strings.TrimPrefix(req.URL, tg.base)
		return native.RoundTrip(ctx, &r)
	})
	m, err := tg.model(tr, tg.base)
	if err != nil {
		return err
	}
	if err := m.(engine.HistoryLoader).LoadHistory(context.Background(), hist); err != nil {
		return err
	}
	out := m.StreamGenerate(context.Background(), engine.GenerateParams{
		NewMessages:   []omni.Message{omni.UserText("And tomorrow?")},
		SystemPrompt:  "You help.",
		ThinkingLevel: level,
		Tools:         []omni.ToolDefinition{{Name: "get_weather", Description: "Weather of a city.", Parameters: omni.RawJSON(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}, func(omni.Message) {})
	if out.Status != omni.StatusCompleted {
		return errors.New(string(out.Status) + ": " + out.ErrorMessage)
	}
	return nil
}

func list(v any) []any                      { l, _ := v.([]any); return l }
func obj(v any) map[string]any              { o, _ := v.(map[string]any); return o }
func str(o map[string]any, k string) string { s, _ := o[k].(string); return s }

// checkAnthropic refuses what the Messages API refuses: a tool_use or
// tool_result id outside its pattern, a tool_use whose result is not in
// the next message, a result of no call, a blank text block, and a
// thinking block whose signature it did not make (a history of another
// adapter holds none it made).
func checkAnthropic(req map[string]any, src, level string) error {
	var calls map[string]bool // the previous assistant message's tool_use ids
	for i, m := range list(req["messages"]) {
		role := str(obj(m), "role")
		seen := map[string]bool{}
		for _, b := range list(obj(m)["content"]) {
			b := obj(b)
			switch str(b, "type") {
			case "tool_use", "tool_result":
				id := str(b, "id") + str(b, "tool_use_id")
				if !anthropicID.MatchString(id) {
					return errors.New("messages." + itoa(i) + ": String should match pattern '^[a-zA-Z0-9_-]+$': " + id)
				}
				if str(b, "type") == "tool_result" {
					if !calls[id] {
						return errors.New("unexpected `tool_use_id` found in `tool_result` blocks: " + id)
					}
					seen[id] = true
				} else {
					seen[id] = true
				}
			case "text":
				if strings.TrimSpace(str(b, "text")) == "" {
					return errors.New("text content blocks must contain non-whitespace text")
				}
			case "thinking", "redacted_thinking":
				if src != "anthropic" {
					return errors.New("Invalid `signature` in `thinking` block")
				}
			}
		}
		if role == "user" {
			for id := range calls {
				if !seen[id] {
					return errors.New("`tool_use` ids were found without `tool_result` blocks immediately after: " + id)
				}
			}
			calls = nil
		} else {
			calls = seen
		}
	}
	return nil
}

// checkChat refuses what a Chat Completions server refuses: a tool call id
// it does not take, an assistant message with tool_calls not followed by
// a tool message for each, a tool message of no call; and to Gemini
// (gemini), a step whose first call carries no thought signature.
func checkChat(req map[string]any, ok func(string) bool, gemini bool) error {
	var open map[string]bool
	for i, m := range list(req["messages"]) {
		m := obj(m)
		role := str(m, "role")
		if role == "tool" {
			id := str(m, "tool_call_id")
			if !open[id] {
				return errors.New("messages." + itoa(i) + ": a tool message of no call: " + id)
			}
			delete(open, id)
			continue
		}
		if len(open) > 0 && role != "user" {
			return errors.New("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'")
		}
		if role == "user" && len(open) > 0 {
			return errors.New("messages." + itoa(i) + ": tool_call_ids did not have response messages")
		}
		for j, c := range list(m["tool_calls"]) {
			c := obj(c)
			id := str(c, "id")
			if !ok(id) {
				return errors.New("Invalid 'messages[" + itoa(i) + "].tool_calls[" + itoa(j) + "].id': " + id)
			}
			if gemini && j == 0 && str(obj(obj(c["extra_content"])["google"]), "thought_signature") == "" {
				return errors.New("Function call is missing a thought_signature in functionCall parts")
			}
			if open == nil {
				open = map[string]bool{}
			}
			open[id] = true
		}
	}
	if len(open) > 0 {
		return errors.New("tool_call_ids did not have response messages")
	}
	return nil
}

// checkResponses refuses what the Responses API refuses: a call_id above
// 64 bytes, an output of no call, a reasoning item it cannot decrypt (one
// of another adapter's history) and any reasoning item without a
// reasoning setting (a model that does not reason refuses them).
func checkResponses(req map[string]any, src, level string) error {
	calls := map[string]bool{}
	for i, it := range list(req["input"]) {
		it := obj(it)
		switch str(it, "type") {
		case "function_call", "function_call_output":
			id := str(it, "call_id")
			if len(id) > 64 {
				return errors.New("Invalid 'input[" + itoa(i) + "].call_id': string too long. Expected a string with maximum length 64")
			}
			if str(it, "type") == "function_call" {
				calls[id] = true
			} else if !calls[id] {
				return errors.New("No tool call found for function call output with call_id " + id)
			}
		case "reasoning":
			if req["reasoning"] == nil {
				return errors.New("Reasoning input items can only be provided to a reasoning or computer use model. Remove reasoning items from your input and try again.")
			}
			if src != "openai-responses" {
				return errors.New("The encrypted content could not be verified")
			}
		}
	}
	return nil
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

const anthropicReply = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Rain.\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

const chatReply = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Rain.\"}}]}\n\n" +
	"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n" +
	"data: [DONE]\n\n"

const responsesReply = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"Rain.\"}\n\n" +
	"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}}\n\n" +
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"usage\":{\"input_tokens\":9,\"output_tokens\":2,\"total_tokens\":11}}}\n\n"

// A stand-in of one API at one base URL, with one key: its replies carry
// reasoning only it can verify (a signature, an encrypted item that name
// it), and it refuses what the real server refuses of another's.
type endpoint struct {
	name, base, key, model string
	make                   func(t provider.Transport, ep *endpoint) (engine.LLM, error)
	// byURL: the server verifies what any key at its URL made (Anthropic's
	// signatures), not only its own key's.
	byURL bool
	// check refuses a request as the server would (me is what its own
	// reasoning names) and counts the reasoning of its own sent back.
	check func(req map[string]any, me string) (own int, err error)
	reply func(me string, n int) string
}

func (ep *endpoint) me() string {
	if ep.byURL {
		return ep.base
	}
	return ep.base + " " + ep.key
}

func anthropicAt(name, base, key string) *endpoint {
	return &endpoint{name: name, base: base, key: key, model: "claude-sonnet-4-5", byURL: true,
		make: func(t provider.Transport, ep *endpoint) (engine.LLM, error) {
			return anthropic.New(anthropic.Options{Transport: t, BaseURL: ep.base, Model: ep.model, APIKey: ep.key})
		},
		check: func(req map[string]any, me string) (int, error) {
			own := 0
			for i, m := range list(req["messages"]) {
				for j, b := range list(obj(m)["content"]) {
					b := obj(b)
					switch str(b, "type") {
					case "thinking", "redacted_thinking":
						if str(b, "signature")+str(b, "data") != "sig "+me {
							return 0, errors.New("messages." + itoa(i) + ".content." + itoa(j) + ": Invalid `signature` in `thinking` block")
						}
						own++
					}
				}
			}
			return own, checkAnthropic(req, "anthropic", "")
		},
		reply: func(me string, n int) string {
			sig, _ := json.Marshal("sig " + me)
			return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me think.\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":" + string(sig) + "}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				strings.Replace(anthropicReply, `"index":0`, `"index":1`, -1)[strings.Index(anthropicReply, "event: content_block_start"):]
		}}
}

func responsesAt(name, base, key string) *endpoint {
	return &endpoint{name: name, base: base, key: key, model: "gpt-5",
		make: func(t provider.Transport, ep *endpoint) (engine.LLM, error) {
			return responses.New(responses.Options{Transport: t, BaseURL: ep.base, Model: ep.model, APIKey: ep.key})
		},
		check: func(req map[string]any, me string) (int, error) {
			own := 0
			for _, it := range list(req["input"]) {
				if it := obj(it); str(it, "type") == "reasoning" {
					if str(it, "encrypted_content") != "enc "+me {
						return 0, errors.New("The encrypted content for item " + str(it, "id") + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.")
					}
					own++
				}
			}
			return own, checkResponses(req, "openai-responses", "")
		},
		reply: func(me string, n int) string {
			enc, _ := json.Marshal("enc " + me)
			id := "rs_" + itoa(n)
			return "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"" + id + "\",\"type\":\"reasoning\",\"summary\":[]}}\n\n" +
				"event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":0,\"delta\":\"Let me think.\"}\n\n" +
				"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"" + id + "\",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Let me think.\"}],\"encrypted_content\":" + string(enc) + "}}\n\n" +
				strings.Replace(responsesReply, `"output_index":0`, `"output_index":1`, -1)
		}}
}

// chatAt is a Chat Completions server: DeepSeek's (deepseek) makes its
// replies' reasoning in reasoning_content and, in thinking mode (any model
// but deepseek-chat), refuses a turn that called tools without it; the
// others (Cerebras) make none and refuse the field.
func chatAt(name, base, model string, deepseek bool) *endpoint {
	return &endpoint{name: name, base: base, key: "key-1", model: model,
		make: func(t provider.Transport, ep *endpoint) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: t, BaseURL: ep.base, Model: ep.model, APIKey: ep.key})
		},
		check: func(req map[string]any, me string) (int, error) {
			own := 0
			for i, m := range list(req["messages"]) {
				m := obj(m)
				rc, has := m["reasoning_content"]
				switch {
				case has && !deepseek:
					return 0, errors.New("messages." + itoa(i) + ".assistant.reasoning_content: property 'messages." + itoa(i) + ".assistant.reasoning_content' is unsupported")
				case deepseek && model != "deepseek-chat" && len(list(m["tool_calls"])) > 0 && rc == nil:
					return 0, errors.New("Missing `reasoning_content` field in the assistant message at message index " + itoa(i) + ". For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
				case rc == "Let me look.":
					own++
				}
			}
			return own, checkChat(req, func(id string) bool { return len(id) <= 40 }, false)
		},
		reply: func(me string, n int) string {
			reasoning := ""
			if deepseek {
				reasoning = `"reasoning_content":"Let me look.",`
			}
			return "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"," + reasoning + "\"content\":null}}]}\n\n" +
				"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_" + itoa(n) + "\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]}}]}\n\n" +
				"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n" +
				"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n" +
				"data: [DONE]\n\n"
		}}
}

// session sends one request after another, each to its endpoint, keeping
// the history between them as a session that changes models does.
type session struct {
	t    *testing.T
	hist []omni.Message
	n    int
}

// ask loads the history into an adapter of ep, sends the question, and
// returns how many of ep's own reasoning items the request sent back;
// the reply (with an output for each call) joins the history.
func (s *session) ask(ep *endpoint, question string) (int, error) {
	s.n++
	own := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req map[string]any
		err := json.Unmarshal(b, &req)
		if err == nil {
			own, err = ep.check(req, ep.me())
		}
		if err != nil {
			refuse(w, err)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, ep.reply(ep.me(), s.n))
	}))
	defer srv.Close()
	native := nethttp.New(srv.Client())
	tr := provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		r := *req
		r.URL = srv.URL + strings.TrimPrefix(req.URL, ep.base)
		return native.RoundTrip(ctx, &r)
	})
	m, err := ep.make(tr, ep)
	if err != nil {
		return 0, err
	}
	if err := m.(engine.HistoryLoader).LoadHistory(context.Background(), s.hist); err != nil {
		return 0, err
	}
	q := omni.UserText(question)
	var reply []omni.Message
	out := m.StreamGenerate(context.Background(), engine.GenerateParams{
		NewMessages:   []omni.Message{q},
		ThinkingLevel: "high",
		Tools:         []omni.ToolDefinition{{Name: "get_weather", Description: "Weather of a city."}},
	}, func(m omni.Message) {
		if m.Type == omni.TypeModelMsg && !m.IsPartial() {
			reply = append(reply, m)
		}
	})
	if out.Status != omni.StatusCompleted {
		return 0, errors.New(ep.name + ": " + string(out.Status) + ": " + out.ErrorMessage)
	}
	s.hist = append(s.hist, q)
	s.hist = append(s.hist, reply...)
	for _, m := range reply {
		if m.Payload.Type == omni.ToolCall {
			s.hist = append(s.hist, omni.ToolOutput(m.Payload.ToolCallID, "Sunny, 21 °C.", omni.StatusCompleted))
		}
	}
	return own, nil
}

// want checks that a request went through and sent back n reasoning items
// of its endpoint's own.
func (s *session) want(ep *endpoint, n int) {
	s.t.Helper()
	own, err := s.ask(ep, "And now?")
	if err != nil {
		s.t.Fatalf("request %d, to %s: %v", s.n, ep.name, err)
	}
	if own != n {
		s.t.Fatalf("request %d, to %s: %d reasoning items of its own sent back, want %d", s.n, ep.name, own, n)
	}
}

// A session that changes between two servers of one API (Anthropic and
// a compatible server or another account, OpenAI and an Azure resource
// or another account) sends each one's reasoning only back to it: each
// refuses the other's signatures and encrypted items, as the real ones
// do, and gets its own back.
func TestReasoningGoesBackToItsEndpoint(t *testing.T) {
	for _, c := range []struct {
		a, compatible, account *endpoint
	}{
		{responsesAt("OpenAI", "https://api.openai.com/v1", "key-1"),
			responsesAt("Azure OpenAI", "https://example.openai.azure.com/openai/v1", "key-1"),
			responsesAt("OpenAI, another account", "https://api.openai.com/v1", "key-2")},
	} {
		t.Run(c.a.name, func(t *testing.T) {
			s := &session{t: t}
			s.want(c.a, 0)
			s.want(c.compatible, 0) // refuses a's
			s.want(c.account, 0)    // refuses a's and compatible's
			s.want(c.a, 1)          // its own only
			s.want(c.compatible, 1)
			s.want(c.account, 1)
		})
	}
}

// Anthropic's signatures go back to its URL whatever the key (they verify
// across its accounts and platforms: one left out of a tool loop resumed
// with thinking on is refused), and never to an Anthropic-compatible
// server's, which refuses them as Anthropic refuses the server's.
func TestAnthropicSignaturesGoBackToItsURL(t *testing.T) {
	a := anthropicAt("Anthropic", "https://api.anthropic.com/v1", "key-1")
	compatible := anthropicAt("DeepSeek's Anthropic API", "https://api.deepseek.com/anthropic", "key-1")
	rotated := anthropicAt("Anthropic, another key", "https://api.anthropic.com/v1", "key-2")
	s := &session{t: t}
	s.want(a, 0)
	s.want(compatible, 0) // refuses a's
	s.want(rotated, 1)    // a's, not compatible's
	s.want(a, 2)          // its own and rotated's
	s.want(compatible, 1)
}

// Chat Completions: reasoning_content goes back only to the endpoint it
// came from (Cerebras refuses the field); to DeepSeek's thinking mode,
// which refuses a turn that called tools without reasoning_content, a
// turn another model made goes as text, its calls and their outputs too,
// while its own turns keep theirs.
func TestReasoningContentGoesBackToItsEndpoint(t *testing.T) {
	deepseek := chatAt("DeepSeek", "https://api.deepseek.com", "deepseek-v4-flash", true)
	cerebras := chatAt("Cerebras", "https://api.cerebras.ai/v1", "gpt-oss-120b", false)
	s := &session{t: t}
	s.want(deepseek, 0)
	s.want(cerebras, 0) // refuses DeepSeek's reasoning_content
	s.want(deepseek, 1) // its own turn keeps it; Cerebras's goes as text
	flat := 0
	for _, m := range s.lastRequest(deepseek) {
		m := obj(m)
		for _, p := range list(m["content"]) {
			if strings.HasPrefix(str(obj(p), "text"), `[tool_call_output id="call_2" status="completed"]Sunny`) {
				flat++
			}
		}
		if c, _ := m["content"].(string); c == `[tool_call name="get_weather" id="call_2"]{"city":"Oslo"}[/tool_call]` {
			flat++
		}
	}
	if flat != 2 {
		t.Errorf("Cerebras's call and its output are not both text to DeepSeek: %d of 2", flat)
	}

	// Without thinking, DeepSeek takes every call as a call.
	for _, ep := range []*endpoint{
		chatAt("DeepSeek without thinking", "https://api.deepseek.com", "deepseek-chat", true),
		{name: "DeepSeek, thinking disabled", base: "https://api.deepseek.com", key: "k", make: func(t provider.Transport, ep *endpoint) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: t, BaseURL: ep.base, Model: "deepseek-v4-flash", APIKey: "k", ExtraBody: omni.RawJSON(`{"thinking":{"type":"disabled"}}`)})
		}},
	} {
		calls := 0
		for _, m := range s.lastRequest(ep) {
			calls += len(list(obj(m)["tool_calls"]))
		}
		if calls != 3 {
			t.Errorf("%s: %d calls sent as calls, want 3", ep.name, calls)
		}
	}
}

// lastRequest returns the messages of the request an adapter of ep makes
// of the session's history.
func (s *session) lastRequest(ep *endpoint) []any {
	s.t.Helper()
	var got []any
	rec := *ep
	rec.check = func(req map[string]any, me string) (int, error) {
		got = list(req["messages"])
		return 0, nil
	}
	rec.reply = func(string, int) string { return chatReply }
	saved := s.hist
	if _, err := s.ask(&rec, "Once more?"); err != nil {
		s.t.Fatal(err)
	}
	s.hist = saved
	return got
}

// A Trace written before the marker names no endpoint: its reasoning is
// sent as it was then, to an adapter of its API.
func TestReasoningOfNoEndpoint(t *testing.T) {
	for _, ep := range []*endpoint{
		anthropicAt("Anthropic", "https://api.anthropic.com/v1", "key-1"),
		responsesAt("OpenAI", "https://api.openai.com/v1", "key-1"),
		chatAt("DeepSeek", "https://api.deepseek.com", "deepseek-v4-flash", true),
	} {
		s := &session{t: t}
		s.want(ep, 0)
		found := 0
		for i := range s.hist {
			p := &s.hist[i].Payload
			if p.Type != omni.Thinking {
				continue
			}
			var f map[string]any
			if err := json.Unmarshal(p.Fidelity(), &f); err != nil || !strings.HasPrefix(str(f, provider.EndpointKey), ep.base+"/") || strings.Contains(str(f, provider.EndpointKey), ep.key) {
				t.Fatalf("%s: the thinking's fidelity does not name its endpoint (or names its key): %s", ep.name, p.Fidelity())
			}
			delete(f, provider.EndpointKey)
			b, _ := json.Marshal(f)
			p.Edit().Fidelity = b
			found++
		}
		if found != 1 {
			t.Fatalf("%s: %d thinking messages", ep.name, found)
		}
		s.want(ep, 1)
	}
}

// refuse answers 400 with err as an API's invalid_request_error.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(400)
	e, _ := json.Marshal(err.Error())
	io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":`+string(e)+`}}`)
}
