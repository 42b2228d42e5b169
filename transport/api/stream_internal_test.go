package api

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// opLog records what a deadlineWriter does, in order.
type opLog struct {
	ops []string
	t0  time.Time
	now time.Time
}

func (l *opLog) Write(b []byte) (int, error) {
	l.ops = append(l.ops, "write "+strconv.Itoa(len(b)))
	return len(b), nil
}

func (l *opLog) flush() error { l.ops = append(l.ops, "flush"); return nil }

func (l *opLog) set(d time.Time) error {
	l.ops = append(l.ops, "deadline +"+d.Sub(l.t0).String())
	return nil
}

// tick is the writer's clock: one second later at every reading.
func (l *opLog) tick() time.Time { l.now = l.now.Add(time.Second); return l.now }

// Every piece of at most writeChunk bytes and every flush gets a deadline
// of its own, counted from when it starts: a slow reader that keeps up
// never trips it, and a deadline set before an idle spell never cuts the
// next write short.
func TestDeadlineWriterArmsEachPiece(t *testing.T) {
	l := &opLog{}
	l.t0, l.now = time.Unix(0, 0), time.Unix(0, 0)
	d := &deadlineWriter{w: l, flush: l.flush, setDeadline: l.set, timeout: 10 * time.Second, now: l.tick}
	const chunk = 16 << 10 // the README's "at most 16 KiB", written out
	if n, err := d.Write(make([]byte, 2*chunk+100)); n != 2*chunk+100 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	d.Flush()
	d.Write([]byte("ping"))
	want := []string{
		"deadline +11s", "write " + strconv.Itoa(chunk),
		"deadline +12s", "write " + strconv.Itoa(chunk),
		"deadline +13s", "write 100",
		"deadline +14s", "flush",
		"deadline +15s", "write 4",
	}
	if got := strings.Join(l.ops, ", "); got != strings.Join(want, ", ") {
		t.Errorf("ops\n got %s\nwant %s", got, strings.Join(want, ", "))
	}
}

// Without Options.WriteTimeout a stream's writes have 30 s each, the
// README's number, written out.
func TestDefaultWriteTimeout(t *testing.T) {
	if d := (&Handler{}).writeTimeout(); d != 30*time.Second {
		t.Errorf("the write timeout without Options.WriteTimeout: %v, want 30s", d)
	}
}

// A ResponseWriter that cannot take deadlines gets the writes unchanged,
// one call each, as without a timeout.
func TestDeadlineWriterWithoutDeadlines(t *testing.T) {
	l := &opLog{}
	calls := 0
	d := &deadlineWriter{w: l, flush: l.flush, timeout: time.Second, now: time.Now,
		setDeadline: func(time.Time) error { calls++; return http.ErrNotSupported }}
	d.Write(make([]byte, 3*writeChunk))
	d.Write(make([]byte, 3*writeChunk))
	d.Flush()
	want := "write " + strconv.Itoa(3*writeChunk) + ", write " + strconv.Itoa(3*writeChunk) + ", flush"
	if got := strings.Join(l.ops, ", "); got != want || calls != 1 {
		t.Errorf("ops %s after %d deadline calls; want %s after 1", got, calls, want)
	}
}
