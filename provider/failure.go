package provider

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Failure is a request that did not complete, with its stop reason. The
// adapters' event decoders return it for error events and bad payloads.
type Failure struct {
	_         [0]func() // not comparable: no generated equality code
	Status    string    // omni.Status*: auth, timeout, failed, malformed, aborted
	Message   string
	Permanent bool
	// RetryAfter is the wait the server asked for before another request
	// (Retry-After), at most MaxRetryAfter; 0 = none.
	RetryAfter time.Duration
}

func (f *Failure) Error() string { return f.Message }

// Outcome returns f as an engine outcome.
func (f *Failure) Outcome() engine.Outcome {
	return engine.Outcome{Status: engine.Status(f.Status), ErrorMessage: f.Message, Permanent: f.Permanent && f.Status == omni.StatusFailed, RetryAfter: f.RetryAfter}
}

// Malformed returns a malformed-stream failure.
func Malformed(api, msg string) *Failure {
	return &Failure{Status: omni.StatusMalformed, Message: api + ": malformed stream: " + msg}
}

// BadEvent is the failure for an event whose data is not a JSON object.
func BadEvent(api string, data []byte, err error) *Failure {
	msg := "an event's data is not a JSON object"
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	return Malformed(api, msg+": "+clip(string(data), 200))
}

// StatusFailure maps an HTTP error response to its stop reason: 401 and 403
// are auth; 408, 409, 429 and 5xx timeout (but llama.cpp's 500 saying a
// request's tools require --jinja, and a 429 of insufficient_quota,
// failed and permanent); other 4xx (and 3xx, a redirect
// the transport did not follow) failed, permanent for 400, 402 (credits or
// billing: a retry cannot help), 404, 405, 413, 415, 422 and 3xx. The message names the API, the status,
// the server's own message (the JSON error's message, else the start of the
// body; for a redirect of no body, where it pointed; for a 403 of no
// body, what it most likely is: Ollama's origin check) and Retry-After
// when the server sent it. The wait a timeout's Retry-After (or
// retry-after-ms; without either, the retryDelay of a Google error's
// RetryInfo detail, quoted) asks is its RetryAfter, which the engine's retry waits;
// a wait longer than MaxRetryAfter makes it failed and permanent, the
// message naming the wait.
func StatusFailure(api string, resp *Response) *Failure {
	body := readBody(resp)
	f := &Failure{Status: omni.StatusFailed}
	switch st := resp.Status; {
	case st == 401 || st == 403:
		f.Status = omni.StatusAuth
	case st == 408 || st == 409 || st == 429 || st >= 500:
		f.Status = omni.StatusTimeout
	case st == 400 || st == 402 || st == 404 || st == 405 || st == 413 || st == 415 || st == 422:
		f.Permanent = true
	case st >= 300 && st < 400: // a redirect not followed (the key stays with the endpoint)
		f.Permanent = true
	}
	msg := api + ": HTTP " + strconv.Itoa(resp.Status)
	detail := ErrorDetail(body)
	if loc := resp.Header["location"]; resp.Status >= 300 && resp.Status < 400 && loc != "" {
		// A Transport that hands the redirect on as it came (nethttp),
		// its body an HTML stub or nothing: say where it pointed, as the
		// browser's and the Worker's own error bodies do.
		if typ, code, m := ErrorFields(body); typ == "" && code == "" && m == "" {
			detail = "the server redirected to " + loc + ", not followed: the request goes only to the URL it was sent to"
		}
	}
	if st := resp.Status; st == 403 && len(body) == 0 {
		// Ollama refuses a request from an origin it does not allow (an
		// extension's, another host's page) with a 403 of no body; a
		// hosted API's 403 says why, but a proxy or a firewall in front
		// of one may say nothing either: "most likely".
		detail = "no body: most likely Ollama refusing a request from an origin it does not allow (list the origin in its OLLAMA_ORIGINS), else a proxy's refusal"
	}
	if detail != "" {
		msg += ": " + detail
		if index(detail, "requires --jinja") >= 0 || resp.Status == 429 && index(detail, "insufficient_quota") >= 0 {
			// llama.cpp's server started without --jinja answers 500
			// to a request with tools, and OpenAI 429 to a request
			// of an account whose quota or credit is spent, as to one
			// past a rate limit: a retry cannot help.
			f.Status, f.Permanent = omni.StatusFailed, true
		}
	}
	if ra := resp.Header["retry-after"]; ra != "" {
		msg += " (Retry-After: " + ra + ")"
	}
	if f.Status == omni.StatusTimeout {
		// The wait the server asks for (OpenAI's retry-after-ms first, as
		// its SDK reads it): the engine's retry waits it when it is
		// longer than its backoff's delay; a longer wait than a retry
		// takes fails now rather than being refused again until the
		// retries run out.
		d, ok := time.Duration(0), false
		if n := digits(trim(resp.Header["retry-after-ms"])); n >= 0 {
			d, ok = time.Duration(n)*time.Millisecond, true
		} else if d, ok = ParseRetryAfter(resp.Header["retry-after"], now()); !ok {
			// Gemini's wait is in the body: google.rpc.RetryInfo's
			// retryDelay.
			if v := retryDelay(body); v != "" {
				if d, ok = protoDuration(v); ok {
					msg += " (retryDelay: " + v + ")"
				}
			}
		}
		switch {
		case !ok:
		case d > MaxRetryAfter:
			f.Status, f.Permanent = omni.StatusFailed, true
			if resp.Status == 429 {
				msg += ": rate-limited"
			}
			msg += ": the server asks for a wait of " + seconds(d) + " before another request, longer than a retry waits (at most " + seconds(MaxRetryAfter) + ")"
		default:
			f.RetryAfter = d
		}
	}
	f.Message = msg
	return f
}

// MaxRetryAfter is the longest wait a server's Retry-After may ask of a
// retry (the engine's retry waits it when it is longer than the
// backoff's delay); a longer one fails the request at once (failed,
// permanent), naming the wait.
const MaxRetryAfter = 2 * time.Minute

// maxParsedWait bounds a wait ParseRetryAfter returns (a year): more
// seconds would overflow a Duration.
const maxParsedWait = 365 * 24 * time.Hour

// now is the clock an HTTP date of Retry-After is read against.
var now = time.Now

// ParseRetryAfter reads an HTTP Retry-After value v at the time t: a
// number of seconds, or an HTTP date (IMF-fixdate, "Sun, 06 Nov 1994
// 08:49:37 GMT", or the obsolete forms RFC 9110 §5.6.7 has recipients
// accept: RFC 850's "Sunday, 06-Nov-94 08:49:37 GMT" and asctime's "Sun
// Nov  6 08:49:37 1994"), a date past t a wait of 0; at most a year. ok
// is false for anything else.
func ParseRetryAfter(v string, t time.Time) (d time.Duration, ok bool) {
	v = trim(v)
	if n := digits(v); n >= 0 {
		return time.Duration(min(n, int64(maxParsedWait/time.Second))) * time.Second, true
	}
	at, ok := httpDate(v, t.Unix())
	if !ok {
		return 0, false
	}
	return time.Duration(min(max(at-t.Unix(), 0), int64(maxParsedWait/time.Second))) * time.Second, true
}

// httpDate reads an HTTP date in one of its three forms as seconds since
// 1970 (by hand, without time.Parse or time.Date: 20 kB of floe.wasm).
// RFC 850's two-digit year is the latest year of those digits not more
// than 50 years after now (RFC 9110 §5.6.7). The weekday's name is not
// checked.
func httpDate(v string, now int64) (int64, bool) {
	i := 0
	for i < len(v) && v[i] != ',' {
		i++
	}
	var day, mon, year, clock string
	switch r := v[i:]; {
	case i == 3 && shape(r, ", 00 xxx 0000 00:00:00 GMT"): // IMF-fixdate
		day, mon, year, clock = r[2:4], r[5:8], r[9:13], r[14:22]
	case i >= 6 && i <= 9 && shape(r, ", 00-xxx-00 00:00:00 GMT"): // RFC 850
		day, mon, year, clock = r[2:4], r[5:8], r[9:11], r[12:20]
	case shape(v, "xxx xxx _0 00:00:00 0000"): // asctime
		day, mon, year, clock = trim(v[8:10]), v[4:7], v[20:24], v[11:19]
	default:
		return 0, false
	}
	const months = "JanFebMarAprMayJunJulAugSepOctNovDec"
	m := int64(0)
	for m < 12 && months[3*m:3*m+3] != mon {
		m++
	}
	d, y, h, mi, s := digits(day), digits(year), digits(clock[0:2]), digits(clock[3:5]), digits(clock[6:8])
	if m == 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return 0, false
	}
	at := func(y int64) int64 { return civilDays(y, m, d)*86400 + h*3600 + mi*60 + s }
	if len(year) == 2 {
		for y += 1900; y < 9900 && at(y+50) <= now; y += 100 {
		}
	}
	return at(y), true
}

// shape reports whether v is as long as form and has its shape: a '0'
// of form a digit, a '_' a digit or a space, an 'x' any byte (a name,
// read apart), any other byte itself.
func shape(v, form string) bool {
	if len(v) != len(form) {
		return false
	}
	for i := 0; i < len(form); i++ {
		c, b := form[i], v[i]
		digit := b >= '0' && b <= '9'
		if c == '0' && !digit || c == '_' && !digit && b != ' ' || c != '0' && c != '_' && c != 'x' && c != b {
			return false
		}
	}
	return true
}

// civilDays is the number of days since 1970-01-01 of the date y-(m+1)-d
// (Howard Hinnant's days_from_civil, the year starting in March).
func civilDays(y, m, d int64) int64 {
	if m < 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	doy := (153*((m+10)%12)+2)/5 + d - 1
	return era*146097 + yoe*365 + yoe/4 - yoe/100 + doy - 719468
}

// retryDelay finds the retryDelay of a google.rpc.RetryInfo among a
// Google error's details ({"error":{"details":[{"retryDelay":"30s"}]}},
// also as the first of a list), else "".
func retryDelay(body []byte) (v string) {
	omni.WalkJSON(body, func(path []byte, kind byte, val []byte) error {
		if len(path) > 2 && path[0] == '[' {
			path = path[3:]
		}
		if kind == '"' && string(path) == "error.details[].retryDelay" {
			v = clip(omni.JSONString(val), nameMax)
		}
		return nil
	})
	return v
}

// protoDuration reads a google.protobuf.Duration's JSON form: seconds,
// with up to nine decimals, and "s" ("30s", "1.5s"); at most a year.
func protoDuration(v string) (time.Duration, bool) {
	n := len(v) - 1
	if n < 1 || v[n] != 's' {
		return 0, false
	}
	sec, frac := v[:n], "0"
	for i := 0; i < n; i++ {
		if v[i] == '.' {
			sec, frac = v[:i], v[i+1:n]
			break
		}
	}
	s, ns := digits(sec), digits(frac)
	if s < 0 || ns < 0 || len(frac) > 9 {
		return 0, false
	}
	for i := len(frac); i < 9; i++ {
		ns *= 10
	}
	return min(time.Duration(min(s, int64(maxParsedWait/time.Second)))*time.Second+time.Duration(ns), maxParsedWait), true
}

// digits reads s, one or more decimal digits only, else -1; past
// 10^10 it stays there (no overflow, more than a year of seconds).
// (strconv's parsers would bring their errors' quoting into floe.wasm,
// 10 kB.)
func digits(s string) int64 {
	n := int64(-1)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = min(max(n, 0)*10+int64(s[i]-'0'), 1e10)
	}
	return n
}

// trim drops the spaces and tabs around a header value.
func trim(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// seconds writes d as whole seconds, rounded up: "90 s".
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10) + " s"
}

// readBody reads the start of an answer that is not an event stream: up
// to 64 KiB, enough for any error's message.
func readBody(resp *Response) []byte {
	var body []byte
	buf := make([]byte, 4096)
	for len(body) < 64<<10 {
		n, err := resp.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	return body
}

// ErrorDetail extracts a readable message from an error body: the type
// and message of a JSON error, else the title of an HTML page, else the
// body's first line, at most 300 bytes.
func ErrorDetail(body []byte) string {
	if typ, code, msg := ErrorFields(body); msg != "" || typ != "" || code != "" {
		if typ == "" {
			typ = code
		}
		if typ != "" && msg != "" {
			return typ + ": " + msg
		}
		return typ + msg
	}
	s := string(body)
	if i := index(s, "<title>"); i >= 0 {
		s = s[i+7:]
		if j := index(s, "</"); j >= 0 {
			s = s[:j]
		}
	}
	start, end := 0, 0
	for end < len(s) && s[end] != '\n' && s[end] != '\r' {
		end++
	}
	for start < end && s[start] <= ' ' {
		start++
	}
	for end > start && s[end-1] <= ' ' {
		end--
	}
	return clip(s[start:end], 300)
}

// index finds sub in s, ASCII letters compared case-insensitively.
func index(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j]|0x20 {
			j++
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}

// msgMax bounds a provider's own message in an error: a human reads 2 KiB
// whole; a broken or hostile server's megabytes would fill the Trace, the
// run's stream and every client's screen.
const msgMax = 2 << 10

// nameMax bounds an error's type and code, a name each.
const nameMax = 200

// clip cuts s at n bytes, back to the start of a UTF-8 character, and
// marks the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ErrorFields reads the type, code and message of a JSON error in the
// shapes the providers use: {"error":{"type","code","message"}},
// {"type":"error","error":{…}}, {"code","message"}, {"error":"text"}, and
// any of them as the first of a list (Gemini's [{"error":{…}}]). A
// validation error's first detail ({"detail":[{"loc","msg"}]}, also as
// Mistral's message object) is its message, "body.tools: msg" (the
// location cut at 200 bytes); an upstream's own error that a gateway
// passes on in error.metadata.raw (OpenRouter's "Provider returned
// error") follows the message, with metadata.provider_name. The message
// is cut at 2 KiB (msgMax), the type and the code at 200 bytes (nameMax).
func ErrorFields(body []byte) (typ, code, msg string) {
	const locMax = 200 // a validation error's location: a few names, the rest cut
	var loc, detail, raw, from string
	details := 0
	err := omni.WalkJSON(body, func(path []byte, kind byte, val []byte) error {
		if len(path) > 2 && path[0] == '[' {
			path = path[3:]
		}
		switch string(path) {
		case "error.type", "type", "error.status": // Google's status: INVALID_ARGUMENT…
			if t := omni.JSONString(val); t != "error" && (typ == "" || len(path) > 4) {
				typ = t
			}
		case "error.code", "code":
			if kind == '0' {
				code = string(val)
			} else if kind == '"' {
				code = omni.JSONString(val)
			}
		case "error.message", "message", "error":
			if kind == '"' && (msg == "" || len(path) > 5) {
				msg = omni.JSONString(val)
			}
		case "detail[].loc[]", "message.detail[].loc[]":
			if details == 0 && len(loc) <= locMax { // past it, cut: one piece more at most
				if loc != "" {
					loc += "."
				}
				loc += omni.JSONString(val) // a string, or a number's digits as they are
				if kind != '"' {
					loc += string(val)
				}
			}
		case "detail[].msg", "message.detail[].msg":
			if details == 0 {
				detail = omni.JSONString(val)
			}
		case "detail[]", "message.detail[]":
			details++
		case "error.metadata.raw":
			raw = omni.JSONString(val)
		case "error.metadata.provider_name":
			from = omni.JSONString(val)
		}
		return nil
	})
	if err != nil {
		return "", "", ""
	}
	typ, code, msg = clip(typ, nameMax), clip(code, nameMax), clip(msg, msgMax)
	if msg == "" && detail != "" {
		msg = clip(detail, msgMax)
		if loc != "" {
			msg = clip(loc, locMax) + ": " + msg
		}
	}
	if raw != "" {
		if from != "" {
			msg += " (" + from + ")"
		}
		msg += ": " + clip(raw, 600)
	}
	return typ, code, msg
}

// Transient reports whether a provider error type or code names a
// condition that passes (overload, rate limit, server error, a gateway's
// timeout: Anthropic's timeout_error, its 504).
func Transient(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "rate_limit_exceeded", "server_error", "api_error",
		"internal_server_error", "service_unavailable", "timeout", "timeout_error", "overloaded", "too_many_requests",
		"408", "429": // an HTTP status as the error's code (OpenRouter's errors in a 200 stream)
		return true
	}
	return len(typ) == 3 && typ[0] == '5' && typ[1] >= '0' && typ[1] <= '9' && typ[2] >= '0' && typ[2] <= '9'
}

// ErrorEvent maps an error reported inside a 200 stream by its type and
// its code, either of which may say it (OpenAI's rate limit is type
// "tokens", code "rate_limit_exceeded"): transient ones are timeout,
// authentication ones auth, the rest failed (permanent for a spent
// quota or credit: OpenAI's insufficient_quota, Anthropic's
// billing_error, its 402). The message msg is cut at 2 KiB (msgMax), typ and code at 200
// bytes (nameMax).
func ErrorEvent(api, typ, code, msg string) *Failure {
	f := &Failure{Status: omni.StatusFailed}
	typ, code = clip(typ, nameMax), clip(code, nameMax)
	switch {
	case Transient(typ) || Transient(code):
		f.Status = omni.StatusTimeout
	case authError(typ) || authError(code):
		f.Status = omni.StatusAuth
	case typ == "insufficient_quota" || code == "insufficient_quota" || typ == "billing_error":
		f.Permanent = true // a quota or credit spent: a retry cannot help
	}
	m := api + ": error event"
	switch {
	case typ != "" && code != "" && code != typ:
		m += ": " + typ + " (" + code + ")"
	case typ != "":
		m += ": " + typ
	case code != "":
		m += ": " + code
	}
	if msg != "" {
		m += ": " + clip(msg, msgMax)
	}
	f.Message = m
	return f
}

func authError(typ string) bool {
	switch typ {
	case "authentication_error", "permission_error", "invalid_api_key", "401", "403":
		return true
	}
	return false
}

// transportFailure maps an error of RoundTrip or Body.Read: aborted when
// ctx is done, a *Failure's own stop reason, otherwise timeout (the
// network failed).
func transportFailure(ctx context.Context, api, what string, err error) *Failure {
	if ctx.Err() != nil {
		return &Failure{Status: omni.StatusAborted, Message: api + ": aborted"}
	}
	st, permanent := omni.StatusTimeout, false
	if f, ok := err.(*Failure); ok { // the Transport's own stop reason: a request it cannot send
		st, permanent = f.Status, f.Permanent
	}
	return &Failure{Status: st, Message: api + ": " + what + ": " + err.Error(), Permanent: permanent}
}

var _ io.Reader // the Response body is an io.ReadCloser
