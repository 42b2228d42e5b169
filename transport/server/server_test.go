package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/trace"
)

// fullStore refuses every append but a session's first record, as a
// storage that is full does.
type fullStore struct{ trace.MemStore }

func (s *fullStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	if !bytes.Contains(data, []byte(`"session_meta"`)) {
		return trace.AppendResult{}, errors.New("database or disk is full")
	}
	return s.MemStore.Append(ctx, id, index, data)
}

// A Trace write that fails reaches Config.OnDiagnostic (the native server
// logs it, the Worker's object warns) and the run goes on; before, the
// servers dropped it and lost records without a word.
func TestDiagnosticsReachTheConfig(t *testing.T) {
	diags := make(chan engine.Diagnostic, 100)
	srv, err := New(Config{Store: &fullStore{}, Mode: "allow-all", OnDiagnostic: func(d engine.Diagnostic) { diags <- d }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(path, body string) int {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := post("/api/sessions", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if code := post("/api/sessions/s1/tasks", `{"input":"hi"}`); code != http.StatusAccepted {
		t.Fatalf("task: %d", code)
	}
	select {
	case d := <-diags:
		if d.Kind != engine.DiagTrace || !strings.Contains(d.Err.Error(), "database or disk is full") {
			t.Errorf("diagnostic %s: %v", d.Kind, d.Err)
		}
	case <-time.After(10 * time.Second): // a bound on a failure, not an ordering
		t.Fatal("no diagnostic")
	}
}
