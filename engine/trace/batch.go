package trace

import (
	"context"
	"errors"

	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/lock"
)

// Batcher is a [Store] whose Append queues the records and returns at once;
// a goroutine of the Batcher appends them to the underlying Store in the
// order they were queued. Consecutive appends to the same file are grouped
// into one underlying Append (for the IndexedDB store, one transaction) of
// at most MaxBatchBytes, so records are never reordered or split, and a
// crash loses at most the queued tail. Use it where the underlying Store is
// asynchronous and the writer must not wait: a [Writer] over a Batcher is an
// engine.TraceSink whose Write does not wait for storage.
//
// Append validates its arguments and returns a zero AppendResult: whether
// the file was created or healed is known only once written. A failed
// underlying Append is handed to Report and the next batch is still
// attempted (ENGINE.md E-16.7), after the failed one again: a failure
// leaves no hole in a Trace (up to 8 MiB of a session's records wait so;
// past that, once [Batcher.Retry] failed, or once the Store says another
// process took the session's lock (ErrLockLost), its Trace is written no further). [Batcher.Flush] waits until everything
// queued before it was written. The reading methods and Create and Delete
// flush first, then call the underlying Store.
//
// The goroutine runs only while appends are queued. A Batcher is safe for
// concurrent use.
type Batcher struct {
	store Store
	opts  BatcherOptions

	mu       lock.Mutex
	queue    []batch
	running  bool
	queued   uint64        // appends accepted
	written  uint64        // appends handed to the store
	progress chan struct{} // closed and replaced when written advances
	checked  map[string]bool

	// held are, by session, the batches whose write failed and the ones
	// queued after them, written again before the session's next batch:
	// a failed write (a full quota) leaves no hole in the Trace, only a
	// tail still to come. Only the run goroutine uses it.
	held map[string][]batch
	lost map[string]bool // sessions whose held records passed maxHeld

	dropped map[string]int // Drop's sessions (mu): 1 = not reported yet, 2 = reported
}

// maxHeld bounds the bytes a session's held batches may take; past it they
// are dropped and the session's Trace is written no further, so that it
// keeps a prefix rather than a hole.
const maxHeld = 8 << 20

// BatcherOptions configure a [Batcher].
type BatcherOptions struct {
	// Report receives each failed underlying write. nil drops them.
	Report func(error)
	// Fresh makes the Batcher refuse to append to a session that is already
	// in the underlying Store when the Batcher first writes it: its records
	// are dropped and Report receives one error wrapping ErrExists. Use it
	// for new sessions, so that a reused session id never mixes two
	// sessions in one Trace. A stored session of no record at all (a first
	// line a crash cut) is deleted instead, and the new one written.
	Fresh bool
	// MaxBatchBytes caps the bytes grouped into one underlying Append
	// (default 1 MiB). A single larger append is written alone, whole.
	MaxBatchBytes int
}

type batch struct {
	id    string
	index int
	data  []byte
	last  uint64 // the append number of the batch's last append
}

var _ Store = (*Batcher)(nil)

// NewBatcher returns a Batcher over store. Its goroutine calls store with a
// background context: a queued record is written even when the run whose
// Write queued it was aborted (the Append's context bounds only Append).
func NewBatcher(store Store, opts BatcherOptions) *Batcher {
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = 1 << 20
	}
	return &Batcher{store: store, opts: opts, progress: make(chan struct{}), checked: map[string]bool{}, held: map[string][]batch{}, lost: map[string]bool{}}
}

// Append implements [Store]: it validates and queues data (copied) and
// returns without waiting for the underlying Store.
func (b *Batcher) Append(ctx context.Context, id string, index int, data []byte) (AppendResult, error) {
	err := checkFile(ctx, id, index)
	if err == nil {
		err = validateRecords(data)
	}
	if b.store == nil { // its goroutine's write panicked, ending the program
		err = errf.Errorf("%w: the Batcher's Store is nil (trace.NewBatcher(nil, …))", ErrInvalid)
	}
	if err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	b.queue1(id, index, data)
	return AppendResult{}, nil
}

// Retry queues one more write of the records of session id held after a
// failed write (a [Batcher.Flush] after it waits for it). If it fails too,
// they are dropped and reported with their number, and the session's Trace
// is written no further: call it when the session's writer closes, so that
// nothing is dropped unreported.
func (b *Batcher) Retry(id string) {
	if b.store != nil {
		b.queue1(id, -1, nil) // index -1: the mark write stops at
	}
}

// queue1 queues one batch, joined to the last one when it continues it.
func (b *Batcher) queue1(id string, index int, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued++
	if n := len(b.queue); n > 0 {
		if q := &b.queue[n-1]; q.id == id && q.index == index && len(q.data)+len(data) <= b.opts.MaxBatchBytes {
			q.data = append(q.data, data...)
			q.last = b.queued
			return
		}
	}
	b.queue = append(b.queue, batch{id: id, index: index, data: append([]byte(nil), data...), last: b.queued})
	if !b.running {
		b.running = true
		go b.run()
	}
}

// run writes the queued batches in order until the queue is empty.
func (b *Batcher) run() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			b.queue = nil
			b.mu.Unlock()
			return
		}
		next := b.queue[0]
		b.queue[0] = batch{}
		b.queue = b.queue[1:]
		b.mu.Unlock()

		if err := b.write(next); err != nil && b.opts.Report != nil {
			b.opts.Report(err)
		}

		b.mu.Lock()
		b.written = next.last
		close(b.progress)
		b.progress = make(chan struct{})
		b.mu.Unlock()
	}
}

// Drop makes the Batcher write no more of session id: what is queued or
// comes later is dropped, and the first batch dropped is reported. Use it
// when the session was deleted while a writer of it is still open, so that
// it does not come back as a Trace without its head.
func (b *Batcher) Drop(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == nil {
		b.dropped = map[string]int{}
	}
	if b.dropped[id] == 0 {
		b.dropped[id] = 1
	}
}

// write appends one batch, after the session's held ones; only the run
// goroutine calls it.
func (b *Batcher) write(next batch) error {
	b.mu.Lock()
	drop := b.dropped[next.id]
	if drop == 1 {
		b.dropped[next.id] = 2
	}
	b.mu.Unlock()
	switch drop {
	case 1:
		delete(b.held, next.id)
		return opErr("append", next.id, next.index, errf.Errorf("%w: the session was deleted while it was open: its records are no longer stored", ErrNotFound))
	case 2:
		return nil
	}
	if b.opts.Fresh {
		refused, err := b.refuse(next.id)
		if refused {
			return err
		}
	}
	if b.lost[next.id] {
		return nil // reported when it was lost
	}
	pending := append(b.held[next.id], next)
	for i, p := range pending {
		if p.index < 0 {
			break // Retry's mark: the held records are written
		}
		if _, err := b.store.Append(context.Background(), p.id, p.index, p.data); err != nil {
			rest, size, n := pending[i:], 0, 0
			for _, r := range rest {
				size += len(r.data)
				for _, c := range r.data {
					if c == '\n' {
						n++
					}
				}
			}
			if size > maxHeld || next.index < 0 || errors.Is(err, ErrLockLost) {
				// Lost lock: written later, they would land beside (or
				// after) another process's records.
				delete(b.held, next.id)
				b.lost[next.id] = true
				return errf.Errorf("%w; %d records waiting to be written again are dropped, and the session's Trace is written no further: it keeps what was stored before", err, n)
			}
			b.held[next.id] = rest
			return err
		}
	}
	delete(b.held, next.id)
	return nil
}

// refuse reports whether writes to id are refused (Fresh). The first
// refusal returns the error; later ones return nil, so it is reported once.
func (b *Batcher) refuse(id string) (bool, error) {
	b.mu.Lock()
	refused, checked := b.checked[id]
	b.mu.Unlock()
	if checked {
		return refused, nil
	}
	ctx := context.Background()
	_, err := b.store.Files(ctx, id)
	exists := err == nil
	if exists && onlyTorn(ctx, b.store, id) {
		// A session whose files hold no record at all, only a line a crash
		// cut, could be neither resumed nor made again: it is removed, and
		// the new session takes its id.
		exists = b.store.Delete(ctx, id) != nil
	}
	b.mu.Lock()
	b.checked[id] = exists
	b.mu.Unlock()
	if exists {
		return true, opErr("append", id, 0, errf.Errorf("%w: its records are not written (resume the stored session instead of creating it again)", ErrExists))
	}
	return false, nil
}

// onlyTorn reports whether the stored session id holds no record, only a
// torn line: the crash of its first write. An empty file (another writer's,
// made and not yet written) is not one.
func onlyTorn(ctx context.Context, store Store, id string) bool {
	infos, err := store.Files(ctx, id)
	if err != nil {
		return false
	}
	torn := false
	for _, fi := range infos {
		data, err := store.ReadFile(ctx, id, fi.Index)
		if err != nil {
			return false
		}
		p, err := ReadFile(data)
		if err != nil || len(p.Records) > 0 || len(p.Skipped) > 0 {
			return false
		}
		torn = torn || p.TornTail
	}
	return torn
}

// Forget tells the store that this process writes session id no more,
// when the store keeps something of each session it wrote
// (FileStore.Forget). Call it once what was queued is stored.
func (b *Batcher) Forget(id string) {
	if f, ok := b.store.(interface{ Forget(id string) }); ok {
		f.Forget(id)
	}
}

// Flush waits until every append queued before the call was handed to the
// underlying Store (written, or failed and reported), or until ctx is done.
func (b *Batcher) Flush(ctx context.Context) error {
	b.mu.Lock()
	target := b.queued
	b.mu.Unlock()
	for {
		b.mu.Lock()
		done, progress := b.written >= target, b.progress
		b.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Files implements [Store]: it flushes, then lists.
func (b *Batcher) Files(ctx context.Context, id string) ([]FileInfo, error) {
	if err := b.Flush(ctx); err != nil {
		return nil, opErr("files", id, 0, err)
	}
	return b.store.Files(ctx, id)
}

// ReadFile implements [Store]: it flushes, then reads.
func (b *Batcher) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if err := b.Flush(ctx); err != nil {
		return nil, opErr("read", id, index, err)
	}
	return b.store.ReadFile(ctx, id, index)
}

// ReadParts implements [PartReader]: it flushes, then reads, a part at a
// time when the underlying Store is a PartReader.
func (b *Batcher) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	if err := b.Flush(ctx); err != nil {
		return opErr("read", id, index, err)
	}
	return readParts(ctx, b.store, id, index, part)
}

// Sessions implements [Store]: it flushes, then lists.
func (b *Batcher) Sessions(ctx context.Context) ([]SessionInfo, error) {
	if err := b.Flush(ctx); err != nil {
		return nil, opErr("sessions", "", 0, err)
	}
	return b.store.Sessions(ctx)
}

// Create implements [Store]: it flushes, then creates.
func (b *Batcher) Create(ctx context.Context, id string, files [][]byte) error {
	if err := b.Flush(ctx); err != nil {
		return opErr("create", id, 0, err)
	}
	return b.store.Create(ctx, id, files)
}

// Delete implements [Store]: it flushes, then deletes.
func (b *Batcher) Delete(ctx context.Context, id string) error {
	if err := b.Flush(ctx); err != nil {
		return opErr("delete", id, 0, err)
	}
	return b.store.Delete(ctx, id)
}
