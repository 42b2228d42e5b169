//go:build !js

package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/sse"
)

// TinyOptions configure a Tiny model, as the built-in adapters' Options do.
type TinyOptions struct {
	Transport   provider.Transport // required
	Model       string             // required
	BaseURL     string             // requests go to BaseURL + "/chat"
	APIKey      string             // sent as "Authorization: Bearer KEY"
	Header      map[string]string  // extra request headers
	IdleTimeout time.Duration      // 0 = provider.DefaultIdleTimeout
}

// Tiny is an adapter of one's own for a model server that streams
// newline-delimited JSON: one model context (engine.LLM and
// engine.HistoryLoader), its state in a provider.Conversation.
type Tiny struct {
	opts TinyOptions
	c    provider.Conversation
}

const tinyAPI = "tiny" // names the adapter in errors

// NewTiny checks o (Setup's errors name the option at fault) and returns
// a fresh context.
func NewTiny(o TinyOptions) (*Tiny, error) {
	m := &Tiny{opts: o}
	bearer := ""
	if o.APIKey != "" {
		bearer = "Bearer " + o.APIKey
	}
	// provider.NDJSON: Generate reads an event stream; each JSON line of
	// the body becomes one event's data.
	err := m.c.Setup(tinyAPI, provider.NDJSON(o.Transport), o.Model, provider.JoinURL(provider.BaseURL(o.BaseURL, "http://127.0.0.1:8080"), "/chat"),
		nil, omni.TokenCounts{}, o.IdleTimeout, 0, o.Header, "authorization", bearer, "APIKey")
	if err != nil {
		return nil, err
	}
	return m, nil
}

// LoadHistory hands a resumed session's history to the context.
func (m *Tiny) LoadHistory(ctx context.Context, history []omni.Message) error {
	m.c.Load(history)
	return nil
}

// StreamGenerate is one request: Generate sends the history and the new
// messages (sent), streams the reply through the decoder, emits
// token_usage last and keeps the reply in the conversation when the
// request completes (a failed one leaves it as it was: the engine resends
// its input on a retry).
func (m *Tiny) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	return m.c.Generate(ctx, &p, emit, m.body, func(e *provider.Emitter) provider.Decoder { return &tinyDecoder{e: e} })
}

// body writes the request. An error fails the request (permanent) before
// it is sent.
func (m *Tiny) body(p *engine.GenerateParams, sent []omni.Message) ([]byte, error) {
	w := &provider.JSONWriter{}
	w.Lit("{")
	w.KeyStr("model", m.opts.Model)
	w.KeyStr("system", p.SystemPrompt)
	w.Lit(`"messages":[`)
	for i := range sent {
		switch q := &sent[i].Payload; q.Type {
		case omni.Text:
			w.Lit("{")
			w.KeyStr("role", q.Role)
			w.KeyStr("text", q.Text)
			w.Close('}')
		case omni.ToolCall:
			w.Lit(`{"role":"assistant",`)
			w.KeyStr("call", q.ToolCallID)
			w.KeyStr("name", q.Name)
			w.KeyRaw("arguments", provider.ObjectOr(q.Arguments))
			w.Close('}')
		case omni.ToolCallOutput:
			w.Lit(`{"role":"tool",`)
			w.KeyStr("call", q.ToolCallID)
			w.KeyStr("text", q.Output)
			w.Close('}')
		}
	}
	w.Close(']')
	w.Lit(`"tools":[`)
	for i := range p.Tools {
		w.Lit("{")
		w.KeyStr("name", p.Tools[i].Name)
		w.KeyRaw("parameters", provider.Schema(&p.Tools[i]))
		w.Close('}')
	}
	w.Close(']')
	w.Close('}')
	return w.B, nil
}

// tinyDecoder turns each line ({"text":…}, {"call":{…}}, {"error":…},
// {"done":true,"usage":{…}}) into Emitter calls, keyed by segment: 0 the
// text, 1 and up the calls.
type tinyDecoder struct {
	e     *provider.Emitter
	calls int
	usage provider.Usage
}

func (d *tinyDecoder) Event(ev *sse.Event) error {
	var line struct {
		Text  string
		Call  *struct{ ID, Name, Arguments string }
		Error string
		Done  bool
		Usage struct{ Input, Output int64 }
	}
	if err := json.Unmarshal(ev.Data, &line); err != nil {
		return provider.BadEvent(tinyAPI, ev.Data, err) // malformed
	}
	switch {
	case line.Error != "":
		return provider.ErrorEvent(tinyAPI, line.Error, "", line.Error) // "overloaded" is timeout, retried
	case line.Call != nil:
		d.e.Close(0, omni.StatusCompleted) // the text before it is complete
		d.calls++
		d.e.ToolStart(d.calls, line.Call.ID, line.Call.Name) // an empty or used id is replaced
		d.e.ToolArgs(d.calls, line.Call.Arguments)
		d.e.Close(d.calls, omni.StatusCompleted)
	case line.Done:
		d.usage = provider.Usage{Input: line.Usage.Input, Output: line.Usage.Output}
		return provider.ErrDone // Generate closes what is open
	default:
		d.e.Text(0, line.Text)
	}
	return nil
}

// End: the body ended without its done line.
func (d *tinyDecoder) End() error {
	return provider.Malformed(tinyAPI, "the stream ended before its done line")
}

// Usage is the request's counts and their total, for token_usage.
func (d *tinyDecoder) Usage() (provider.Usage, int64) {
	return d.usage, d.usage.Input + d.usage.Output
}

// An adapter of one's own, for a model server that streams
// newline-delimited JSON (here a loopback server), written with what the
// built-in adapters share: provider.Conversation keeps the conversation
// and sends each request, provider.Emitter turns the decoder's pieces
// into messages in streaming discipline, provider.NDJSON frames the
// lines as the events a Decoder reads, and HTTP failures become stop
// reasons as for the built-in adapters. A session then runs it as any
// engine.LLM.
func Example_adapterOfYourOwn() {
	answers := []string{
		`{"text":"Let me look."}` + "\n" + `{"call":{"id":"c1","name":"weather","arguments":"{\"city\":\"Oslo\"}"}}` + "\n" + `{"done":true,"usage":{"input":30,"output":8}}` + "\n",
		`{"text":"Snow in "}` + "\n" + `{"text":"Oslo."}` + "\n" + `{"done":true,"usage":{"input":52,"output":4}}` + "\n",
	}
	var mu sync.Mutex
	var bodies []string // the requests the server took
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer key" {
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprint(w, answers[(n-1)%len(answers)])
	}))
	defer server.Close()

	if _, err := NewTiny(TinyOptions{Transport: nethttp.New(nil), Model: "tiny-1", BaseURL: "localhost:8080"}); err != nil {
		fmt.Println(err)
	}
	llm, err := NewTiny(TinyOptions{Transport: nethttp.New(nil), Model: "tiny-1", BaseURL: server.URL, APIKey: "key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		emit(omni.ToolOutput(req.ToolCall.Payload.ToolCallID, "snow, -3°C", omni.StatusCompleted))
		return nil
	})
	session, err := engine.New(engine.Config{
		Meta:        omni.Meta{SessionID: "session-tiny", Provider: tinyAPI, ModelID: "tiny-1", SystemPrompt: "Be brief.", AgentState: ".", Workspace: "."}.Message(),
		LLM:         llm,
		ToolList:    []omni.ToolDefinition{{Name: "weather", Parameters: omni.RawJSON(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		Environment: env,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	stream, err := session.Run(context.Background(), []omni.Message{omni.UserText("Weather in Oslo?")}, engine.RunOptions{
		Approve: func(ctx context.Context, call omni.Message) (engine.Decision, error) {
			return engine.DecisionAllow, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var outputs []int64
	for m := range stream {
		switch p := &m.Payload; {
		case p.Type == omni.Text && p.Role == omni.RoleAssistant:
			fmt.Println("assistant:", p.Text)
		case p.Type == omni.ToolCall:
			fmt.Println("tool call:", p.ToolCallID, p.Name, p.Arguments)
		case p.Type == omni.ToolCallOutput:
			fmt.Println("tool output:", p.Output)
		case p.Type == omni.TokenUsage: // the tool's output may come before or after it
			outputs = append(outputs, p.Session().Output)
		case p.Type == omni.RequestEnd && p.Status() != omni.StatusCompleted:
			fmt.Println("request:", p.Status(), p.ErrorMessage())
		}
	}
	fmt.Println("session output tokens:", outputs)
	mu.Lock()
	fmt.Println("second request:", bodies[1]) // the history, then the tool's output
	mu.Unlock()

	// A wrong key: the server's 401 is the request's auth stop reason, its
	// message naming the adapter, the status and what the server said.
	bad, _ := NewTiny(TinyOptions{Transport: nethttp.New(nil), Model: "tiny-1", BaseURL: server.URL, APIKey: "wrong"})
	out := bad.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Hi")}}, func(omni.Message) {})
	fmt.Println(out.Status, strings.HasPrefix(out.ErrorMessage, "tiny: HTTP 401"), strings.Contains(out.ErrorMessage, "bad key"))

	// Output:
	// tiny: Options.BaseURL: want an http:// or https:// URL (or a path, for a page's fetch): it names no scheme a request can use
	// assistant: Let me look.
	// tool call: c1 weather {"city":"Oslo"}
	// tool output: snow, -3°C
	// assistant: Snow in Oslo.
	// session output tokens: [8 12]
	// second request: {"model":"tiny-1","system":"Be brief.","messages":[{"role":"user","text":"Weather in Oslo?"},{"role":"assistant","text":"Let me look."},{"role":"assistant","call":"c1","name":"weather","arguments":{"city":"Oslo"}},{"role":"tool","call":"c1","text":"snow, -3°C"}],"tools":[{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}
	// auth true true
}
