package main

import (
	"bytes"
	"testing"
	"time"
)

// TestDocumentedDefaults: what the README says floe-server does without a
// flag or a variable, each value written out as the README writes it (a
// comparison with the constant that sets it would pass whatever it
// became): --port 8787 on --host 127.0.0.1, --dir floe-sessions, --mode
// ask, --delay 30ms, --shutdown-grace 10 s, the text log, --keep-warm 8,
// --max-streams 1,000; a request's head within 10 s, its body within 2
// minutes, a connection idle 2 minutes at most; at a shutdown, the
// requests left 10 s more.
func TestDocumentedDefaults(t *testing.T) {
	o, err := parseAll(nil, func(string) string { return "" }, []string{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"address", o.addr, "127.0.0.1:8787"},
		{"--dir", o.cfg.Dir, "floe-sessions"},
		{"--mode", o.cfg.Mode, "ask"},
		{"--delay", o.cfg.Delay, 30 * time.Millisecond},
		{"--shutdown-grace", o.grace, 10 * time.Second},
		{"--log-format", o.logFormat, "text"},
		{"--keep-warm", o.cfg.KeepWarm, 8},
		{"--max-streams", o.cfg.Channel.MaxSubscribers, 1000},
		{"a request's head", defaultLimits.header, 10 * time.Second},
		{"a request's body", defaultLimits.body, 2 * time.Minute},
		{"an idle connection", defaultLimits.idle, 2 * time.Minute},
		{"the requests left at a shutdown", shutdownGrace, 10 * time.Second},
		{"the log's flush at a shutdown, at least", logFlushGrace, 2 * time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if ro := defaultRunOpts(); ro.lim != defaultLimits || ro.grace != 10*time.Second {
		t.Errorf("serve's defaults: %+v, want the limits above and a grace of 10s", ro)
	}
}

// TestDefaultLogBounds: with its writer blocked, the log holds, beside
// the record being written, 4,096 records and 2 MiB, and error records
// 64 records and 1 MiB more, as the README's Logs says; past them a
// record is dropped.
func TestDefaultLogBounds(t *testing.T) {
	// blocked is a queue of the default bounds whose writer holds its
	// first record.
	blocked := func() *logQueue {
		g := newGateWriter(t)
		q := newLogQueue(g, "text", defaultLogBounds)
		q.Write([]byte("being written\n"))
		<-g.entered
		return q
	}
	q := blocked()
	for range 4096 {
		q.Write([]byte("r\n"))
	}
	if n := q.Dropped(); n != 0 {
		t.Errorf("%d of 4,096 short records dropped, want none", n)
	}
	q.Write([]byte("r\n"))
	if n := q.Dropped(); n != 1 {
		t.Errorf("the 4,097th record: %d dropped, want 1", n)
	}
	errs := errorWriter{q}
	for range 64 {
		errs.Write([]byte("e\n"))
	}
	if n := q.Dropped(); n != 1 {
		t.Errorf("64 error records beside a full queue: %d dropped, want only the record before", n)
	}
	errs.Write([]byte("e\n"))
	if n := q.Dropped(); n != 2 {
		t.Errorf("the 65th error record: %d dropped, want 2", n)
	}

	kib := append(bytes.Repeat([]byte("x"), 1023), '\n')
	q = blocked()
	for range 2048 { // 2 MiB
		q.Write(kib)
	}
	if n := q.Dropped(); n != 0 {
		t.Errorf("%d of 2 MiB of records dropped, want none", n)
	}
	q.Write(kib)
	if n := q.Dropped(); n != 1 {
		t.Errorf("a KiB past 2 MiB: %d dropped, want 1", n)
	}
	errs = errorWriter{q}
	for range 64 { // 64 KiB of the errors' 1 MiB
		errs.Write(kib)
	}
	big := bytes.Repeat([]byte("y"), 1<<20-64<<10) // the rest of it
	errs.Write(big)
	if n := q.Dropped(); n != 1 {
		t.Errorf("1 MiB of error records beside a full queue: %d dropped, want only the record before", n)
	}
	errs.Write(kib)
	if n := q.Dropped(); n != 2 {
		t.Errorf("an error record past the errors' 1 MiB: %d dropped, want 2", n)
	}
}
