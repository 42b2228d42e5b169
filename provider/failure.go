package provider

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Failure is a request that did not complete, with its stop reason. The
// adapters' event decoders return it for error events and bad payloads.
type Failure struct {
	Status    string // omni.Status*: auth, timeout, failed, malformed
	Message   string
	Permanent bool
}

func (f *Failure) Error() string { return f.Message }

// Outcome returns f as an engine outcome.
func (f *Failure) Outcome() engine.Outcome {
	return engine.Outcome{Status: f.Status, ErrorMessage: f.Message, Permanent: f.Permanent && f.Status == omni.StatusFailed}
}

// Malformed returns a malformed-stream failure.
func Malformed(api, msg string) *Failure {
	return &Failure{Status: omni.StatusMalformed, Message: api + ": malformed stream: " + msg}
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// StatusFailure maps an HTTP error response to its stop reason: 401 and 403
// are auth; 408, 409, 429 and 5xx timeout; other 4xx (and 3xx, a redirect
// the transport did not follow) failed, permanent for 400, 404, 405, 413,
// 415, 422 and 3xx. The message names the API, the status,
// the server's own message (the JSON error's message, else the start of the
// body) and Retry-After when the server sent it.
func StatusFailure(api string, resp *Response) *Failure {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	f := &Failure{Status: omni.StatusFailed}
	switch st := resp.Status; {
	case st == 401 || st == 403:
		f.Status = omni.StatusAuth
	case st == 408 || st == 409 || st == 429 || st >= 500:
		f.Status = omni.StatusTimeout
	case st == 400 || st == 404 || st == 405 || st == 413 || st == 415 || st == 422:
		f.Permanent = true
	case st >= 300 && st < 400: // a redirect not followed (the key stays with the endpoint)
		f.Permanent = true
	}
	msg := api + ": HTTP " + strconv.Itoa(resp.Status)
	if detail := ErrorDetail(body); detail != "" {
		msg += ": " + detail
	}
	if ra := resp.Header["retry-after"]; ra != "" {
		msg += " (Retry-After: " + ra + ")"
	}
	f.Message = msg
	return f
}

// ErrorDetail extracts a readable message from an error body: the message
// (and type or code) of a JSON error object, else the title or text of an
// HTML page, else the body's first line, at most 300 bytes.
func ErrorDetail(body []byte) string {
	if typ, msg := ErrorFields(body); msg != "" || typ != "" {
		if typ != "" && msg != "" {
			return typ + ": " + msg
		}
		return typ + msg
	}
	s := strings.TrimSpace(string(body))
	if i := strings.Index(strings.ToLower(s), "<title>"); i >= 0 {
		s = s[i+7:]
		if j := strings.Index(strings.ToLower(s), "</title>"); j >= 0 {
			s = s[:j]
		}
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return clip(strings.TrimSpace(s), 300)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ErrorFields reads the type (or code) and message of a JSON error in any
// of the shapes the providers use: {"error":{"type","code","message"}},
// {"type":"error","error":{…}}, {"code","message"} and {"error":"text"}.
func ErrorFields(body []byte) (typ, msg string) {
	r := omni.NewJSONReader(body)
	if r.Kind() != "object" {
		return "", ""
	}
	var code string
	err := r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "error":
			if r.Kind() == "string" {
				msg, err = r.Str()
				return err
			}
			if r.Kind() != "object" {
				return r.Skip()
			}
			typ, msg = ErrorFields(mustRaw(r))
		case "message":
			if r.Kind() == "string" && msg == "" {
				msg, err = r.Str()
				return err
			}
			return r.Skip()
		case "type":
			if r.Kind() == "string" {
				var t string
				if t, err = r.Str(); t != "error" && typ == "" {
					typ = t
				}
				return err
			}
			return r.Skip()
		case "code":
			if r.Kind() == "string" {
				code, err = r.Str()
				return err
			}
			if r.Kind() == "number" {
				var raw omni.RawJSON
				raw, err = r.Raw()
				code = string(raw)
				return err
			}
			return r.Skip()
		default:
			return r.Skip()
		}
		return nil
	})
	if err != nil {
		return "", ""
	}
	if typ == "" {
		typ = code
	}
	return typ, msg
}

func mustRaw(r *omni.JSONReader) []byte {
	raw, _ := r.Raw()
	return raw
}

// Transient reports whether a provider error type or code names a
// condition that passes (overload, rate limit, server error).
func Transient(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "rate_limit_exceeded", "server_error", "api_error",
		"internal_server_error", "service_unavailable", "timeout", "overloaded", "too_many_requests":
		return true
	}
	return false
}

// ErrorEvent maps an error reported inside a 200 stream: transient types
// are timeout, authentication types auth, the rest failed.
func ErrorEvent(api, typ, msg string) *Failure {
	f := &Failure{Status: omni.StatusFailed}
	switch {
	case Transient(typ):
		f.Status = omni.StatusTimeout
	case typ == "authentication_error" || typ == "permission_error" || typ == "invalid_api_key":
		f.Status = omni.StatusAuth
	}
	m := api + ": error event"
	if typ != "" {
		m += ": " + typ
	}
	if msg != "" {
		m += ": " + msg
	}
	f.Message = m
	return f
}

// TransportFailure maps an error of RoundTrip or Body.Read: aborted when
// ctx is done, otherwise timeout (the network failed).
func TransportFailure(ctx context.Context, api, what string, err error) *Failure {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return &Failure{Status: omni.StatusAborted, Message: api + ": aborted"}
	}
	return &Failure{Status: omni.StatusTimeout, Message: api + ": " + what + ": " + err.Error()}
}
