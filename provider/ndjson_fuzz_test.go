package provider

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/floehq/floe/provider/sse"
)

// FuzzNDJSON: in any reads, the framing of a body of JSON lines read as an
// event stream gives one event a line that is not blank, its data the line
// without CRs and its leading blanks (and the body's opening byte order
// mark): a line's bytes never end its event or start another.
func FuzzNDJSON(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\r\n\n  \n{\"b\":\"x y\"}\n{\"c\":[]}", "", "\n", "x", " \t\r\n\r", "data: x\n\nevent: y\n", ":c\rd\r\n\x00\xff", "\xEF\xBB\xBF{}\n\xEF\xBB\xBF", "\xEF\xBB", "\xEF\xBBx\n"} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, body string, n uint8) {
		var want []string
		for _, line := range strings.Split(strings.TrimPrefix(body, "\xEF\xBB\xBF"), "\n") {
			line = strings.TrimLeft(line, " \t\r")
			if line = strings.ReplaceAll(line, "\r", ""); line != "" {
				want = append(want, line)
			}
		}
		var src io.Reader = strings.NewReader(body)
		if n%2 == 1 {
			src = iotest.OneByteReader(src)
		}
		nd := &ndjson{src: io.NopCloser(src)}
		r := sse.NewReader(iotest.HalfReader(nd))
		var got []string
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q: after events %q: %v", body, got, err)
			}
			got = append(got, string(ev.Data))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("%q: events %q, want %q", body, got, want)
		}
	})
}
