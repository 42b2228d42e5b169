package openai

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/internal/ptest"
)

// requests sends one request of a model of o after each history of
// Screenshots(n, 400) for n in ns, and returns their bodies.
func requests(t *testing.T, o Options, ns ...int) []string {
	t.Helper()
	tr := &ptest.Transport{}
	for range ns {
		tr.Replies = append(tr.Replies, ptest.Reply{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")})
	}
	m := newModel(t, tr, o)
	var out []string
	for i, n := range ns {
		m.LoadHistory(context.Background(), ptest.Screenshots(n, 400))
		run(t, m, engine.GenerateParams{})
		out = append(out, string(tr.Requests[i].Body))
	}
	return out
}

// Past MaxImageBytes the oldest screenshots go as a text saying so, in
// their tool message, until those kept take half of it; the next
// request, one more image within the limit, starts as the one before
// did (the prefix a server caches), and the one that passes the limit
// again leaves out more.
func TestImageLimit(t *testing.T) {
	b := requests(t, Options{MaxImageBytes: 1000}, 2, 3, 4, 5)
	for i, want := range [][]int{{1, 2}, {0, 0, 3}, {0, 0, 3, 4}, {0, 0, 0, 0, 5}} {
		if got := ptest.Shots([]byte(b[i])); !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: images %v, want %v", i, got, want)
		}
	}
	if want := `{"role":"tool","tool_call_id":"call_1","content":"shot 1\n[image omitted: 1 KB, older than those sent, left out to keep the request within the API's limits]"}`; !strings.Contains(b[1], want) {
		t.Errorf("request 1: no %s in\n%s", want, b[1])
	}
	if want := `{"role":"tool","tool_call_id":"call_3","content":"shot 3"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgod-`; !strings.Contains(b[1], want) {
		t.Errorf("request 1: no %s in\n%s", want, b[1])
	}
	if prefix := b[1][:strings.LastIndex(b[1], `]}]`)]; !strings.HasPrefix(b[2], prefix) {
		t.Errorf("request 2 does not start as request 1:\n%s\n%s", b[1], b[2])
	}
}

// Past MaxImages, the oldest down to half of it.
func TestImageCount(t *testing.T) {
	b := requests(t, Options{MaxImages: 2, MaxImageBytes: -1}, 3, 4)
	for i, want := range [][]int{{0, 0, 3}, {0, 0, 3, 4}} {
		if got := ptest.Shots([]byte(b[i])); !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: images %v, want %v", i, got, want)
		}
	}
}

// An image larger than MaxImageBytes alone goes as a text, the newest
// too; below 0 is no limit; 0 the defaults, Gemini's under its 20 MB.
func TestImageTooLarge(t *testing.T) {
	b := requests(t, Options{MaxImageBytes: 399}, 2)
	if got := ptest.Shots([]byte(b[0])); !reflect.DeepEqual(got, []int{0, 0}) {
		t.Errorf("images %v", got)
	}
	if want := `"content":"shot 2\n[image omitted: 1 KB, more than a request's images may take]"`; !strings.Contains(b[0], want) {
		t.Errorf("no %s in\n%s", want, b[0])
	}
	b = requests(t, Options{MaxImageBytes: -1, MaxImages: -1}, 600)
	if got := ptest.Shots([]byte(b[0])); len(got) != 600 || got[0] != 1 {
		t.Errorf("no limit: %d images, the first %v", len(got), got[:1])
	}
	for url, want := range map[string]provider.ImageLimit{
		"": {Bytes: 40_000_000, Count: 500},
		"https://generativelanguage.googleapis.com/v1beta/openai/": {Bytes: 16_000_000, Count: 500},
	} {
		m := newModel(t, &ptest.Transport{}, Options{BaseURL: url})
		if got := m.c.Images; got != want {
			t.Errorf("%q: defaults %v, want %v", url, got, want)
		}
		if got := m.Factory()(m.c.Session).(*Model).c.Images; got != want {
			t.Errorf("%q: a fresh context's limit %v", url, got)
		}
	}
}
