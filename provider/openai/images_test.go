package openai

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
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

// image is a user's image_url message of u.
func image(u string) omni.Message {
	return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}}
}

// imageRequest sends a request of a model of o whose history is a tool
// output holding the image u, then a user's image u, and returns the
// request's messages.
func imageRequest(t *testing.T, o Options, u string) string {
	t.Helper()
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")}}}
	m := newModel(t, tr, o)
	out := omni.ToolOutput("call_1", "shot", omni.StatusCompleted)
	out.Payload.Rest = &omni.Rest{Images: []string{u, u}}
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("call_1", "shot", "{}"), out})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{image(u)}})
	return js(tr.Body(t, 0)["messages"])
}

// An image of a media type OpenAI does not take (PNG, JPEG, WebP and GIF
// are what it takes) goes as a text part saying so, the bytes deciding
// over the label: sent, the server refused the request, and every later
// one of the session, whose history holds it. A web URL goes as it is.
func TestImageTypes(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"
	for _, c := range []struct{ url, want string }{
		{png, `{"image_url":{"url":"` + png + `"},"type":"image_url"}`},
		{"data:image/webp;base64,UklGRiQAAABXRUJQVlA4", `"type":"image_url"`},
		{"data:image/png;base64,R0lGODlhAQABAIAAAP", `"type":"image_url"`}, // a GIF labelled PNG
		{"data:image/jpg;base64,AAAA", `"type":"image_url"`},               // too short to tell: the label
		{"https://example.com/a.bmp", `{"image_url":{"url":"https://example.com/a.bmp"},"type":"image_url"}`},
		{"data:image/bmp;base64,Qk02AAAAAAAAADYAAAAoAAAA", `{"text":"[image not sent: media type \"image/bmp\" (bytes of no PNG, JPEG, GIF or WebP image): the API takes image/jpeg, image/png, image/gif and image/webp]","type":"text"}`},
		{"data:image/png;base64,Qk02AAAAAAAAADYAAAAoAAAA", `[image not sent: media type \"image/png\" (bytes of no PNG`}, // a BMP labelled PNG
		{"data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv", `[image not sent: media type \"image/svg+xml\"`},
		{"data:image/tiff;base64,SUkqAAgAAAAAAAAA", `[image not sent: media type \"image/tiff\"`},
		{"data:image/png,%89PNG", `[image not sent: \"data:image/png,%89PNG\" is no http or https URL, nor a data:\u003cmedia type\u003e;base64,… URL, which the API takes]`},
	} {
		got := imageRequest(t, Options{}, c.url)
		if n := strings.Count(got, c.want); n != 3 {
			t.Errorf("%.40s: %d times %s (want 3: a tool output's two, the user's) in\n%s", c.url, n, c.want, got)
		}
	}
}

// NoImages, for a model without vision (DeepSeek's API answers 400 to any
// image part): no image goes, a tool output's are a line each of its tool
// message, a user's a text part.
func TestNoImages(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"
	got := imageRequest(t, Options{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat", NoImages: true}, png)
	want := `[{"content":[{"text":"look","type":"text"}],"role":"user"},` +
		`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"shot"},"id":"call_1","type":"function"}]},` +
		`{"content":"shot\n[image not sent: the model takes no images]\n[image not sent: the model takes no images]","role":"tool","tool_call_id":"call_1"},` +
		`{"content":[{"text":"[image not sent: the model takes no images]","type":"text"}],"role":"user"}]`
	if got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if got := imageRequest(t, Options{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat"}, png); !strings.Contains(got, png) {
		t.Errorf("without NoImages, no image in %s", got)
	}
}
