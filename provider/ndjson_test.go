package provider

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/floehq/floe/engine/omni"
)

// NDJSON hands each line of a 2xx body that is not blank to the decoder
// as one event's data, in any reads (CRLF, blank lines, a last line
// without its line break); a body cut by a failed read is the network's
// failure, its cut line no event; an error status is passed on.
func TestNDJSON(t *testing.T) {
	answer := func(status int, body io.Reader) Transport {
		return NDJSON(TransportFunc(func(context.Context, *Request) (*Response, error) {
			return &Response{Status: status, Header: map[string]string{}, Body: io.NopCloser(body)}, nil
		}))
	}
	const body = "{\"a\":1}\r\n\n  \n{\"b\":\"x y\"}\n{\"c\":[]}"
	for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body))} {
		d := &collectDecoder{}
		f := Stream(context.Background(), answer(200, r), &Request{}, "x", 0, d)
		if got := strings.Join(d.data, "|"); got != `{"a":1}|{"b":"x y"}|{"c":[]}` || f == nil || f.Status != omni.StatusMalformed {
			t.Errorf("events %q, failure %+v", got, f)
		}
	}
	d := &collectDecoder{}
	f := Stream(context.Background(), answer(200, io.MultiReader(strings.NewReader("{\"a\":1}\n{\"b\""), failingReader{})), &Request{}, "x", 0, d)
	if got := strings.Join(d.data, "|"); got != `{"a":1}` || f == nil || f.Status != omni.StatusTimeout {
		t.Errorf("cut: events %q, failure %+v", got, f)
	}
	f = Stream(context.Background(), answer(401, strings.NewReader(`{"error":{"message":"bad key"}}`)), &Request{}, "x", 0, &collectDecoder{})
	if f == nil || f.Status != omni.StatusAuth || !strings.Contains(f.Message, "bad key") {
		t.Errorf("401: %+v", f)
	}
}

// A byte order mark that opens the body is dropped, in any reads, as the
// event-stream reader drops one and readLines (JavaScript) does: it went
// into the first line's data, which then was no JSON, and every attempt
// of the request failed as malformed. One later is the line's.
func TestNDJSONByteOrderMark(t *testing.T) {
	const body = "\xEF\xBB\xBF{\"a\":1}\n{\"b\":2}\n"
	for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body))} {
		d := &collectDecoder{}
		answer := NDJSON(TransportFunc(func(context.Context, *Request) (*Response, error) {
			return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(r)}, nil
		}))
		Stream(context.Background(), answer, &Request{}, "x", 0, d)
		if got := strings.Join(d.data, "|"); got != `{"a":1}|{"b":2}` {
			t.Errorf("events %q", got)
		}
	}
}
