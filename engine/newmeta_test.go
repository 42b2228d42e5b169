//go:build !wasm

package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// A new session's session_meta is the first record of its Trace, which
// PROTOCOL.md §2 wants with a provider and a model_id: New refuses one
// without, naming the key (as createSession's trace.ParseMeta does in
// JavaScript); it traced it before.
func TestNewRefusesIncompleteMeta(t *testing.T) {
	for want, meta := range map[string]omni.Meta{
		"engine: Config.Meta: omni: payload.provider: missing (PROTOCOL.md §2 requires it of a new session)": {SessionID: "x"},
		"engine: Config.Meta: omni: payload.model_id: missing (PROTOCOL.md §2 requires it of a new session)": {SessionID: "x", Provider: "p"},
	} {
		_, err := engine.New(engine.Config{Meta: meta.Message(), LLM: enginetest.NewLLM()})
		var ve *omni.ValidationError
		if err == nil || err.Error() != want || !errors.As(err, &ve) {
			t.Errorf("New(%+v) = %v, want %s (an *omni.ValidationError)", meta, err, want)
		}
	}
	// The fields that may be empty (an empty system prompt) still pass.
	if _, err := engine.New(engine.Config{Meta: omni.Meta{SessionID: "x", Provider: "p", ModelID: "m"}.Message(), LLM: enginetest.NewLLM()}); err != nil {
		t.Errorf("New without system prompt, agent state, workspace: %v", err)
	}
}

// A Trace an earlier New wrote with such a session_meta resumes: a
// resumed session (Config.Resume set, as trace.Resume gives it) keeps the
// session_meta of its Trace as it is.
func TestResumedIncompleteMetaStillResumes(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	w := trace.NewWriter(store, "old", 1)
	for _, m := range []omni.Message{omni.Meta{SessionID: "old"}.Message(), omni.UserText("Hi")} {
		m.Timestamp = "2026-11-30T04:09:45.282Z"
		if err := w.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	r, err := trace.Resume(ctx, store, "old", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.New(engine.Config{Meta: r.Meta, Trace: r.Writer, Resume: &r.Snapshot, LLM: enginetest.NewLLM()}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	// The same message built rather than read back, with a Snapshot.
	if _, err := engine.New(engine.Config{Meta: omni.Meta{SessionID: "old"}.Message(), Resume: &engine.Snapshot{MetaWritten: true}, LLM: enginetest.NewLLM()}); err != nil {
		t.Fatalf("with a snapshot: %v", err)
	}
}
