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
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
}
