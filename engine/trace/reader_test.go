package trace_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

const (
	recA = `{"timestamp":"2026-11-30T04:09:45.282Z","type":"event_msg","payload":{"type":"request_begin"}}`
	recB = `{"timestamp":"2026-11-30T04:09:45.283Z","type":"model_msg","payload":{"type":"text","role":"user","text":"hi","stop_reason":"completed"}}`
	torn = `{"timestamp":"2026-11-30T04:09:45.284Z","type":"mod`
)

func TestReadFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		records int
		skipped []int
		torn    bool
	}{
		{"empty", "", 0, nil, false},
		{"blank lines only", "\n \n\t\n", 0, nil, false},
		{"two records", recA + "\n" + recB + "\n", 2, nil, false},
		{"no final newline", recA + "\n" + recB, 2, nil, false},
		{"blank lines between", "\n" + recA + "\n\n  \n" + recB + "\n\n", 2, nil, false},
		{"torn tail", recA + "\n" + torn, 1, nil, true},
		{"torn tail then blank lines", recA + "\n" + torn + "\n\n \n", 1, nil, true},
		{"only a torn line", torn, 0, nil, true},
		{"malformed middle", recA + "\n" + torn + "\n" + recB + "\n", 2, []int{2}, false},
		{"malformed middle and torn tail", torn + "\n\n" + recA + "\n" + "123\n" + recB + "\n" + torn, 2, []int{1, 4}, true},
		{"not an object", "[1,2]\n" + recA + "\n", 1, []int{1}, false},
		{"missing payload", `{"type":"event_msg"}` + "\n" + recA + "\n", 1, []int{1}, false},
		{"CRLF", recA + "\r\n" + recB + "\r\n", 2, nil, false},
		{"BOM and JS whitespace", "\ufeff" + recA + "\u00a0\n\u2028\n\u3000" + recB + "\n", 2, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := trace.ReadFile([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Records) != tc.records || !slices.Equal(p.SkippedLines(), tc.skipped) || p.TornTail != tc.torn {
				t.Errorf("got %d records, skipped %v, torn %v; want %d, %v, %v",
					len(p.Records), p.SkippedLines(), p.TornTail, tc.records, tc.skipped, tc.torn)
			}
			for _, s := range p.Skipped {
				if s.Err == nil {
					t.Errorf("line %d skipped without a diagnostic", s.Line)
				}
			}
			if err := p.Strict(); (err != nil) != (len(tc.skipped) > 0) {
				t.Errorf("Strict() = %v", err)
			} else if err != nil && !strings.Contains(err.Error(), "line ") {
				t.Errorf("Strict() = %v, want the line number", err)
			}
		})
	}
}

func TestReadFileKeepsRecordOrderAndContent(t *testing.T) {
	p, err := trace.ReadFile([]byte(recA + "\n" + recB + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Records[0].Payload.Type != "request_begin" || p.Records[1].Payload.Text != "hi" {
		t.Errorf("records = %+v", p.Records)
	}
}

// ReadFile sizes its records once, in floe.wasm too: appending 100,000
// records one at a time grew the slice by a quarter at a time and
// allocated five times what it kept (a 14 MB Trace: 128 MB per read, at
// every resume and every /messages of the session server, and in
// floe.wasm at every resume and import). A file of blank lines is not
// taken for records.
func TestReadFileSizesItsRecordsOnce(t *testing.T) {
	const n = 20000
	data := []byte(strings.Repeat(recA+"\n", n))
	p, err := trace.ReadFile(data)
	if err != nil || len(p.Records) != n {
		t.Fatalf("%d records, %v", len(p.Records), err)
	}
	if c := cap(p.Records); c > n+1 {
		t.Errorf("cap(Records) = %d for %d records: the slice grew by appends", c, n)
	}
	if c := cap(p.Lines); c > n+1 {
		t.Errorf("cap(Lines) = %d for %d records", c, n)
	}
	blank, _ := trace.ReadFile([]byte(strings.Repeat("\n", 1<<20)))
	if c := cap(blank.Records); c > (1<<20)/32+1 {
		t.Errorf("a file of 1 Mi newlines: cap(Records) = %d", c)
	}
}
