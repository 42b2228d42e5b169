package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
)

// logQueueLines is how many records the log holds while its writer is
// slow (a log collector that stalls, a full pipe): about 150 bytes each,
// a panic's record a few KiB.
const logQueueLines = 4096

// logQueue is the log's writer: a record (one Write of log/slog's
// handlers) is queued and written by one goroutine, so that a stderr that
// blocks never holds a request, a run's end or a shutdown step. A record
// that finds the queue full is dropped and counted (dropped, /metrics's
// floe_log_lines_dropped_total); once a write completes again, a record
// says how many were dropped since the last such one.
type logQueue struct {
	out     io.Writer
	queue   chan logItem
	dropped atomic.Int64 // since the start
	unsaid  atomic.Int64 // dropped and not yet said in the log
	notice  *slog.Logger // on out, written by the drain goroutine only
}

// logItem is a record's line, or a flush's mark: done is closed once the
// records queued before it are written.
type logItem struct {
	line []byte
	done chan struct{}
}

// newLogQueue starts the queue of size records in front of out; format
// ("text" or "json") is the one of the notice of dropped records.
func newLogQueue(out io.Writer, format string, size int) *logQueue {
	q := &logQueue{out: out, queue: make(chan logItem, size), notice: newLogger(out, format)}
	go q.drain()
	return q
}

// Write queues a copy of p (log/slog reuses its buffer), or drops it when
// the queue is full. It never waits and never fails.
func (q *logQueue) Write(p []byte) (int, error) {
	select {
	case q.queue <- logItem{line: append([]byte(nil), p...)}:
	default:
		q.dropped.Add(1)
		q.unsaid.Add(1)
	}
	return len(p), nil
}

// Dropped is how many records were dropped since the start.
func (q *logQueue) Dropped() int64 { return q.dropped.Load() }

func (q *logQueue) drain() {
	for it := range q.queue {
		if it.done != nil {
			q.say()
			close(it.done)
			continue
		}
		q.out.Write(it.line) // an error (stderr closed) is the log's own: nothing to say it on
		q.say()
	}
}

// say writes the notice of the records dropped since the last one, if
// any: the write before it completed, so the writer takes records again.
func (q *logQueue) say() {
	if n := q.unsaid.Swap(0); n > 0 {
		q.notice.Warn("log lines dropped: the log's writer was blocked", "dropped", n)
	}
}

// Flush waits until the records queued before it are written, or until
// ctx is done (a writer still blocked at a shutdown's end): its error then.
func (q *logQueue) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case q.queue <- logItem{done: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
