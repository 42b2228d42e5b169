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

// SteerWithID / UnsteerID: ids name entries without slice identity; a
// withdrawn entry is never delivered, a delivered one cannot be withdrawn,
// ids are never reused across runs, invalid input is refused.
func TestSteerWithID(t *testing.T) {
	var s *engine.Session
	var fails []string
	check := func(ok bool, what string) {
		if !ok {
			fails = append(fails, what)
		}
	}
	var first []engine.SteerID // the ids of the first run
	request := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		request++
		switch request {
		case 1: // the first run's first request
			keep, err := s.SteerWithID([]omni.Message{omni.UserText("keep")})
			check(err == nil && keep != 0, "SteerWithID keep")
			drop, err := s.SteerWithID([]omni.Message{omni.UserText("drop")})
			check(err == nil && drop != 0 && drop != keep, "SteerWithID drop")
			blank, err := s.SteerWithID([]omni.Message{omni.UserText("   ")})
			check(err == nil && blank != 0 && blank != drop && blank != keep, "SteerWithID blank")
			if id, err := s.SteerWithID([]omni.Message{{Type: "bogus"}}); !errors.Is(err, engine.ErrInvalidInput) || id != 0 {
				check(false, "SteerWithID accepted an invalid message")
			}
			check(s.UnsteerID(drop), "UnsteerID of a pending entry")
			check(!s.UnsteerID(drop), "UnsteerID twice")
			check(!s.UnsteerID(blank), "UnsteerID of an entry without steering content")
			check(!s.UnsteerID(0), "UnsteerID(0)")
			first = []engine.SteerID{keep, drop, blank}
		case 2: // keep was delivered before this request
			check(!s.UnsteerID(first[0]), "UnsteerID of a delivered entry")
		case 3: // the second run
			id, _ := s.SteerWithID([]omni.Message{omni.UserText("again")})
			for _, old := range first {
				check(id != old, "an id reused in a later run")
				check(!s.UnsteerID(old), "UnsteerID of an id of an earlier run")
			}
			check(s.UnsteerID(id), "UnsteerID in the second run")
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("sid"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.SteerWithID([]omni.Message{omni.UserText("x")}); id != 0 || err != nil {
		t.Fatalf("SteerWithID outside a run = %d, %v; want 0, nil", id, err)
	}
	steered := func(msgs []omni.Message) (out []string) {
		for _, m := range msgs {
			if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleUser {
				out = append(out, m.Payload.Text)
			}
		}
		return out
	}
	if got := steered(collect(t, s, engine.RunOptions{}, omni.UserText("go"))); len(got) != 1 || got[0] != engine.SteeringBlock("keep") {
		t.Fatalf("steering delivered in the first run: %q", got)
	}
	if got := steered(collect(t, s, engine.RunOptions{}, omni.UserText("go"))); len(got) != 0 {
		t.Fatalf("steering delivered in the second run: %q", got)
	}
	if request != 3 || len(fails) > 0 {
		t.Fatalf("%d requests (want 3); failed: %q", request, fails)
	}
}

// Steer copies its input, as Start does: a caller that reuses its slice
// for the next Steer (a buffer of lines read) changes neither the entry
// queued before nor what was validated. It kept the slice: both entries
// were delivered as the second, and the first's validated message could
// be changed into anything before delivery.
func TestSteerCopiesItsInput(t *testing.T) {
	var s *engine.Session
	request := 0
	var unsteered bool
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		request++
		if request == 1 {
			buf := []omni.Message{omni.UserText("first")}
			s.Steer(buf)
			buf[0] = omni.UserText("second")
			s.Steer(buf)
			withdrawn := []omni.Message{omni.UserText("withdrawn")}
			s.Steer(withdrawn)
			unsteered = s.Unsteer(withdrawn) // identity still names the entry
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("sid"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range collect(t, s, engine.RunOptions{}, omni.UserText("go")) {
		if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleUser {
			got = append(got, m.Payload.Text)
		}
	}
	if want := []string{engine.SteeringBlock("first"), engine.SteeringBlock("second")}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] || !unsteered {
		t.Fatalf("steering delivered %q, want %q; Unsteer by identity: %v", got, want, unsteered)
	}
}

// Start copies its input too (README: Runs): a caller that reuses its
// slice once Start has returned leaves the run's prompt as it was, in the
// model's request and in the Trace.
func TestStartCopiesItsInput(t *testing.T) {
	var sent []string
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		for _, m := range p.NewMessages {
			sent = append(sent, m.Payload.Text)
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	sink := &enginetest.Sink{}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("sid"), LLM: llm, Trace: sink, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	buf := []omni.Message{omni.UserText("first")}
	run, err := s.Start(context.Background(), buf, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	buf[0] = omni.UserText("reused")
	for range run.All() {
	}
	var traced []string
	for _, f := range sink.Files() {
		for _, m := range f {
			if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleUser {
				traced = append(traced, m.Payload.Text)
			}
		}
	}
	if strings.Join(sent, ",") != "first" || strings.Join(traced, ",") != "first" {
		t.Fatalf("the model got %q and the Trace holds %q, want the prompt given to Start, \"first\"", sent, traced)
	}
}

// rotateHook is a Trace sink that calls onRotate as the Trace rotates.
type rotateHook struct {
	enginetest.Sink
	onRotate func()
}

func (h *rotateHook) Rotate() error {
	h.onRotate()
	return h.Sink.Rotate()
}

// A summarize compaction at a task boundary continues the run when
// steering is queued (E-13.9). The steering that decided it is taken as it
// decides: withdrawn after that (here as the summary rotates the Trace,
// between the decision and the delivery) it is already being delivered,
// UnsteerID says false, and the new context gets the summary and it. The
// withdrawal used to succeed there, and the run went on to a request of
// the summary alone that nobody asked for.
func TestUnsteerAsCompactionDecides(t *testing.T) {
	var s *engine.Session
	var id engine.SteerID
	withdrawn := "not asked"
	old := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		if n := len(p.NewMessages); n > 0 && p.NewMessages[n-1].Payload.Text == "Summarize." {
			id, _ = s.SteerWithID([]omni.Message{omni.UserText("also check the tests")})
			emit(omni.AssistantText("[summary]we talked[/summary]", omni.StatusCompleted))
		} else {
			emit(omni.AssistantText("done", omni.StatusCompleted))
		}
		emit(enginetest.Usage(5))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	fresh := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "ok")})
	sink := &rotateHook{onRotate: func() {
		if s.UnsteerID(id) {
			withdrawn = "withdrawn"
		} else {
			withdrawn = "already being delivered"
		}
	}}
	var err error
	s, err = engine.New(engine.Config{
		Meta: enginetest.Meta("uc"), LLM: old, Trace: sink, Clock: enginetest.NewClock(t0),
		Compaction: &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "Summarize.", MaxSessionTurns: 1},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return fresh },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if withdrawn != "already being delivered" {
		t.Fatalf("UnsteerID as the summary rotated the Trace: %s", withdrawn)
	}
	calls := fresh.Calls()
	if len(calls) == 0 || len(calls[0]) != 2 || calls[0][1].Payload.Text != engine.SteeringBlock("also check the tests") {
		t.Fatalf("the new context's first request: %v; stream %s", calls, kinds(got))
	}
}
