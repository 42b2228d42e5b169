package trace_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

const longID = "session-2026-01-01-00-00-00-longlonglo"

// longTrace is a Trace file of turns turns of five records each (a prompt,
// request_begin, an answer, token_usage, request_end), about 1.2 kB a turn.
func longTrace(turns int) []byte {
	pad := strings.Repeat("lorem ipsum ", 18)
	b := []byte(`{"timestamp":"2026-11-30T04:09:45.308Z","type":"session_meta","payload":{"session_id":"` + longID + `","provider":"test","model_id":"m","model_context_window":200000,"system_prompt":"sys","agent_state":"/a","workspace":"/w"}}` + "\n")
	for i := range turns {
		n := strconv.Itoa(i)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.314Z","type":"model_msg","payload":{"type":"text","role":"user","text":"prompt `+n+pad+`","stop_reason":"completed"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.315Z","type":"event_msg","payload":{"type":"request_begin"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"answer `+n+pad+`","stop_reason":"completed"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":0,"output":5,"total":`+n+`},"request":{"cache_read":0,"cache_write":0,"output":5,"total":300}}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}`+"\n"...)
	}
	return b
}

// Replay makes the history once: appended to a turn at a time, it grew a
// quarter at a time, five times its size allocated in all (50 MB at a
// resume of 20,000 turns, 9 MB kept).
func TestReplaySizesItsHistoryOnce(t *testing.T) {
	p, err := trace.ReadFile(longTrace(5000))
	if err != nil {
		t.Fatal(err)
	}
	h := trace.Replay(p.Records, fixedNow()).Snapshot.History
	if len(h) != 10000 || cap(h) != len(h) {
		t.Errorf("history of %d messages, cap %d; want 10000, made once", len(h), cap(h))
	}
}

// Resume allocates about 4.5 times the size of the file it reads (the
// file, its records and their strings, the history; 6.2 times when the
// history grew by appends), and what it returns holds the history, not the
// records: a host keeps the Resumed (its Snapshot) as long as the session,
// and it kept every record of the file, three times the file's size.
func TestResumeKeepsTheHistoryOnly(t *testing.T) {
	ctx := context.Background()
	data := longTrace(5000)
	store := &trace.MemStore{}
	if err := store.Create(ctx, longID, [][]byte{data}); err != nil {
		t.Fatal(err)
	}
	var before, after, kept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := trace.Resume(ctx, store, longID, fixedNow)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&kept)
	size := uint64(len(data))
	if n := after.TotalAlloc - before.TotalAlloc; 2*n > 11*size {
		t.Errorf("Resume of a %d-byte file allocated %d bytes; want under 5.5 times the file", size, n)
	}
	if n := int64(kept.HeapAlloc) - int64(before.HeapAlloc); 2*n > 3*int64(size) {
		t.Errorf("the Resumed of a %d-byte file holds %d bytes; want under 1.5 times the file", size, n)
	}
	if len(res.Snapshot.History) != 10000 || res.Parsed.Records != nil {
		t.Errorf("history of %d messages, %d records kept", len(res.Snapshot.History), len(res.Parsed.Records))
	}
	runtime.KeepAlive(res)
}
