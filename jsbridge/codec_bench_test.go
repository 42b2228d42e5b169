//go:build js && wasm

package jsbridge

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// The omni codec inside WebAssembly: the main cost per message of a run.
func BenchmarkDecodeBatch512(b *testing.B) {
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
