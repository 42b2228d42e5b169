// Package transport is the server side of the SSE transport of
// TRANSPORT.md §1–§4: per-key channels that number every event
// `<epoch>-<seq>`, keep a replay buffer of the most recent broadcast events
// (10,000 events or 8 MiB of data, oldest evicted first), decide hit or miss
// for a reconnect's Last-Event-ID, send unicast initial events, and write each
// subscriber's stream whole and in order, with a `: ping` comment every 20 s.
//
// It is pure Go without syscall/js or net/http, so that the same channel can
// run natively and inside a WebAssembly build. A subscriber writes to any
// io.Writer; the HTTP layer lives in package transport/api.
//
// # Order and atomicity
//
// [Channel.Publish] assigns the next seq, buffers the event and hands it to
// every subscriber's queue in one critical section; [Channel.Subscribe]
// decides the replay, queues it and the initial events and registers the
// subscriber in the same critical section, so nothing published meanwhile is
// lost or seen twice. A host whose initial events (the task_state snapshot,
// pending approvals) must agree with what it has published holds its own lock
// around both its state changes with their Publish and its snapshot with its
// Subscribe.
//
// # Slow subscribers
//
// Publish never blocks: each subscriber has a bounded queue, and a subscriber
// whose queue is full is dropped ([ErrOverflow]); its connection closes and
// the client reconnects with Last-Event-ID, getting a replay while the events
// it missed are still buffered and resync_required after that.
package transport
