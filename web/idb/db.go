//go:build js && wasm

package idb

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall/js"
)

// Version is the schema version of the database (its IndexedDB version).
const Version = 1

// Object store names.
const (
	recordsStore  = "records"
	filesStore    = "files"
	sessionsStore = "sessions"
)

var (
	// ErrUnavailable: the environment has no IndexedDB, or refuses it.
	ErrUnavailable = errors.New("indexeddb: not available (private browsing, or not a browser)")
	// ErrBlocked: the schema upgrade waits for another tab to close an
	// older version of the database.
	ErrBlocked = errors.New("indexeddb: upgrade blocked: another tab keeps an older version of the database open; close it and retry")
)

// conn is one open database connection.
type conn struct {
	db     js.Value
	closed atomic.Bool // set by the versionchange and close events
}

// connection returns the open connection, opening the database if needed.
func (s *Store) connection(ctx context.Context) (*conn, error) {
	if c := s.conn.Load(); c != nil && !c.closed.Load() {
		return c, nil
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if c := s.conn.Load(); c != nil && !c.closed.Load() {
		return c, nil
	}
	c, err := open(ctx, s.name)
	if err != nil {
		return nil, err
	}
	s.conn.Store(c)
	return c, nil
}

// open opens (and creates or upgrades) the database. It waits for the
// request's outcome; a blocked upgrade returns ErrBlocked at once, and the
// connection, should it open later, is closed.
func open(ctx context.Context, name string) (c *conn, err error) {
	defer catch(&err)
	factory := js.Global().Get("indexedDB")
	if !factory.Truthy() {
		return nil, ErrUnavailable
	}
	req := factory.Call("open", name, Version)
	done := make(chan error, 1)
	var abandoned atomic.Bool
	funcs := funcs{onPanic: func(err error) { send(done, err) }}
	c = &conn{}
	funcs.on(req, "upgradeneeded", func(ev js.Value) {
		upgrade(req.Get("result"), ev.Get("oldVersion").Int())
	})
	funcs.on(req, "success", func(js.Value) {
		db := req.Get("result")
		if abandoned.Load() {
			db.Call("close")
			funcs.release()
			return
		}
		c.db = db
		funcs.on(db, "versionchange", func(js.Value) { db.Call("close"); c.closed.Store(true) })
		funcs.on(db, "close", func(js.Value) { c.closed.Store(true) })
		send(done, nil)
	})
	funcs.on(req, "error", func(js.Value) {
		send(done, domErr(req.Get("error")))
		funcs.release()
	})
	funcs.on(req, "blocked", func(js.Value) { send(done, ErrBlocked) })
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		abandoned.Store(true)
		return nil, err
	}
	return c, nil
}

// upgrade brings the schema from version old to Version. It runs in the
// upgradeneeded event; an exception aborts the upgrade.
func upgrade(db js.Value, old int) {
	if old < 1 {
		for _, name := range []string{recordsStore, filesStore, sessionsStore} {
			db.Call("createObjectStore", name)
		}
	}
	// Later schema versions add their steps here: if old < 2 { … }.
}

// txn is one transaction in flight. Its handlers run in IndexedDB's event
// callbacks, where the transaction is active, so they may place further
// requests; they must not block.
type txn struct {
	tx    js.Value
	funcs funcs
	err   error // set by fail: the reason of an abort
	done  chan error
}

// transact runs body, which places the transaction's first requests, and
// waits for the transaction to complete. A failure recorded with fail, an
// exception, a DOMException of the transaction, or ctx (which aborts it) is
// returned.
func (s *Store) transact(ctx context.Context, stores []string, mode string, body func(t *txn)) (err error) {
	defer catch(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.connection(ctx)
	if err != nil {
		return err
	}
	names := make([]any, len(stores))
	for i, n := range stores {
		names[i] = n
	}
	t := &txn{done: make(chan error, 1)}
	t.funcs.onPanic = t.fail
	if t.tx, err = c.begin(names, mode); err != nil {
		return err
	}
	t.funcs.on(t.tx, "complete", func(js.Value) { send(t.done, nil); t.funcs.release() })
	t.funcs.on(t.tx, "abort", func(js.Value) {
		err := t.err
		if err == nil {
			err = domErr(t.tx.Get("error"))
		}
		send(t.done, err)
		t.funcs.release()
	})
	t.guard(func() { body(t) })
	select {
	case err = <-t.done:
		return err
	case <-ctx.Done():
		t.fail(ctx.Err())
		return ctx.Err()
	}
}

// begin starts a transaction. A connection that refuses (it is closing)
// is marked closed, so the next operation reopens the database.
func (c *conn) begin(names []any, mode string) (tx js.Value, err error) {
	defer func() {
		if err != nil {
			c.closed.Store(true)
		}
	}()
	defer catch(&err)
	return c.db.Call("transaction", names, mode), nil
}

// request calls then with the result of req once it succeeded.
func (t *txn) request(req js.Value, then func(result js.Value)) {
	t.funcs.on(req, "success", func(js.Value) { then(req.Get("result")) })
}

// get reads one value (undefined when absent).
func (t *txn) get(store string, key any, then func(js.Value)) {
	t.request(t.tx.Call("objectStore", store).Call("get", key), then)
}

// getAll reads the values of a key range, in key order.
func (t *txn) getAll(store string, query any, then func(js.Value)) {
	t.request(t.tx.Call("objectStore", store).Call("getAll", query), then)
}

func (t *txn) put(store string, value, key any) {
	t.tx.Call("objectStore", store).Call("put", value, key)
}

func (t *txn) delete(store string, query any) {
	t.tx.Call("objectStore", store).Call("delete", query)
}

// fail aborts the transaction with err as its outcome.
func (t *txn) fail(err error) {
	if t.err == nil {
		t.err = err
	}
	defer func() { recover() }() // abort throws when the transaction has finished
	t.tx.Call("abort")
}

// guard runs f; an exception or panic fails the transaction.
func (t *txn) guard(f func()) {
	var err error
	func() {
		defer catch(&err)
		f()
	}()
	if err != nil {
		t.fail(err)
	}
}

// funcs owns the js.Funcs of one request or transaction.
type funcs struct {
	onPanic func(error) // receives a panic or exception of a handler

	mu sync.Mutex
	fs []js.Func
}

// on sets target.on<event> to f. A panic or exception in f is recovered
// and handed to onPanic.
func (fs *funcs) on(target js.Value, event string, f func(ev js.Value)) {
	fn := js.FuncOf(func(_ js.Value, args []js.Value) any {
		var err error
		defer func() {
			if err != nil && fs.onPanic != nil {
				fs.onPanic(err)
			}
		}()
		defer catch(&err)
		ev := js.Undefined()
		if len(args) > 0 {
			ev = args[0]
		}
		f(ev)
		return nil
	})
	fs.mu.Lock()
	fs.fs = append(fs.fs, fn)
	fs.mu.Unlock()
	target.Set("on"+event, fn)
}

func (fs *funcs) release() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.fs {
		f.Release()
	}
	fs.fs = nil
}

func send(ch chan error, err error) {
	select {
	case ch <- err:
	default:
	}
}

// domErr turns a DOMException (or anything else) into an error carrying its
// name and message.
func domErr(v js.Value) error {
	if v.Type() != js.TypeObject {
		return errors.New("indexeddb: failed without an error")
	}
	name, msg := v.Get("name"), v.Get("message")
	text := "indexeddb: "
	if name.Type() == js.TypeString {
		text += name.String()
	}
	if msg.Type() == js.TypeString && msg.String() != "" {
		text += ": " + msg.String()
	}
	return errors.New(text)
}

// catch turns a panic — a js.Error thrown by a JavaScript call, or a Go
// panic — into *err. Defer it directly.
func catch(err *error) {
	r := recover()
	if r == nil {
		return
	}
	switch x := r.(type) {
	case js.Error:
		*err = domErr(x.Value)
	case error:
		*err = errors.New("indexeddb: " + x.Error())
	case string:
		*err = errors.New("indexeddb: " + x)
	default:
		*err = errors.New("indexeddb: panic")
	}
}
