package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// Generic JSON values: map[string]any, []any, json.Number, string, bool and
// nil, as decoded with UseNumber. All comparisons of the runner work on these.

// decodeJSON decodes exactly one JSON value.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// normMessage drops the envelope's timestamp and an empty or null origin, so
// that "absent" is the only spelling of "no origin".
func normMessage(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	delete(m, "timestamp")
	if o, ok := m["origin"]; ok {
		if a, isArr := o.([]any); o == nil || (isArr && len(a) == 0) {
			delete(m, "origin")
		}
	}
	return m
}

// valueOf is the comparable form of a message the engine produced: its omni
// encoding decoded as generic JSON, without timestamp.
func valueOf(m omni.Message) any {
	b := m.AppendJSON(nil)
	v, err := decodeJSON(b)
	if err != nil {
		// The codec never writes invalid JSON; keep the evidence if it does.
		return map[string]any{"invalid_encoding": string(b)}
	}
	return normMessage(v)
}

// jsonEqual is deep equality with JSON semantics: key order is irrelevant,
// an absent key differs from a key holding null, numbers compare by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numEqual(x, y)
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

func numEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	return okx && oky && x.Cmp(y) == 0
}

// subset reports whether v contains m: objects recursively by subset, every
// other value (arrays included) by jsonEqual.
func subset(m, v any) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return jsonEqual(m, v)
	}
	vm, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, mv := range mm {
		vv, ok := vm[k]
		if !ok || !subset(mv, vv) {
			return false
		}
	}
	return true
}

// matches applies a FORMAT §3 matcher to a normalized message: subset on
// every key but origin; no origin key in the matcher means the message must
// have none, "*" accepts any, otherwise the arrays must be equal.
func matches(matcher map[string]any, msg any) bool {
	m, ok := msg.(map[string]any)
	if !ok {
		return false
	}
	for k, want := range matcher {
		if k == "origin" {
			continue
		}
		got, ok := m[k]
		if !ok || !subset(want, got) {
			return false
		}
	}
	want, has := matcher["origin"]
	got, gotHas := m["origin"]
	if !has {
		return !gotHas
	}
	if s, ok := want.(string); ok && s == "*" {
		return true
	}
	return gotHas && jsonEqual(want, got)
}

// countMatches counts the messages of stream that matcher accepts.
func countMatches(matcher map[string]any, stream []any) int {
	n := 0
	for _, v := range stream {
		if matches(matcher, v) {
			n++
		}
	}
	return n
}

// diffPath names the first place where want and got differ ("payload.status",
// "origin (missing)"); "" when they are equal.
func diffPath(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return orRoot(path)
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, wok := w[k]
			gv, gok := g[k]
			p := joinPath(path, k)
			switch {
			case !gok:
				return p + " (missing)"
			case !wok:
				return p + " (unexpected)"
			}
			if d := diffPath(wv, gv, p); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return orRoot(path)
		}
		for i := range min(len(w), len(g)) {
			if d := diffPath(w[i], g[i], path+"["+strconv.Itoa(i)+"]"); d != "" {
				return d
			}
		}
		if len(w) != len(g) {
			return orRoot(path) + " (length)"
		}
		return ""
	}
	if jsonEqual(want, got) {
		return ""
	}
	return orRoot(path)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(value)"
	}
	return path
}

// show renders a generic value as compact JSON with sorted keys.
func show(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "<unprintable: " + err.Error() + ">"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
