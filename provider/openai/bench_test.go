package openai

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// BenchmarkTurn: one W1-sized turn as Chat Completions SSE bytes (200 text
// deltas, 4 tool calls with streamed arguments, usage), decoded and
// emitted in streaming discipline, from an in-memory transport in 4 KB
// reads.
func BenchmarkTurn(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 200; i++ {
		sb.WriteString("data: " + chunk(`{"content":"word`+strconv.Itoa(i)+` "}`) + "\n\n")
	}
	for c := 0; c < 4; c++ {
		sb.WriteString("data: " + chunk(`{"tool_calls":[{"index":`+strconv.Itoa(c)+`,"id":"call_`+strconv.Itoa(c)+`","type":"function","function":{"name":"tool","arguments":""}}]}`) + "\n\n")
		for a := 0; a < 10; a++ {
			sb.WriteString("data: " + chunk(`{"tool_calls":[{"index":`+strconv.Itoa(c)+`,"function":{"arguments":"{\"k`+strconv.Itoa(a)+`\":1}"}}]}`) + "\n\n")
		}
	}
	sb.WriteString("data: " + finish + "\n\ndata: " + usage(100, 300, 0) + "\n\ndata: [DONE]\n\n")
	body := sb.String()
	var chunks []string
	for s := body; s != ""; {
		n := min(4096, len(s))
		chunks = append(chunks, s[:n])
		s = s[n:]
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	msgs := 0
	for i := 0; i < b.N; i++ {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: append([]string(nil), chunks...)}}}
		m, _ := New(Options{Transport: tr, Model: "m"})
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("go")}}, func(omni.Message) { msgs++ })
		if out.Status != omni.StatusCompleted {
			b.Fatal(out)
		}
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}
