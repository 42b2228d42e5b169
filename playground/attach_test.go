package playground

import (
	"context"
	"encoding/json"
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

// A remote session's task carries its images as PromptInput gives them;
// a task or a steering whose body a Floe server would refuse (413, past
// 1 MiB) is not sent, and the error says why.
func TestRemoteBodies(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgo="
	in, err := RemoteTask("what is this?", []string{png})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []omni.Message
	for _, raw := range splitArray(t, in) {
		var m omni.Message
		if err := m.UnmarshalJSON(raw); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 2 || msgs[0].Payload.Text != "what is this?" || msgs[1].Payload.ImageURL() != png || msgs[1].Timestamp == "" {
		t.Errorf("RemoteTask input = %s", in)
	}
	if in, err := RemoteTask("  ", []string{png}); err != nil || !strings.HasPrefix(in, `[{`) || strings.Count(in, `"image_url"`) != 2 {
		t.Errorf("RemoteTask of an image only = %s, %v", in, err)
	}
	big := "data:image/png;base64," + strings.Repeat("A", MaxRemoteBody)
	const want = "not sent: with its 2 image(s) the request is 1.0 MiB, over the 1 MiB a Floe server takes; attach fewer or smaller images"
	if _, err := RemoteTask("look", []string{png, big}); err == nil || err.Error() != want {
		t.Errorf("RemoteTask past the bound: %v, want %q", err, want)
	}
	if err := CheckRemoteSteer("look", []string{png, big}); err == nil || err.Error() != want {
		t.Errorf("CheckRemoteSteer past the bound: %v, want %q", err, want)
	}
	if err := CheckRemoteSteer("look", []string{png, png}); err != nil {
		t.Errorf("CheckRemoteSteer: %v", err)
	}
	for _, s := range []string{"", "plain", `a "quoted" \ path`, "two\nlines\ttab", "\x01\x1f", "é ✓"} {
		b, _ := json.Marshal(s)
		if jsonLen(s) != len(b) {
			t.Errorf("jsonLen(%q) = %d, want %d", s, jsonLen(s), len(b))
		}
	}
	// At the bound exactly, the body goes.
	body := func(u string) int {
		b, _ := json.Marshal(map[string]any{"text": "", "images": []string{png, u}})
		return len(b)
	}
	edge := big[:len(big)-(body(big)-MaxRemoteBody)]
	if body(edge) != MaxRemoteBody {
		t.Fatalf("edge body %d", body(edge))
	}
	if err := CheckRemoteSteer("", []string{png, edge}); err != nil {
		t.Errorf("CheckRemoteSteer of a body of exactly 1 MiB: %v", err)
	}
	if err := CheckRemoteSteer("", []string{png, edge + "A"}); err == nil {
		t.Error("CheckRemoteSteer of a body one byte past 1 MiB took it")
	}
}

func TestSteerChip(t *testing.T) {
	for _, c := range []struct {
		text   string
		images int
		want   string
	}{
		{"mention the tests", 0, "queued: mention the tests"},
		{"look at this", 1, "queued: look at this + 1 image(s)"},
		{"", 2, "queued: 2 image(s)"},
	} {
		if got := SteerChip(c.text, c.images); got != c.want {
			t.Errorf("SteerChip(%q, %d) = %q, want %q", c.text, c.images, got, c.want)
		}
	}
}

func splitArray(t *testing.T, s string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return out
}
