//go:build !js

package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/readmetest"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
)

// readmeOpen is the README's new-or-resumed session (Persistence and
// resume, "Natively…"), word for word between the markers.
func readmeOpen(ctx context.Context, store *trace.FileStore, id string, resuming bool, opts openai.Options, cfg engine.Config) (*engine.Session, error) {
	// README open begin
	cfg.Trace = trace.NewWriter(store, id, 1) // new: cfg.Meta is omni.Meta{SessionID: id, …}.Message()
	if resuming {
		r, err := trace.Resume(ctx, store, id, time.Now) // trace.ErrNotFound names the directory
		if err != nil {
			return nil, err
		}
		cfg.Meta, cfg.Trace, cfg.Resume = r.Meta, r.Writer, &r.Snapshot // the Trace's session_meta wins
		opts.SessionTokens = r.Snapshot.SessionTokens                   // token_usage counts on from the session's
	}
	llm, err := openai.New(opts)
	if err != nil {
		return nil, err
	}
	cfg.LLM, cfg.NewLLM = llm, llm.Factory()
	return engine.New(cfg)
	// README open end
}

func TestREADMEOpen(t *testing.T) {
	readmetest.Check(t, "../../README.md", "readme_resume_test.go", "open")
}

// The README's lines start a session in files, and then, in what stands
// for the program started again, resume it: the model is handed the
// session's history, the Trace's session_meta is kept (not the one the
// program would start a new session with), the session's token totals
// count on, and the same file goes on. An id the store does not hold is
// trace.ErrNotFound.
func TestREADMEOpenResumes(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Answer %d."},"finish_reason":null}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":3,"total_tokens":%d}}`+"\n\n"+
			"data: [DONE]\n\n", n, 10*n, 10*n+3)
	}))
	defer server.Close()
	opts := openai.Options{Transport: nethttp.New(nil), Model: "m", BaseURL: server.URL + "/v1"}
	store := trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{})
	ctx := context.Background()
	id := trace.NewID(time.Now())
	meta := func(prompt string) omni.Message {
		return omni.Meta{SessionID: id, Provider: "openai", ModelID: "m", ContextWindow: 8192, SystemPrompt: prompt}.Message()
	}
	run := func(s *engine.Session, prompt string) (total int64) {
		t.Helper()
		stream, err := s.Run(ctx, []omni.Message{omni.UserText(prompt)}, engine.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for m := range stream {
			if m.IsEvent(omni.TokenUsage) {
				total = m.Payload.Session().Total
			}
		}
		return total
	}

	s, err := readmeOpen(ctx, store, id, false, opts, engine.Config{Meta: meta("First prompt.")})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(s, "Hello"); got != 13 {
		t.Errorf("session total after the first request: %d, want 13", got)
	}
	s.Close()

	s, err = readmeOpen(ctx, store, id, true, opts, engine.Config{Meta: meta("Another prompt.")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := s.Meta(); m.Payload.SystemPrompt() != "First prompt." {
		t.Errorf("resumed system prompt %q, want the Trace's", m.Payload.SystemPrompt())
	}
	if got := run(s, "Again"); got != 13+23 {
		t.Errorf("session total after the resumed request: %d, want %d (counted on)", got, 13+23)
	}
	if len(bodies) != 2 || !strings.Contains(bodies[1], `"Hello"`) || !strings.Contains(bodies[1], `"Answer 1."`) || !strings.Contains(bodies[1], `"First prompt."`) {
		t.Errorf("the resumed request does not hold the session's history: %s", bodies[len(bodies)-1])
	}
	files, err := store.Files(ctx, id)
	if err != nil || len(files) != 1 {
		t.Errorf("files %v, %v: want the one file continued", files, err)
	}

	if _, err := readmeOpen(ctx, store, "session-2026-01-01-00-00-00-00000000", true, opts, engine.Config{Meta: meta("")}); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("an id the store does not hold: %v, want trace.ErrNotFound", err)
	}
}
