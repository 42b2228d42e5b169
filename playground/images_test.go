package playground

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestShowImage(t *testing.T) {
	for _, c := range []struct {
		url             string
		src, link, want string // want: a part of Why
	}{
		{url: png, src: png},
		{url: "DATA:image/svg+xml,<svg/>", src: "DATA:image/svg+xml,<svg/>"},
		{url: "data:text/html,<script>", want: "not an image"},
		{url: "data:image/png;base64," + strings.Repeat("A", MaxImageBytes), want: "over the 8 MB"},
		{url: "https://example.com/a.png", link: "https://example.com/a.png", want: "remote image, not loaded"},
		{url: "http://127.0.0.1:9/a.png", link: "http://127.0.0.1:9/a.png", want: "Content-Security-Policy"},
		{url: "https:///nohost", want: "not a valid URL"},
		{url: "javascript:alert(1)", want: "not a data: or http(s) URL"},
		{url: "", want: "not a data: or http(s) URL"},
	} {
		got := ShowImage(c.url)
		if got.Src != c.src || got.Link != c.link || !strings.Contains(got.Why, c.want) || (c.src == "") == (got.Why == "") {
			t.Errorf("ShowImage(%.40q) = %.80v, want src %.40q link %q why ~ %q", c.url, got, c.src, c.link, c.want)
		}
	}
}

func imageMsg(url string) omni.Message {
	return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: url}}}
}

// A tool output's images reach its card, from a delta or the complete
// output; a user's images go with the prompt they came with.
func TestTranscriptImages(t *testing.T) {
	var tr Transcript
	tr.AddPrompt("look")
	delta := partial(omni.PartialToolCallOutput, "delta", "shot", "A")
	delta.Payload.Rest = &omni.Rest{Images: []string{png}}
	for _, m := range []omni.Message{omni.ToolCallMsg("A", "screenshot", "{}"), partial(omni.PartialToolCallOutput, "start", "", "A"), delta} {
		tr.Apply(m)
	}
	card := tr.Items[1].Tool
	if len(card.Images) != 1 || card.Images[0] != png {
		t.Fatalf("after the delta, the card's images = %q", card.Images)
	}
	out := omni.ToolOutput("A", "shot", "completed")
	out.Payload.Rest = &omni.Rest{Images: []string{png, "https://example.com/b.png"}}
	tr.Apply(out)
	if len(card.Images) != 2 {
		t.Fatalf("after the output, the card's images = %q", card.Images)
	}
	if it := tr.Apply(imageMsg(png)); it.Kind != KindUser || len(it.Images) != 1 {
		t.Errorf("an image after a tool card: %+v", it)
	}

	// A stored Trace: a prompt of text and two images is one prompt; an
	// image alone is a prompt of its own.
	var st Transcript
	for _, m := range []omni.Message{omni.UserText("what is this?"), imageMsg(png), imageMsg(png), omni.AssistantText("a dot", "completed"), imageMsg(png)} {
		st.ApplyRecord(m)
	}
	var got []string
	for _, it := range st.Items {
		got = append(got, string(it.Kind)+":"+it.Body+":"+strings.Repeat("i", len(it.Images)))
	}
	if want := "prompt:what is this?:ii text:a dot: prompt::i"; strings.Join(got, " ") != want {
		t.Errorf("stored items = %q, want %q", strings.Join(got, " "), want)
	}
}

// A stored Trace's steering entry is its [user_steering] block, then its
// images: they are drawn on the steering message, as live, not as a prompt
// of their own; a steering of images only (an empty block) is steering too,
// not a prompt showing the block's markers.
func TestStoredSteeringImages(t *testing.T) {
	steer := func(body string) omni.Message { return omni.UserText(engine.SteeringBlock(body)) }
	records := []omni.Message{
		omni.UserText("go"), omni.RequestBeginMsg(), omni.AssistantText("working", "completed"),
		steer("look at this"), imageMsg(png), imageMsg(png),
		steer(""), imageMsg(png),
		omni.RequestBeginMsg(), omni.AssistantText("seen", "completed"),
	}
	draw := func(tr *Transcript) string {
		var got []string
		for _, it := range tr.Items {
			if it.Kind != KindRequest {
				got = append(got, string(it.Kind)+":"+strings.ReplaceAll(it.Body, "\n", "|")+":"+strings.Repeat("i", len(it.Images)))
			}
		}
		return strings.Join(got, " ")
	}
	var live Transcript
	live.AddPrompt("go")
	for _, m := range records[1:] {
		live.Apply(m)
	}
	var stored Transcript
	for _, m := range records {
		stored.ApplyRecord(m)
	}
	if draw(&stored) != draw(&live) {
		t.Errorf("stored items %q, want them as live: %q", draw(&stored), draw(&live))
	}
}

func TestCountImages(t *testing.T) {
	out := omni.ToolOutput("call_1", "shot", omni.StatusCompleted)
	out.Payload.Edit().Images = []string{"data:image/png;base64,AAAA", "data:image/png;base64,BBBB"}
	image := func(u string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}}
	}
	child := image("data:image/png;base64,CCCC")
	child.Origin = []string{"session-child"}
	recs := []omni.Message{omni.UserText("look"), image("data:image/png;base64,DDDD"), out, child}
	if n := CountImages(recs); n != 3 {
		t.Errorf("CountImages = %d, want 3 (a prompt's and a tool output's two; not a subagent's)", n)
	}
}
