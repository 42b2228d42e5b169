package provider

import (
	"context"
	"io"
)

// Request is one HTTP request of an adapter.
type Request struct {
	Method string            // "POST" for every model request
	URL    string            // absolute URL
	Header map[string]string // request headers; names as the adapter writes them
	Body   []byte            // the request body (JSON)
}

// Response is the start of an HTTP response; Body streams the rest.
type Response struct {
	Status int               // HTTP status code
	Header map[string]string // lower-case names; repeated headers joined by ", "
	Body   io.ReadCloser     // the body as it arrives; see the package doc for its contract
}

// Transport sends a Request and returns the Response as soon as its headers
// are in. The package documentation states the whole contract.
type Transport interface {
	RoundTrip(ctx context.Context, req *Request) (*Response, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, req *Request) (*Response, error)

// RoundTrip calls f.
func (f TransportFunc) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}

// Usage is the token accounting of one request as the provider stated it.
// Input follows the provider's own definition: OpenAI's prompt/input tokens
// include cached tokens, Anthropic's input_tokens exclude them.
type Usage struct {
	Input      int64 // the prompt's tokens (the provider's input or prompt count)
	Output     int64 // the reply's tokens, thinking included
	CacheRead  int64 // input tokens read from the prompt cache
	CacheWrite int64 // input tokens written to the prompt cache (Anthropic's cache_creation)
}

// NDJSON returns a Transport that sends through t and hands the body of
// a 2xx answer in newline-delimited JSON (a value a line: Ollama's own
// /api/chat, a model server of one's own) on as an event stream, each
// line that is not blank the data of one event: Stream,
// Conversation.Generate and a Decoder then read it as they read
// Server-Sent Events, which alone they read (a body that starts with "{"
// is an error answer to them). A line the body ends in without its line
// break is an event too; a body cut by a failed read is not. A byte order
// mark that opens the body is dropped, as the event-stream reader drops
// one. Blank lines are bytes from the server for Stream's idle timeout (a
// server's keep-alive). An error status is passed on as it came, for
// StatusFailure.
func NDJSON(t Transport) Transport {
	return TransportFunc(func(ctx context.Context, req *Request) (*Response, error) {
		resp, err := t.RoundTrip(ctx, req)
		if err == nil && resp.Status >= 200 && resp.Status <= 299 {
			resp.Body = &ndjson{src: resp.Body}
		}
		return resp, err
	})
}

// ndjson frames a body of JSON lines as an event stream: "data: " before
// each line, a blank line after it.
type ndjson struct {
	src   io.ReadCloser
	buf   []byte
	out   []byte // framed, not read yet
	line  bool   // a line's "data: " is out
	err   error  // what ended src
	start int    // the bytes of a byte order mark read at the body's start; -1 past it
}

const bom = "\xEF\xBB\xBF"

func (r *ndjson) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		switch {
		case r.err == io.EOF && r.start > 0: // the body was the start of a mark
			r.unmark()
			continue
		case r.err == io.EOF && r.line:
			r.line = false
			r.out = append(r.out, "\n\n"...)
			continue
		case r.err != nil:
			return 0, r.err
		}
		if r.buf == nil {
			r.buf = make([]byte, 16<<10)
		}
		n, err := r.src.Read(r.buf)
		r.err = err
		r.out = r.out[:0]
		for _, c := range r.buf[:n] {
			if r.start >= 0 {
				if c == bom[r.start] {
					if r.start++; r.start == len(bom) {
						r.start = -1 // a mark: dropped
					}
					continue
				}
				r.unmark()
			}
			r.put(c)
		}
		if len(r.out) == 0 && n > 0 && err == nil {
			// Blank lines only (a server keeping the connection alive):
			// returned as a read of nothing, so that the watchdog of the
			// read (Stream's idle timeout) sees bytes came.
			return 0, nil
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// unmark frames the bytes read as the start of a byte order mark that
// was not one: they are the first line's.
func (r *ndjson) unmark() {
	for i := 0; i < r.start; i++ {
		r.put(bom[i])
	}
	r.start = -1
}

// put frames one byte of the body.
func (r *ndjson) put(c byte) {
	switch {
	case c == '\n':
		if r.line {
			r.out = append(r.out, "\n\n"...)
			r.line = false
		}
	case c == '\r' || !r.line && (c == ' ' || c == '\t'):
		// a CRLF line end, a blank line (JSON escapes a CR in a string)
	default:
		if !r.line {
			r.out = append(r.out, "data: "...)
			r.line = true
		}
		r.out = append(r.out, c)
	}
}

func (r *ndjson) Close() error { return r.src.Close() }
