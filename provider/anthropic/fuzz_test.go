package anthropic

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/provider/internal/ptest"
)

// FuzzDecoder: any response body keeps the stream contract.
func FuzzDecoder(f *testing.F) {
	for _, body := range [][]string{
		events(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, `{"type":"content_block_stop","index":0}`, msgDelta, stop),
		events(start, `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":1}}}`,
			`{"type":"content_block_stop","index":1}`, msgDelta),
		events(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		events(start, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":null,"cache_read_input_tokens":null,"output_tokens":3}}`, stop),
		append(events(start, msgDelta), "data: [DONE]\n\n"),
	} {
		f.Add([]byte(strings.Join(body, "")), uint8(5))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		ptest.Stream(t, func(tr *ptest.Transport) engine.LLM {
			m, err := New(Options{Transport: tr, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}, body, split)
	})
}
