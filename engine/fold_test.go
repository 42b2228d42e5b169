package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

func image(url string) omni.Message {
	return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: url}}}
}

// steerOnce runs a session whose first request steers entry; it returns
// the stream and the input of the second request.
func steerOnce(t *testing.T, fold func(context.Context, []omni.Message) ([]omni.Message, error), entry []omni.Message, d *diags) ([]omni.Message, []omni.Message) {
	t.Helper()
	var s *engine.Session
	llm := enginetest.NewLLM(enginetest.Reply{Emit: []omni.Message{enginetest.Usage(1)}}, enginetest.Reply{Emit: enginetest.TextReply(2, "seen")})
	first := true
	steering := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		if first {
			first = false
			if ok, err := s.Steer(entry); !ok || err != nil {
				t.Errorf("Steer: %v %v", ok, err)
			}
		}
		return llm.StreamGenerate(ctx, p, emit)
	})
	cfg := engine.Config{Meta: enginetest.Meta("fold"), LLM: steering, Clock: enginetest.NewClock(t0), FoldInputImages: fold}
	if d != nil {
		cfg.OnDiagnostic = d.add
	}
	s, _ = engine.New(cfg)
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	calls := llm.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d requests", len(calls))
	}
	return got, calls[1]
}

// FoldInputImages folds a steering entry's images before the wrapping
// (E-11.6): the model gets the paths inside the [user_steering] block and no
// image_url; entries without images are not folded.
func TestFoldInputImagesSteering(t *testing.T) {
	folds := 0
	fold := func(ctx context.Context, in []omni.Message) ([]omni.Message, error) {
		folds++
		var out []omni.Message
		for _, m := range in {
			if m.IsModel(omni.ImageURL) {
				m = omni.UserText("[attached image: /scratch/" + strings.TrimPrefix(m.Payload.ImageURL(), "data:,") + "]")
			}
			out = append(out, m)
		}
		return out, nil
	}
	_, in := steerOnce(t, fold, []omni.Message{omni.UserText("look at this"), image("data:,a.png")}, nil)
	if folds != 1 || len(in) != 1 || in[0].Payload.Text != "[user_steering]\nlook at this\n\n[attached image: /scratch/a.png]\n[/user_steering]" {
		t.Fatalf("%d folds; second request %s", folds, show(in))
	}
	folds = 0
	steerOnce(t, fold, []omni.Message{omni.UserText("no picture")}, nil)
	if folds != 0 {
		t.Fatal("an entry without images was folded")
	}
	// Without the option the image is delivered after the block (a vision model).
	_, in = steerOnce(t, nil, []omni.Message{omni.UserText("look"), image("data:,a.png")}, nil)
	if len(in) != 2 || !in[1].IsModel(omni.ImageURL) {
		t.Fatalf("without fold: %s", show(in))
	}
}

// A fold that fails, panics or leaves an image drops the images: the block
// says so, a diagnostic names why, and no image reaches the model.
func TestFoldInputImagesFailure(t *testing.T) {
	for name, fold := range map[string]func(context.Context, []omni.Message) ([]omni.Message, error){
		"error":       func(context.Context, []omni.Message) ([]omni.Message, error) { return nil, errors.New("disk full") },
		"panic":       func(context.Context, []omni.Message) ([]omni.Message, error) { panic("disk full") },
		"keeps image": func(_ context.Context, in []omni.Message) ([]omni.Message, error) { return in, nil },
	} {
		t.Run(name, func(t *testing.T) {
			var d diags
			_, in := steerOnce(t, fold, []omni.Message{omni.UserText("look"), image("data:,a.png")}, &d)
			if len(in) != 1 || !strings.Contains(in[0].Payload.Text, "look\n\n[images not attached: ") || !strings.HasSuffix(in[0].Payload.Text, "]\n[/user_steering]") {
				t.Fatalf("second request %s", show(in))
			}
			if !strings.Contains(d.kinds(), "llm") {
				t.Fatalf("diagnostics %s", d.kinds())
			}
		})
	}
}
