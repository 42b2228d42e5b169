// Package request reads what a client sends the session API: a JSON
// object body into a struct, with errors in the client's terms (the key,
// the JSON type it wants, what it got; never a Go type), and the bearer
// token of an Authorization header. The native API (transport/api) and the
// Cloudflare front Worker share it; it needs only the standard library.
package request

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bearer returns the token of an "Authorization: Bearer <token>" value.
// The scheme is case-insensitive and may be followed by several spaces
// (RFC 7235 §2.1); the token is taken as it is.
func Bearer(v string) (string, bool) {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
}

// Authorized reports whether the Authorization header value v carries
// token as its bearer token (compared in constant time).
func Authorized(v, token string) bool {
	got, ok := Bearer(v)
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// NoRoute is the message of a 404 for a path the API does not serve. A
// path that ends with a slash says the route has none: a client that
// adds one to /api/sessions/{id} got "no route" and had to spot why.
// A path with a control character or invalid UTF-8 (sent escaped, %0A)
// is quoted: the message was two lines.
func NoRoute(path string) string {
	slash := len(path) > 1 && strings.HasSuffix(path, "/")
	if !utf8.ValidString(path) || strings.IndexFunc(path, func(r rune) bool { return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 }) >= 0 {
		path = strconv.Quote(path)
	}
	if slash {
		return "no route " + path + " (the API's paths end without a slash)"
	}
	if DotSegment(path) {
		return "no route " + path + " (the API's paths have no . or .. segment)"
	}
	return "no route " + path
}

// DotSegment reports whether the unescaped path has a "." or ".." segment,
// which no route of the API has. A proxy or a runtime that resolves them
// on the way (workerd does, to a Durable Object) would hand the rest of
// the path to another route than the one it was sent to.
func DotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// ContentType says what is wrong with a request body's Content-Type, or
// "": the body is JSON, so it is application/json or unsaid.
func ContentType(ct string) string {
	if ct == "" {
		return ""
	}
	// The media type is the part before any parameter; its type and
	// subtype are case-insensitive (RFC 9110 §8.3.1), so "Application/JSON;
	// charset=UTF-8" is JSON and "application/json-seq" is not.
	mt, _, _ := strings.Cut(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return "Content-Type: want application/json, got " + ct
	}
	return ""
}

// bom is the UTF-8 byte order mark, which Decode ignores.
var bom = []byte("\xef\xbb\xbf")

// Blank reports whether body says nothing: only whitespace, after a UTF-8
// byte order mark if any (as Decode ignores it), so that a route whose
// body may be left out takes it as left out.
func Blank(body []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimPrefix(body, bom))) == 0
}

// Decode decodes the JSON object body into *dst, a struct, key by key, in
// the body's order, and returns "" or what is wrong, in the client's
// terms: the key and the JSON type it wants. A key the struct lacks, or
// given twice, is wrong; null is an absent key.
func Decode(body []byte, dst any) string {
	// A UTF-8 byte order mark, which some editors and shells write at the
	// start of a file sent with curl --data-binary @file, is ignored (RFC
	// 8259 §8.1 lets a parser do so): it was "invalid character 'ï'". A
	// UTF-16 one says what the body is.
	body = bytes.TrimPrefix(body, bom)
	if bytes.HasPrefix(body, []byte("\xff\xfe")) || bytes.HasPrefix(body, []byte("\xfe\xff")) {
		return "request body: UTF-16 text (it starts with a UTF-16 byte order mark); send it as UTF-8"
	}
	if len(trimJSON(body)) == 0 {
		return "request body: want a JSON object, got nothing"
	}
	return decodeObject(body, reflect.ValueOf(dst).Elem())
}

// KindOf names the JSON type of raw for a message: "number", "string"…
func KindOf(raw []byte) string { return kindOf(raw) }

func decodeObject(body []byte, v reflect.Value) string {
	if trimmed := trimJSON(body); trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return bodySyntax(body, nil)
		}
		return "request body: want a JSON object, got " + kindOf(trimmed)
	}
	fields := fieldsOf(v.Type())
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // {
		return bodySyntax(body, err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bodySyntax(body, err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bodySyntax(body, err)
		}
		i, ok := fields[key]
		if !ok {
			return "request body: unknown field " + strconv.Quote(key) + " (" + takes(v.Type()) + ")"
		}
		if seen[key] {
			return key + ": given twice"
		}
		seen[key] = true
		if isNull(raw) {
			continue // absent
		}
		if msg := assign(key, raw, v.Field(i)); msg != "" {
			return msg
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return bodySyntax(body, err)
	}
	if len(trimJSON(body[dec.InputOffset():])) > 0 {
		return "request body: data after the JSON object"
	}
	return ""
}

// fieldsOf maps the json keys of struct type t to field indexes.
func fieldsOf(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		if name := keyOf(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

func keyOf(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// takes lists the keys a body may have.
func takes(t reflect.Type) string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if name := keyOf(t.Field(i)); name != "" {
			keys = append(keys, name)
		}
	}
	switch len(keys) {
	case 0:
		return "this request takes no fields"
	case 1:
		return "want " + keys[0]
	}
	return "want " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// assign decodes raw (not null) into v, or says what path wants.
func assign(path string, raw []byte, v reflect.Value) string {
	t := v.Type()
	if t == rawMessage {
		v.SetBytes(append([]byte(nil), raw...))
		return ""
	}
	got := kindOf(raw)
	wrong := path + ": want " + describe(t) + ", got " + got
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if msg := assign(path, raw, p.Elem()); msg != "" {
			return msg
		}
		v.Set(p)
		return ""
	case reflect.Slice:
		var elems []json.RawMessage
		if got != "array" || json.Unmarshal(raw, &elems) != nil {
			return wrong
		}
		s := reflect.MakeSlice(t, len(elems), len(elems))
		for i, e := range elems {
			if msg := assign(path+"["+strconv.Itoa(i)+"]", e, s.Index(i)); msg != "" {
				return msg
			}
		}
		v.Set(s)
		return ""
	}
	if jsonKind(t) != got || json.Unmarshal(raw, v.Addr().Interface()) != nil {
		return wrong
	}
	return ""
}

// jsonKind is the JSON type that decodes into a scalar of type t.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	}
	return "value"
}

// describe names what a value of type t must be, in JSON terms.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return describe(t.Elem())
	case reflect.Slice:
		switch jsonKind(t.Elem()) {
		case "string":
			return "an array of strings"
		case "boolean":
			return "an array of booleans"
		case "number":
			return "an array of numbers"
		}
		return "an array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return "a " + jsonKind(t)
}

// kindOf names the JSON type of the value raw starts with.
func kindOf(raw []byte) string {
	raw = trimJSON(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func isNull(raw []byte) bool { return string(trimJSON(raw)) == "null" }

// trimJSON trims JSON's whitespace (RFC 8259 §2: space, tab, line feed,
// carriage return) from both ends of b; bytes.TrimSpace trims more (a
// vertical tab, U+00A0), which let a body end in what no JSON parser takes.
func trimJSON(b []byte) []byte { return bytes.Trim(b, " \t\n\r") }

// bodySyntax describes the syntax error of body; the Decoder's tokens
// (err) say less than a whole-body parse.
func bodySyntax(body []byte, err error) string {
	if err2 := json.Unmarshal(body, new(any)); err2 != nil {
		err = err2
	}
	return "request body: " + syntaxMsg(err)
}

// syntaxMsg describes a JSON syntax error.
func syntaxMsg(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return "invalid JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + strings.TrimPrefix(se.Error(), "json: ")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "invalid JSON: it ends before the object is closed"
	case err == nil:
		return "invalid JSON"
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}
