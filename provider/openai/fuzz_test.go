package openai

import (
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/provider/internal/ptest"
)

// FuzzDecoder: any response body keeps the stream contract (split's high
// bit sets StartsInThinking).
func FuzzDecoder(f *testing.F) {
	for _, body := range []string{
		"data: " + chunk(`{"role":"assistant","content":"Hi"}`) + "\n\ndata: " + finish + "\n\ndata: [DONE]\n\n",
		"data: " + chunk(`{"reasoning_content":"think"}`) + "\n\ndata: " + chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}},{"index":1,"function":{"arguments":"1"}}]}`) + "\n\ndata: " + usage(1, 2, 0) + "\n\n",
		"data: {\"error\":{\"message\":\"m\",\"type\":\"server_error\"}}\n\n",
		"data: " + chunk(`{"refusal":"no"}`) + "\n\ndata: [DONE]\n",
		// Bodies that are not event streams, and one after blank lines and a comment.
		"\r\n {\"error\":{\"code\":429,\"message\":\"Rate limited\"}}",
		"\xEF\xBB\xBF<html><title>Sign in</title></html>",
		"\n\n: ping\n\ndata: " + chunk(`{"content":"Hi"}`) + "\n\ndata: [DONE]\n\n",
		"data: " + chunk(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t"}]},{"type":"text","text":"Hi"}]}`) + "\n\ndata: \n\ndata: " + finish + "\n\n",
		// Thinking inline in content, its tags cut; llama.cpp's error line.
		"data: " + chunk(`{"content":"<thi"}`) + "\n\ndata: " + chunk(`{"content":"nk>\\nx</th"}`) + "\n\ndata: " + chunk(`{"content":"ink>\\n\\ny"}`) + "\n\ndata: " + finish + "\n\n",
		"data: " + chunk(`{"content":"<think>x"}`) + "\n\nerror: {\"code\":400,\"message\":\"m\",\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n",
		// A tool name in pieces; a call with no arguments before another.
		"data: " + chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_"}}]}`) + "\n\ndata: " + chunk(`{"tool_calls":[{"index":0,"function":{"name":"weather","arguments":"{}"}},{"index":1,"function":{"name":"x"}}]}`) + "\n\ndata: " + finish + "\n\n",
		// OpenRouter's reasoning_details with a call; Groq's x_groq usage; errors with details.
		"data: " + chunk(`{"reasoning":"a","reasoning_details":[{"type":"reasoning.text","text":"a","index":0}]}`) + "\n\ndata: " + chunk(`{"reasoning_details":[{"type":"reasoning.text","text":"","signature":"s"},{"type":"reasoning.encrypted","data":"d"}],"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`) + "\n\ndata: {\"choices\":[],\"usage\":null,\"x_groq\":{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}}\n\ndata: " + finish + "\n\n",
		"data: {\"error\":{\"code\":400,\"message\":\"Provider returned error\",\"metadata\":{\"raw\":\"r\",\"provider_name\":\"p\"}}}\n\n",
		// Foundry Local's "error": null in every chunk.
		"data: {\"error\":null,\"choices\":[{\"delta\":{\"content\":\"Hi\",\"tool_calls\":[]},\"index\":0,\"finish_reason\":\"stop\"}],\"usage\":null}\n\ndata: [DONE]\n\n",
		"{\"object\":\"error\",\"message\":{\"detail\":[{\"loc\":[\"body\",0],\"msg\":\"m\"}]},\"type\":\"invalid_request_error\"}",
	} {
		f.Add([]byte(body), uint8(3))
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
