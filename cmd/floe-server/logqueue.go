package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logBounds are what the log holds while its writer is slow (a log
// collector that stalls, a full pipe), beside the record being written.
// An ordinary record is kept within lines and bytes; an error's (a
// handler's panic, a readiness that failed) may use errLines and errBytes
// more, a room that ordinary records never fill.
type logBounds struct {
	lines, bytes       int
	errLines, errBytes int
}

// defaultLogBounds: 4,096 records of about 150 bytes are 600 KiB; 2 MiB
// bounds them when they are long. The errors' room holds 64 panics'
// records (each at most logValueMax per value, about 20 KiB).
var defaultLogBounds = logBounds{lines: 4096, bytes: 2 << 20, errLines: 64, errBytes: 1 << 20}

// logValueMax is the longest string value a record holds (a panic's
// stack, an error's text): a longer one is cut to it and ends with
// "…[cut N bytes]", so that a record stays one parsable line of its
// format, a few values long.
const logValueMax = 16 << 10

// logFlushGrace is how long, at least, a shutdown waits for its log's
// writer once the server has stopped, even when the server's own
// shutdownGrace is spent: the shutdown's records (a run aborted, stopped)
// are the ones an operator reads.
const logFlushGrace = 2 * time.Second

// logQueue is the log's writer: a record (one Write of log/slog's
// handlers) is queued and written by one goroutine, so that a stderr that
// blocks never holds a request, a run's end or a shutdown step. A record
// that finds no room (logBounds) is dropped and counted (Dropped,
// /metrics's floe_log_lines_dropped_total); once a write completes again,
// a record says how many were dropped since the last such one, and how
// many of them were errors.
type logQueue struct {
	out    io.Writer
	bounds logBounds
	notice *slog.Logger  // on out, written by the drain goroutine only
	wake   chan struct{} // one pending signal: items were added

	mu        sync.Mutex
	items     []logItem
	size      int   // bytes of the records in items
	lines     int   // records in items (flush marks are not)
	dropped   int64 // since the start
	unsaid    int64 // dropped and not yet said in the log
	unsaidErr int64 // of unsaid, error records
}

// logItem is a record's line, or a flush's mark: done is closed once the
// records queued before it are written.
type logItem struct {
	line  []byte
	isErr bool
	done  chan struct{}
}

// newLogQueue starts the queue in front of out; format ("text" or
// "json") is the one of the notice of dropped records.
func newLogQueue(out io.Writer, format string, b logBounds) *logQueue {
	q := &logQueue{out: out, bounds: b, notice: newLogger(out, format), wake: make(chan struct{}, 1)}
	go q.drain()
	return q
}

// Write queues a copy of p (log/slog reuses its buffer) as an ordinary
// record, or drops it. It never waits and never fails.
func (q *logQueue) Write(p []byte) (int, error) {
	q.put(p, false)
	return len(p), nil
}

// errorWriter is the queue's writer of error records (newLogger sends
// them there): they may use the errors' room.
type errorWriter struct{ q *logQueue }

func (w errorWriter) Write(p []byte) (int, error) {
	w.q.put(p, true)
	return len(p), nil
}

func (q *logQueue) put(p []byte, isErr bool) {
	q.mu.Lock()
	lines, bytes := q.bounds.lines, q.bounds.bytes
	if isErr {
		lines, bytes = lines+q.bounds.errLines, bytes+q.bounds.errBytes
	}
	if q.lines >= lines || q.size+len(p) > bytes {
		q.dropped++
		q.unsaid++
		if isErr {
			q.unsaidErr++
		}
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, logItem{line: append([]byte(nil), p...), isErr: isErr})
	q.lines++
	q.size += len(p)
	q.mu.Unlock()
	q.signal()
}

func (q *logQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Dropped is how many records were dropped since the start.
func (q *logQueue) Dropped() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

func (q *logQueue) drain() {
	for range q.wake {
		for {
			q.mu.Lock()
			if len(q.items) == 0 {
				q.mu.Unlock()
				break
			}
			it := q.items[0]
			q.items[0] = logItem{}
			q.items = q.items[1:]
			if it.done == nil {
				q.lines--
				q.size -= len(it.line)
			}
			q.mu.Unlock()
			if it.done != nil {
				q.say()
				close(it.done)
				continue
			}
			q.out.Write(it.line) // an error (stderr closed) is the log's own: nothing to say it on
			q.say()
		}
	}
}

// say writes the notice of the records dropped since the last one, if
// any: the write before it completed, so the writer takes records again.
func (q *logQueue) say() {
	q.mu.Lock()
	n, e := q.unsaid, q.unsaidErr
	q.unsaid, q.unsaidErr = 0, 0
	q.mu.Unlock()
	if n > 0 && e > 0 {
		q.notice.Warn("log lines dropped: the log's writer was blocked", "dropped", n, "errors", e)
	} else if n > 0 {
		q.notice.Warn("log lines dropped: the log's writer was blocked", "dropped", n)
	}
}

// Flush waits until the records queued before it are written. It is the
// exit's: once ctx is done (a writer still blocked), the records still
// queued are dropped and counted, and its error says how many; the
// notice of them is written if the writer takes one more record before
// the process ends.
func (q *logQueue) Flush(ctx context.Context) error {
	if ctx.Err() == nil {
		done := make(chan struct{})
		q.mu.Lock()
		q.items = append(q.items, logItem{done: done})
		q.mu.Unlock()
		q.signal()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
		}
	}
	q.mu.Lock()
	kept := q.items[:0]
	for _, it := range q.items {
		if it.done != nil {
			kept = append(kept, it)
		} else if it.isErr {
			q.unsaidErr++
		}
	}
	n := q.lines
	clear(q.items[len(kept):])
	q.items, q.lines, q.size = kept, 0, 0
	q.dropped += int64(n)
	q.unsaid += int64(n)
	q.mu.Unlock()
	return fmt.Errorf("the log's writer is blocked: %d records not written: %w", n, ctx.Err())
}
