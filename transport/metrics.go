package transport

import "sync/atomic"

// Statuses are the statuses a run or a model request ends with, in the
// order of Metrics' arrays; the last, "other", counts any other string.
var Statuses = [...]string{"completed", "failed", "aborted", "timeout", "malformed", "auth", "other"}

// StatusIndex is the index of status in Statuses ("other" for a string
// that is none of the six).
func StatusIndex(status string) int {
	for i, s := range Statuses[:len(Statuses)-1] {
		if s == status {
			return i
		}
	}
	return len(Statuses) - 1
}

// Metrics are a server's counters and gauges, which the host and the API
// add to as they see the events, and an operator's scrape reads
// (floe-server's /metrics). Every field is an atomic; a nil *Metrics
// counts nothing, so that whoever has no use for them passes none.
type Metrics struct {
	RunsStarted      atomic.Int64                // runs and compactions begun
	RunsEnded        [len(Statuses)]atomic.Int64 // by their status
	ModelRequests    [len(Statuses)]atomic.Int64 // request_end by status, subagents' included
	ToolCalls        atomic.Int64                // tool_call messages of models, subagents' included
	ApprovalsPending atomic.Int64                // gauge: approvals waiting for a decision
	StreamsOpen      atomic.Int64                // gauge: SSE streams being served
	StreamsRefused   atomic.Int64                // streams refused, 429 too_many_streams
	EventsReplayed   atomic.Int64                // events replayed after a Last-Event-ID
	Resyncs          atomic.Int64                // resync_required sent (a Last-Event-ID past the buffer)
	TraceBytes       atomic.Int64                // bytes written to Traces
	TraceErrors      atomic.Int64                // Trace writes (and file rotations) that failed
}
