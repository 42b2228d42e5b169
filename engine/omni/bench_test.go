package omni

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	benchPartialText = `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"I will run both tools, then count the lines.","stop_reason":"completed"}}`
	benchToolCall    = `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"list_files","arguments":"{\"path\":\"./src\",\"recursive\":true}","tool_call_id":"toolu_01A09q90qw90lq917835lq9","stop_reason":"completed"}}`
	benchTokenUsage  = `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":120034,"cache_write":2048,"output":5120,"total":131072},"request":{"cache_read":12003,"cache_write":204,"output":512,"total":13107}}}`
)

func benchDecode(b *testing.B, in string) {
	data := []byte(in)
	b.Run("omni", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json_map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var benchSink []byte

func benchEncode(b *testing.B, in string) {
	m, err := Decode([]byte(in))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf = m.AppendJSON(buf[:0])
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink, _ = m.MarshalJSON()
		}
	})
	var v map[string]any
	json.Unmarshal([]byte(in), &v)
	b.Run("json_map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(v)
		}
	})
}

func BenchmarkDecodePartialText(b *testing.B) { benchDecode(b, benchPartialText) }
func BenchmarkEncodePartialText(b *testing.B) { benchEncode(b, benchPartialText) }
func BenchmarkDecodeToolCall(b *testing.B)    { benchDecode(b, benchToolCall) }
func BenchmarkEncodeToolCall(b *testing.B)    { benchEncode(b, benchToolCall) }
func BenchmarkDecodeTokenUsage(b *testing.B)  { benchDecode(b, benchTokenUsage) }
func BenchmarkEncodeTokenUsage(b *testing.B)  { benchEncode(b, benchTokenUsage) }

func BenchmarkDecodeArray(b *testing.B) {
	data := []byte("[" + strings.Repeat(benchPartialText+",", 99) + benchPartialText + "]")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeArray(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidatePartialText(b *testing.B) {
	m, _ := Decode([]byte(benchPartialText))
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAggregatorDelta(b *testing.B) {
	var a Aggregator
	a.Add(Partial(PartialText, EventStart, "", "", "", StatusCompleted))
	d := Partial(PartialText, EventDelta, "token ", "", "", StatusCompleted)
	b.ReportAllocs()
	for b.Loop() {
		a.Add(d)
	}
}

// BenchmarkValidateDelta validates a text delta built in Go without a
// timestamp: the shape of a model's streamed fragment before the engine
// stamps it.
func BenchmarkValidateDelta(b *testing.B) {
	m := Partial(PartialText, EventDelta, "token ", "", "", StatusCompleted)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckerDelta is BenchmarkValidateDelta through a Checker that
// has seen a delta of the same shape: the common case of a stream.
func BenchmarkCheckerDelta(b *testing.B) {
	m := Partial(PartialText, EventDelta, "token ", "", "", StatusCompleted)
	var c Checker
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(&m); err != nil {
			b.Fatal(err)
		}
	}
}
