package responses

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/provider/internal/ptest"
)

// FuzzDecoder: any response body keeps the stream contract (split's high
// bit sets StartsInThinking).
func FuzzDecoder(f *testing.F) {
	for _, body := range [][]string{
		events(`{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}`,
			`{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"message"}}`, completed),
		events(`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"a"}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c","name":"f"}}`,
			`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{}"}`),
		events(`{"type":"response.failed","response":{"error":{"code":"server_error","message":"m"}}}`),
		// Thinking inline in the text, its tags cut (vLLM without a reasoning parser).
		events(`{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}`,
			`{"type":"response.output_text.delta","output_index":0,"delta":"<thi"}`,
			`{"type":"response.output_text.delta","output_index":0,"delta":"nk>a</th"}`,
			`{"type":"response.output_text.delta","output_index":0,"delta":"ink>b"}`,
			`{"type":"response.output_text.done","output_index":0,"text":"<think>a</think>b"}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"message"}}`, completed),
	} {
		f.Add([]byte(strings.Join(body, "")), uint8(4))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		ptest.Stream(t, func(tr *ptest.Transport) engine.LLM {
			m, err := New(Options{Transport: tr, Model: "m", StartsInThinking: split&0x80 != 0})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}, body, split)
	})
}
