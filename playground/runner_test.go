package playground

import (
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// startRun starts a run.
func startRun(t *testing.T, r *Runner, prompt string, approve func(omni.Message, func(string)), deliver func(omni.Message), end func(error)) {
	t.Helper()
	err := r.Start(prompt, nil, AskApprover(approve), deliver, end)
	if err != nil {
		t.Fatal(err)
	}
}

func collect(t *testing.T, r *Runner, prompt string, decide func(omni.Message) string) []omni.Message {
	t.Helper()
	msgs := make(chan omni.Message, 1024)
	ended := make(chan error, 1)
	startRun(t, r, prompt, func(call omni.Message, answer func(string)) {
		go answer(decide(call))
	}, func(m omni.Message) { msgs <- m }, func(err error) { close(msgs); ended <- err })
	var out []omni.Message
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				if err := <-ended; err != nil {
					t.Fatal(err)
				}
				return out
			}
			out = append(out, m)
		case <-timeout:
			t.Fatalf("run did not end; got %d messages", len(out))
		}
	}
}

func TestRunnerWithEngine(t *testing.T) {
	sess, err := NewSession(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	msgs := collect(t, r, "count the lines of go.mod", func(c omni.Message) string {
		if c.Payload.Name == ToolListFiles {
			return omni.DecisionDeny
		}
		return omni.DecisionAllow
	})
	var tr Transcript
	for _, m := range msgs {
		tr.Apply(m)
	}
	var cards, requests int
	for _, it := range tr.Items {
		switch it.Kind {
		case KindTool:
			cards++
			c := it.Tool
			if c.Decision == "" || c.OutputStop == "" {
				t.Errorf("card %s unpaired: %+v", c.CallID, c)
			}
			if c.Name == ToolListFiles && (c.Decision != "deny" || c.OutputStop != "aborted") {
				t.Errorf("denied card = %+v", c)
			}
		case KindRequest:
			requests++
			if it.Request.Status != omni.StatusCompleted || it.Request.Usage == nil {
				t.Errorf("request %+v", it.Request)
			}
		}
	}
	if cards != 2 || requests != 2 {
		t.Errorf("%d cards, %d requests; want 2 and 2", cards, requests)
	}
	last := tr.Items[len(tr.Items)-1]
	if last.Kind != KindText || !strings.Contains(last.Body, "You denied `list_files`") || !strings.Contains(last.Body, "add up to 3 lines") {
		t.Errorf("final reply = %+v", last)
	}
	if r.Running() {
		t.Error("runner still running after the end")
	}
}

func TestRunnerStop(t *testing.T) {
	sess, err := NewSession(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	// The approver stops the run instead of answering: the engine stops
	// waiting (E-5.5) and the stream ends with abort.
	msgs := collect(t, r, "hello", func(omni.Message) string {
		r.Stop()
		return omni.DecisionAllow
	})
	last := msgs[len(msgs)-1].Payload
	if last.Type != omni.Abort || last.Reason() != "aborted by user" {
		t.Fatalf("last message = %+v, want abort", last)
	}
	if r.Stop() || r.Steer("late", nil) {
		t.Error("Stop/Steer succeeded with no run in flight")
	}
}

// Images typed with a steering message reach the model with its text, as
// one steering entry: the [user_steering] block, then one image_url
// message each (ENGINE.md E-11.4); a steering of images only too. The
// transcript draws them with the delivered steering message.
func TestRunnerSteersImages(t *testing.T) {
	sess, err := NewSession(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	const png, gif = "data:image/png;base64,iVBORw0KGgo=", "data:image/gif;base64,R0lGODlh"
	if r.Steer("  ", nil) {
		t.Error("Steer of a blank text and no image succeeded")
	}
	msgs := collect(t, r, "count the lines of go.mod", func(c omni.Message) string {
		if c.Payload.Name == ToolListFiles && (!r.Steer("look at this instead", []string{png}) || !r.Steer("", []string{png, gif})) {
			t.Error("Steer failed during the run")
		}
		return omni.DecisionAllow
	})
	var tr Transcript
	var user []string
	for _, m := range msgs {
		tr.Apply(m)
		if p := m.Payload; p.Role == omni.RoleUser && !m.IsPartial() && p.Type != omni.ToolCallOutput {
			user = append(user, p.Type+":"+p.Text+p.ImageURL())
		}
	}
	want := []string{
		"text:[user_steering]\nlook at this instead\n[/user_steering]", "image_url:" + png,
		"text:[user_steering]\n\n[/user_steering]", "image_url:" + png, "image_url:" + gif,
	}
	if strings.Join(user, "|") != strings.Join(want, "|") {
		t.Errorf("user messages streamed:\n%q\nwant\n%q", user, want)
	}
	var steered [][]string
	var reply string
	for _, it := range tr.Items {
		if _, ok := SteeringText(it.Body); it.Kind == KindUser && ok {
			steered = append(steered, it.Images)
		}
		if it.Kind == KindText {
			reply = it.Body
		}
	}
	if len(steered) != 2 || strings.Join(steered[0], " ") != png || strings.Join(steered[1], " ") != png+" "+gif {
		t.Errorf("steering items' images = %q", steered)
	}
	if !strings.Contains(reply, "You added: “look at this instead” with an image, 2 images.") {
		t.Errorf("the model's reply does not name the steering's images: %q", reply)
	}
}
