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
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(400)
			e, _ := json.Marshal(err.Error())
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":`+string(e)+`}}`)
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
