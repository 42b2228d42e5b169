package trace_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"runtime"
	"slices"
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

// byteStore is a MemStore that is a trace.PartReader handing its files over
// a byte at a time, and whose ReadFile fails.
type byteStore struct {
	trace.MemStore
	parts int
}

func (s *byteStore) ReadFile(context.Context, string, int) ([]byte, error) {
	return nil, errors.New("ReadFile of a PartReader")
}

func (s *byteStore) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	data, err := s.MemStore.ReadFile(ctx, id, index)
	for i := range data {
		if err == nil {
			s.parts++
			err = part(data[i : i+1])
		}
	}
	return err
}

// Resume reads a PartReader's file a part at a time, through a Batcher
// (which writes what it holds first), and resumes as from the file whole;
// a Batcher over another store hands the file over whole.
func TestResumeReadsAPartAtATime(t *testing.T) {
	ctx := context.Background()
	data := longTrace(3)
	parts := &byteStore{}
	b := trace.NewBatcher(parts, trace.BatcherOptions{})
	if _, err := b.Append(ctx, longID, 1, data); err != nil {
		t.Fatal(err)
	}
	res, err := trace.Resume(ctx, b, longID, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if parts.parts != len(data) {
		t.Errorf("%d parts of a file of %d bytes, want one a byte", parts.parts, len(data))
	}
	whole := &trace.MemStore{}
	var got [][]byte
	wb := trace.NewBatcher(whole, trace.BatcherOptions{})
	if _, err := wb.Append(ctx, longID, 1, data); err != nil {
		t.Fatal(err)
	}
	if err := wb.ReadParts(ctx, longID, 1, func(p []byte) error {
		got = append(got, slices.Clone(p))
		return nil
	}); err != nil || len(got) != 1 || !bytes.Equal(got[0], data) {
		t.Errorf("a Batcher over a MemStore: %d parts, %v; want the file in one", len(got), err)
	}
	want, err := trace.Resume(ctx, whole, longID, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snapshot.History) != 6 || !reflect.DeepEqual(res.Snapshot, want.Snapshot) || !reflect.DeepEqual(res.Meta, want.Meta) {
		t.Errorf("resumed from parts: %d messages, %d turns; whole: %d, %d", len(res.Snapshot.History), res.Snapshot.SessionTurns, len(want.Snapshot.History), want.Snapshot.SessionTurns)
	}
}
