//go:build js && wasm

package jsbridge

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// The omni codec inside WebAssembly: the main cost per message of a run.
func BenchmarkDecodeArray512(b *testing.B) {
	parts := textJSON(510, "abcdefg ")
	data := []byte("[" + strings.Join(parts, ",") + "]")
	b.ResetTimer()
	for range b.N {
		if _, err := omni.DecodeArray(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}

func BenchmarkAppendJSON512(b *testing.B) {
	parts := textJSON(510, "abcdefg ")
	msgs, _ := omni.DecodeArray([]byte("[" + strings.Join(parts, ",") + "]"))
	for i := range msgs {
		msgs[i].Timestamp = "2026-01-01T00:00:00.000Z"
	}
	buf := make([]byte, 0, 1<<16)
	b.ResetTimer()
	for range b.N {
		buf = appendArray(buf[:0], msgs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}

func BenchmarkDecodeOneByOne512(b *testing.B) {
	parts := textJSON(510, "abcdefg ")
	data := []byte("[" + strings.Join(parts, ",") + "]")
	els, _ := splitArray(data)
	var m omni.Message
	b.ResetTimer()
	for range b.N {
		for _, el := range els {
			if err := m.UnmarshalJSON(el); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}

// BenchmarkEachMessage512 is the bridge's decoding of a producer batch.
func BenchmarkEachMessage512(b *testing.B) {
	data := []byte("[" + strings.Join(textJSON(510, "abcdefg "), ",") + "]")
	n := 0
	b.ResetTimer()
	for range b.N {
		if err := eachMessage(data, func(omni.Message) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/msg")
}
