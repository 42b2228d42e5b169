//go:build js && wasm

package jsbridge

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// The codec inside WebAssembly, as the bridge uses it, per message of a
// batch of 512 streamed text fragments: decoding a producer batch as
// fragment records and as JSON (J records), writing a consumer batch.

func benchDecode(b *testing.B, data string) {
	n := 0
	b.ResetTimer()
	for range b.N {
		if err := eachRecord(data, func(omni.Message) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}

func BenchmarkDecodeRecords512(b *testing.B) {
	benchDecode(b, "Tsa0:-"+strings.Repeat("Tda8:abcdefg -", 510)+"Txa0:-") // as the shim writes them
}

func BenchmarkDecodeJSON512(b *testing.B) {
	benchDecode(b, jRecords(textJSON(509, "abcdefg ")...)+jRecords(usageJSON()))
}

func benchEncode(b *testing.B, jsonOnly bool) {
	msgs := make([]omni.Message, 512)
	for i := range msgs {
		msgs[i] = omni.Partial(omni.PartialText, omni.EventDelta, "abcdefg ", "", "", "")
		msgs[i].Timestamp = "2026-01-01T00:00:00.000Z"
	}
	buf := make([]byte, 0, 1<<16)
	b.ResetTimer()
	for range b.N {
		w := recordWriter{jsonOnly: jsonOnly}
		buf = buf[:0]
		for i := range msgs {
			buf, _ = w.append(buf, &msgs[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}

func BenchmarkEncodeRecords512(b *testing.B) { benchEncode(b, false) }
func BenchmarkEncodeJSON512(b *testing.B)    { benchEncode(b, true) }

// Complete messages as a run yields them (a text, a tool call, its output;
// 513 messages): as records and as JSON.
func completeBatch(asJSON bool) string {
	body, args, output := "Here is what I found in the file.", `{"path":"/src/main.go"}`, "package main\n\nfunc main() {}\n"
	if asJSON {
		text := `{"type":"model_msg","payload":{"type":"text","role":"assistant","text":"Here is what I found in the file.","stop_reason":"completed"}}`
		call := `{"type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"read","arguments":"{\"path\":\"/src/main.go\"}","tool_call_id":"call_0001","stop_reason":"completed"}}`
		out := `{"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"package main\n\nfunc main() {}\n","tool_call_id":"call_0001","stop_reason":"completed"}}`
		return strings.Repeat(jRecords(text, call, out), 171)
	}
	stop := lenStr("completed")
	return strings.Repeat("Tca"+lenStr(body)+stop+"Cca"+lenStr(args)+lenStr("call_0001")+lenStr("read")+stop+
		"Ocu"+lenStr(output)+lenStr("call_0001")+stop, 171)
}

func BenchmarkDecodeCompleteRecords512(b *testing.B) { benchDecode(b, completeBatch(false)) }
func BenchmarkDecodeCompleteJSON512(b *testing.B)    { benchDecode(b, completeBatch(true)) }
