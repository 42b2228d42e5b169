package replay

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
)

// A session whose model answers 429 with a Retry-After (Anthropic's), a
// 529 with retry-after-ms (OpenAI's) or a 429 whose body's RetryInfo
// has a retryDelay (Gemini's) retries after that wait, longer than
// the backoff's 2 s, and announces it as retry_in_ms; one past
// provider.MaxRetryAfter ends the run at once, naming the wait. The
// session's clock is a fake: no wait is real.
func TestRetryAfterSession(t *testing.T) {
	okAnthropic := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi.\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	okChat := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi.\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name    string
		header  [2]string
		status  int
		make    func(base string) (engine.LLM, error)
		ok      string
		retryIn string // the request_ends' retry_in_ms
		waits   string
		abort   string
	}{
		{"anthropic 429 Retry-After", [2]string{"Retry-After", "20"}, 429, func(base string) (engine.LLM, error) {
			return anthropic.New(anthropic.Options{Transport: nethttp.New(nil), BaseURL: base, Model: "claude-sonnet-4-5"})
		}, okAnthropic, "20000", "[20s]", ""},
		{"openai 529 retry-after-ms", [2]string{"Retry-After-Ms", "7500"}, 529, func(base string) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: nethttp.New(nil), BaseURL: base, Model: "m"})
		}, okChat, "7500", "[7.5s]", ""},
		{"gemini 429 retryDelay", [2]string{}, 429, func(base string) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: nethttp.New(nil), BaseURL: base, Model: "gemini-2.5-flash", Gemini: true})
		}, okChat, "31500", "[31.5s]", ""},
		{"anthropic 429 Retry-After past the bound", [2]string{"Retry-After", "3600"}, 429, func(base string) (engine.LLM, error) {
			return anthropic.New(anthropic.Options{Transport: nethttp.New(nil), BaseURL: base, Model: "claude-sonnet-4-5"})
		}, okAnthropic, "", "[]", "rate-limited: the server asks for a wait of 3600 s before another request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n++; n == 1 {
					if tc.header[0] == "" { // Gemini's wait, in the body
						w.WriteHeader(tc.status)
						fmt.Fprint(w, `[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31.5s"}]}}]`)
						return
					}
					w.Header().Set(tc.header[0], tc.header[1])
					w.WriteHeader(tc.status)
					fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
					return
				}
				w.Header().Set("content-type", "text/event-stream")
				fmt.Fprint(w, tc.ok)
			}))
			defer srv.Close()
			llm, err := tc.make(srv.URL + "/v1")
			if err != nil {
				t.Fatal(err)
			}
			clk := enginetest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
			s, err := engine.New(engine.Config{Meta: enginetest.Meta("retry-after"), LLM: llm, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := s.Run(context.Background(), []omni.Message{omni.UserText("hi")}, engine.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var retryIn []string
			abort := ""
			for m := range msgs {
				if r := m.Payload.RetryInMs(); m.IsEvent(omni.RequestEnd) && r != nil {
					retryIn = append(retryIn, fmt.Sprint(*r))
				}
				if m.IsEvent(omni.Abort) {
					abort = m.Payload.Reason()
				}
			}
			if got := strings.Join(retryIn, " "); got != tc.retryIn {
				t.Errorf("retry_in_ms %q, want %q", got, tc.retryIn)
			}
			if got := fmt.Sprint(clk.Sleeps()); got != tc.waits {
				t.Errorf("waits %s, want %s", got, tc.waits)
			}
			if tc.abort == "" && abort != "" || !strings.Contains(abort, tc.abort) {
				t.Errorf("abort %q, want one with %q", abort, tc.abort)
			}
		})
	}
}
