package request

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzBody has a field of each kind the session API's bodies use.
type fuzzBody struct {
	ID     string          `json:"id"`
	Mode   *string         `json:"approvalMode"`
	Input  json.RawMessage `json:"input"`
	Queue  bool            `json:"queueIfBusy"`
	Images []string        `json:"images"`
	From   int             `json:"from"`
}

// FuzzDecode checks Decode on any body: it never panics; what it accepts,
// encoding/json reads to the same values (null being an absent key, a
// UTF-8 byte order mark first ignored); what it refuses gets a message of
// one line of valid UTF-8, as a client's log shows it, which names UTF-16
// for a body with its byte order mark.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","approvalMode":"ask","input":[{"type":"x"}],"queueIfBusy":true,"images":["data:"],"from":3}`,
		`{"id":null,"input":null}`, `{"images":[1]}`, `{"from":1.5}`, `{"from":1e2}`, `{"id":"a","id":"b"}`,
		`{"ID":"a"}`, `{"id":"\u00e9\ud83d\ude00"}`, `{"input": {"a" : [1, 2]} }`, `[]`, `"x"`, ``, `{`, `{"id":"a"} x`,
		"{\"id\":\"a\n\"}", "{\"\xff\":1}", `{"from":-0}`, `{"approvalMode":null}`, `{"images":null}`, `{"images":[]}`,
		"\xef\xbb\xbf{\"id\":\"a\"}", "\xef\xbb\xbf", "\xef\xbb\xbf\xef\xbb\xbf{}", "\xef\xbb\xbf []", "\xef\xbb{}", " \xef\xbb\xbf{}",
		"\xff\xfe{\x00}\x00", "\xfe\xff\x00{\x00}", "\xef\xbb\xbf\xff\xfe{}", "{\"id\":\"\xef\xbb\xbf\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got fuzzBody
		msg := Decode(body, &got)
		if b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")); (bytes.HasPrefix(b, []byte("\xff\xfe")) || bytes.HasPrefix(b, []byte("\xfe\xff"))) && !strings.Contains(msg, "UTF-16") {
			t.Fatalf("Decode(%q) = %q: want UTF-16 named", body, msg)
		}
		if msg != "" {
			if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
				t.Fatalf("Decode(%q) = %q: want one line of UTF-8", body, msg)
			}
			return
		}
		var want fuzzBody
		if err := json.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &want); err != nil {
			t.Fatalf("Decode accepted %q, which encoding/json refuses: %v", body, err)
		}
		if bytes.Equal(bytes.TrimSpace(want.Input), []byte("null")) {
			want.Input = nil
		}
		if want.Input != nil && got.Input != nil {
			var a, b bytes.Buffer
			if json.Compact(&a, want.Input) != nil || json.Compact(&b, got.Input) != nil || a.String() != b.String() {
				t.Fatalf("Decode(%q): input %s, encoding/json %s", body, got.Input, want.Input)
			}
			want.Input, got.Input = nil, nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %+v, encoding/json %+v", body, got, want)
		}
	})
}
