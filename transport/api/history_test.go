package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport/server"
)

// chunkWriter records the size of each Write.
type chunkWriter struct {
	*httptest.ResponseRecorder
	writes []int
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.ResponseRecorder.Write(b)
}

// /messages of a big session is written out as it is encoded, in bounded
// pieces: it was encoded whole into one growing buffer first (a 14 MB
// Trace: 280 MB allocated per request, some 100 MB of memory each for
// clients resyncing at once). The body is the object it was, to the byte.
func TestMessagesOfABigSessionAreWrittenInPieces(t *testing.T) {
	const turns, id = 2000, "big-session"
	var b bytes.Buffer
	meta := server.NewMeta(id, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b.Write(meta.AppendJSON(nil))
	b.WriteByte('\n')
	for i := range turns {
		fmt.Fprintf(&b, `{"timestamp":"2026-01-01T00:00:01.000Z","type":"model_msg","payload":{"type":"text","role":"user","text":"prompt %d <&>%s","stop_reason":"completed"}}`+"\n", i, "\u2028")
		b.WriteString(`{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"request_begin"}}` + "\n")
		fmt.Fprintf(&b, `{"timestamp":"2026-01-01T00:00:01.000Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"answer %d","stop_reason":"completed"}}`+"\n", i)
		b.WriteString(`{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}` + "\n")
	}
	store := &trace.MemStore{}
	if err := store.Create(context.Background(), id, [][]byte{b.Bytes()}); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w := &chunkWriter{ResponseRecorder: httptest.NewRecorder()}
	srv.Handler.ServeHTTP(w, httptest.NewRequest("GET", "/api/sessions/"+id+"/messages", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	body := w.Body.Bytes()
	if len(body) < 4<<16 || len(w.writes) < 4 {
		t.Fatalf("%d bytes in %d writes: want at least four", len(body), len(w.writes))
	}
	for i, n := range w.writes {
		if n > 1<<16+1<<10 {
			t.Errorf("write %d of %d: %d bytes; want the history in pieces of about 64 KiB", i, len(w.writes), n)
		}
	}
	var got struct {
		SessionID   string            `json:"sessionId"`
		State       string            `json:"state"`
		Messages    []json.RawMessage `json:"messages"`
		Cursor      string            `json:"cursor"`
		Unpublished struct{ From, Count int }
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.SessionID != id || got.State != "idle" || len(got.Messages) != 1+4*turns || got.Unpublished.From != 1+4*turns || got.Cursor == "" {
		t.Fatalf("sessionId %q state %q %d messages cursor %q unpublished %+v", got.SessionID, got.State, len(got.Messages), got.Cursor, got.Unpublished)
	}
	// The bytes writeJSON gave: the messages as the Trace has them, HTML
	// characters and U+2028 unescaped, one newline at the end.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := `{"sessionId":"` + id + `","state":"idle","messages":[` + strings.Join(lines, ",") + `],"cursor":"` + got.Cursor + `","unpublished":{"from":8001,"count":0}}` + "\n"
	if string(body) != want {
		t.Errorf("body differs from the records: %s", firstDiff(string(body), want))
	}
}

func firstDiff(a, b string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: got %q want %q", i, a[max(0, i-40):min(len(a), i+40)], b[max(0, i-40):min(len(b), i+40)])
		}
	}
	return fmt.Sprintf("lengths %d %d", len(a), len(b))
}
