package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
)

// CacheTTL "1h" keeps the prompt-cache breakpoints' prefixes an hour
// (for a session that pauses longer than 5 minutes between requests):
// every cache_control sends the TTL (here the system prompt's and the
// last message's), and the request carries the anthropic-beta header the
// API asked of it; New refuses another TTL. The Transport here answers
// in place of the API and shows what was sent.
func ExampleOptions_cacheTTL() {
	answer := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":30,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`
	transport := provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		fmt.Println("anthropic-beta:", req.Header["anthropic-beta"])
		fmt.Println("breakpoints of an hour:", strings.Count(string(req.Body), `"cache_control":{"type":"ephemeral","ttl":"1h"}`))
		return &provider.Response{Status: 200, Header: map[string]string{"content-type": "text/event-stream"}, Body: io.NopCloser(strings.NewReader(answer))}, nil
	})
	model, err := anthropic.New(anthropic.Options{
		Transport: transport, // nethttp.New(nil) in a native program
		Model:     "claude-sonnet-4-5",
		APIKey:    "sk-ant-example", // os.Getenv("ANTHROPIC_API_KEY")
		CacheTTL:  "1h",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	params := engine.GenerateParams{SystemPrompt: "Be brief.", NewMessages: []omni.Message{omni.UserText("Hi")}}
	o := model.StreamGenerate(context.Background(), params, func(m omni.Message) {
		if m.Payload.Type == omni.Text {
			fmt.Println("assistant:", m.Payload.Text)
		}
	})
	fmt.Println("outcome:", o.Status)

	_, err = anthropic.New(anthropic.Options{Transport: transport, Model: "claude-sonnet-4-5", CacheTTL: "2h"})
	fmt.Println(err)
	// Output:
	// anthropic-beta: extended-cache-ttl-2025-04-11
	// breakpoints of an hour: 2
	// assistant: Hello.
	// outcome: completed
	// anthropic: Options.CacheTTL: want "5m" or "1h" (or "" for the API's default, 5 minutes), got "2h"
}
