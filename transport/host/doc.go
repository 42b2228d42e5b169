// Package host runs sessions for remote clients: one engine session per
// id, its Trace in a trace.Store, its stream relayed on a transport channel
// (TRANSPORT.md §1–§6). A [Host] starts, steers, aborts and compacts runs,
// answers tool approvals from its approval mode or from a client
// (approval_request, then [Host.Approve]), and keeps the open fragments
// for the messages endpoint's live snapshot. A [Registry] creates, lists,
// resumes (from the Trace, after a restart) and deletes hosts.
//
// It is pure Go without net/http: package transport/api puts it on HTTP.
// Everything here is safe for concurrent use.
//
// A session's channel keeps the events of its last run (its replay
// buffer) until the Hub reclaims it, idle: run [transport.Hub.Run], as
// package transport/server does, or a service that opens many sessions
// keeps every one's. A Registry keeps a small Host for each session it
// opened until [Registry.Delete]; a Host lets its engine go past
// Config.KeepWarm.
//
// A server going down calls [Registry.Shutdown], which aborts the runs in
// flight and waits for their Traces and locks (a task sent meanwhile is
// [ErrShuttingDown], 503), then closes the Hub to end the streams.
package host
