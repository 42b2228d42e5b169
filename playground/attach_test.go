package playground

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func TestCheckAttach(t *testing.T) {
	for _, c := range []struct {
		name, mime string
		size       int64
		have       int
		want       string // "" = taken
	}{
		{"a.png", "image/png", 10, 0, ""},
		{"b.webp", "image/webp", MaxAttachBytes, MaxAttachImages - 1, ""},
		{"c.svg", "image/svg+xml", 10, 0, "c.svg not attached: it is image/svg+xml; the composer takes PNG, JPEG, GIF and WebP images"},
		{"d", "", 10, 0, "d not attached: it is of an unknown type"},
		{"e.jpg", "image/jpeg", MaxAttachBytes + 1<<20, 0, "e.jpg not attached: it is 6.0 MB, over the 5 MB an image may have"},
		{"f.gif", "image/gif", 10, MaxAttachImages, "f.gif not attached: a prompt takes at most 8 images"},
	} {
		err := CheckAttach(c.name, c.mime, c.size, c.have)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("CheckAttach(%q, %q, %d, %d) = %v, want %q", c.name, c.mime, c.size, c.have, err, c.want)
		}
	}
}

// A prompt's images reach the model after its text, one image_url message
// each, as PROTOCOL.md gives them; a prompt of images only has no text.
func TestRunnerSendsImages(t *testing.T) {
	var mu sync.Mutex
	var got [][]omni.Message
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		mu.Lock()
		got = append(got, p.NewMessages)
		mu.Unlock()
		emit(omni.AssistantText("seen", omni.StatusCompleted))
		n := omni.TokenCounts{Output: 1, Total: 2}
		emit(omni.TokenUsageMsg(n, n))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	sess, _, err := Open(Options{LLM: llm, NewLLM: func(omni.TokenCounts) engine.LLM { return llm }})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	const png, gif = "data:image/png;base64,iVBORw0KGgo=", "data:image/gif;base64,R0lGODlh"
	run := func(text string, images ...string) {
		done := make(chan struct{})
		if err := r.Start(text, images, nil, func(omni.Message) {}, func(error) { close(done) }); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	run("what is this?", png, gif)
	run("", gif)
	describe := func(ms []omni.Message) (out []string) {
		for _, m := range ms {
			p := &m.Payload
			if p.Role != omni.RoleUser {
				continue
			}
			if m.Timestamp == "" {
				t.Errorf("%s not stamped", p.Type)
			}
			out = append(out, p.Type+":"+p.Text+p.ImageURL())
		}
		return out
	}
	want := [][]string{{"text:what is this?", "image_url:" + png, "image_url:" + gif}, {"image_url:" + gif}}
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for i := range want {
		if d := describe(got[i]); strings.Join(d, "|") != strings.Join(want[i], "|") {
			t.Errorf("request %d input %q, want %q", i+1, d, want[i])
		}
	}
}
