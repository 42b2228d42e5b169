package responses

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
		tr.Replies = append(tr.Replies, ptest.Reply{Chunks: events(completed)})
	}
	o.Transport, o.Model = tr, "gpt-test"
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, n := range ns {
		m.LoadHistory(context.Background(), ptest.Screenshots(n, 400))
		run(t, m, engine.GenerateParams{})
		out = append(out, string(tr.Requests[i].Body))
	}
	return out
}

// Past MaxImageBytes the oldest screenshots go as a text saying so, in
// their function_call_output, until those kept take half of it; the next
// request, one more image within the limit, starts as the one before did
// (the prefix OpenAI caches), and the one that passes the limit again
// leaves out more.
func TestImageLimit(t *testing.T) {
	b := requests(t, Options{MaxImageBytes: 1000}, 2, 3, 4, 5)
	for i, want := range [][]int{{1, 2}, {0, 0, 3}, {0, 0, 3, 4}, {0, 0, 0, 0, 5}} {
		if got := ptest.Shots([]byte(b[i])); !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: images %v, want %v", i, got, want)
		}
	}
	if want := `{"type":"function_call_output","call_id":"call_1","output":"shot 1\n[image omitted: 1 KB, older than those sent, left out to keep the request within the API's limits]"}`; !strings.Contains(b[1], want) {
		t.Errorf("request 1: no %s in\n%s", want, b[1])
	}
	if want := `{"type":"function_call_output","call_id":"call_3","output":"shot 3"},{"role":"user","content":[{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0KGgod-`; !strings.Contains(b[1], want) {
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
// too; below 0 is no limit; 0 the defaults.
func TestImageTooLarge(t *testing.T) {
	b := requests(t, Options{MaxImageBytes: 399}, 2)
	if got := ptest.Shots([]byte(b[0])); !reflect.DeepEqual(got, []int{0, 0}) {
		t.Errorf("images %v", got)
	}
	if want := `"output":"shot 2\n[image omitted: 1 KB, more than a request's images may take]"`; !strings.Contains(b[0], want) {
		t.Errorf("no %s in\n%s", want, b[0])
	}
	b = requests(t, Options{MaxImageBytes: -1, MaxImages: -1}, 600)
	if got := ptest.Shots([]byte(b[0])); len(got) != 600 || got[0] != 1 {
		t.Errorf("no limit: %d images, the first %v", len(got), got[:1])
	}
	m, _ := New(Options{Transport: &ptest.Transport{}, Model: "gpt-test"})
	if got, want := m.c.Images, (provider.ImageLimit{Bytes: 40_000_000, Count: 500}); got != want {
		t.Errorf("defaults %v, want %v", got, want)
	}
	if got := m.Factory()(m.c.Session).(*Model).c.Images; got != m.c.Images {
		t.Errorf("a fresh context's limit %v", got)
	}
}

// An image of a media type OpenAI does not take (it takes PNG, JPEG, WebP
// and GIF) goes as an input_text part saying so, a tool output's and a
// user's: sent, the API refused the request, and every later one of the
// session, whose history holds it. One it takes, or a web URL, goes.
func TestImageTypes(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg", `{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"}`},
		{"https://example.com/a.bmp", `{"type":"input_image","detail":"auto","image_url":"https://example.com/a.bmp"}`},
		{"data:image/bmp;base64,Qk02AAAAAAAAADYAAAAoAAAA", `{"type":"input_text","text":"[image not sent: media type \"image/bmp\" (bytes of no PNG, JPEG, GIF or WebP image): the API takes image/jpeg, image/png, image/gif and image/webp]"}`},
		{"data:image/png;base64,SUkqAAgAAAAAAAAA", `{"type":"input_text","text":"[image not sent: media type \"image/png\" (bytes of no PNG`}, // a TIFF
		{"file:///a.png", `{"type":"input_text","text":"[image not sent: \"file:///a.png\" is no http or https URL`},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(completed)}}}
		m, err := New(Options{Transport: tr, Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		out := omni.ToolOutput("call_1", "shot", omni.StatusCompleted)
		out.Payload.Rest = &omni.Rest{Images: []string{c.url}}
		img := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: c.url}}}
		m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("call_1", "shot", "{}"), out})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{img}})
		if got := string(tr.Requests[0].Body); strings.Count(got, c.want) != 2 {
			t.Errorf("%.40s: want twice %s in\n%s", c.url, c.want, got)
		}
	}
}

// NoImages, for a model without vision (one behind LM Studio's Responses
// API): no image goes, a tool output's are a line each of its output, a
// user's an input_text part. Without it, the images go.
func TestNoImages(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"
	request := func(o Options) string {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(completed)}}}
		o.Transport, o.Model = tr, "qwen3-8b"
		m, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		out := omni.ToolOutput("call_1", "shot", omni.StatusCompleted)
		out.Payload.Rest = &omni.Rest{Images: []string{png, png}}
		img := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: png}}}
		m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("call_1", "shot", "{}"), out})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{img}})
		return js(tr.Body(t, 0)["input"])
	}
	got := request(Options{NoImages: true})
	want := `[{"content":[{"text":"look","type":"input_text"}],"role":"user"},` +
		`{"arguments":"{}","call_id":"call_1","name":"shot","type":"function_call"},` +
		`{"call_id":"call_1","output":"shot\n[image not sent: the model takes no images]\n[image not sent: the model takes no images]","type":"function_call_output"},` +
		`{"content":[{"text":"[image not sent: the model takes no images]","type":"input_text"}],"role":"user"}]`
	if got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
	if got := request(Options{}); strings.Count(got, `"image_url":"`+png+`"`) != 3 {
		t.Errorf("without NoImages, not the three images in %s", got)
	}
}

// Every input_image part names its detail, "auto" (OpenAI's default): vLLM's
// Responses API validates the part against OpenAI's type, where detail is
// required, and answered 400 ("detail: Field required") to one without
// it, a user's image or a tool output's, and so to every later request of
// the session, whose history holds the image.
func TestImageDetail(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(completed)}}}
	m, err := New(Options{Transport: tr, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	out := omni.ToolOutput("call_1", "shot", omni.StatusCompleted)
	out.Payload.Rest = &omni.Rest{Images: []string{png}}
	img := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: "https://example.com/a.png"}}}
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("call_1", "shot", "{}"), out})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{img}})
	want := `[{"content":[{"text":"look","type":"input_text"}],"role":"user"},` +
		`{"arguments":"{}","call_id":"call_1","name":"shot","type":"function_call"},` +
		`{"call_id":"call_1","output":"shot","type":"function_call_output"},` +
		`{"content":[{"detail":"auto","image_url":"` + png + `","type":"input_image"},{"detail":"auto","image_url":"https://example.com/a.png","type":"input_image"}],"role":"user"}]`
	if got := js(tr.Body(t, 0)["input"]); got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
}
