//go:build js && wasm

package idb

import (
	"context"
	"errors"
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
	if err == nil {
		s.conn.Store(c)
	}
	return c, err
}

// open opens (and creates or upgrades) the database and waits for the
// outcome. A blocked upgrade returns ErrBlocked at once; should the
// connection open later, it is closed.
func open(ctx context.Context, name string) (c *conn, err error) {
	defer catch(&err)
	factory := js.Global().Get("indexedDB")
	if !factory.Truthy() {
		return nil, ErrUnavailable
	}
	req := factory.Call("open", name, Version)
	done := make(chan error, 1)
	var gone atomic.Bool // the caller no longer waits
	c = &conn{}
	var on js.Func
	on = js.FuncOf(func(_ js.Value, args []js.Value) any {
		var err error
		defer func() {
			if err != nil {
				send(done, err)
			}
		}()
		defer catch(&err)
		ev := args[0]
		switch ev.Get("type").String() {
		case "upgradeneeded":
			upgrade(req.Get("result"), ev.Get("oldVersion").Int())
		case "success":
			c.db = req.Get("result")
			if gone.Load() {
				c.db.Call("close")
				break
			}
			c.db.Set("onversionchange", on)
			c.db.Set("onclose", on)
			send(done, nil)
		case "versionchange": // a newer version elsewhere: let it upgrade
			c.db.Call("close")
			c.closed.Store(true)
		case "close":
			c.closed.Store(true)
		case "blocked":
			send(done, ErrBlocked)
		case "error":
			send(done, domErr(req.Get("error")))
		}
		return nil
	})
	for _, e := range []string{"onupgradeneeded", "onsuccess", "onerror", "onblocked"} {
		req.Set(e, on)
	}
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		gone.Store(true)
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

// txn is one transaction in flight. One js.Func receives all its events:
// request successes arrive in the order the requests were placed
// (IndexedDB runs a transaction's requests in order), so the n-th success
// runs the n-th continuation. Continuations run while the transaction is
// active and may place further requests; they must not block.
type txn struct {
	tx   js.Value
	fn   js.Func
	then []func(result js.Value) // continuations of the requests that have one
	next int                     // the continuation the next success runs
	err  error                   // set by fail: the reason of an abort
	done chan error
}

// transact starts a transaction over stores, lets body place its first
// requests and waits until it completes. A failure recorded with fail, an
// exception, a DOMException of the transaction, or ctx (which aborts it) is
// returned.
func (s *Store) transact(ctx context.Context, stores []any, mode string, body func(t *txn)) (err error) {
	defer catch(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.connection(ctx)
	if err != nil {
		return err
	}
	t := &txn{done: make(chan error, 1)}
	if t.tx, err = c.begin(stores, mode); err != nil {
		return err
	}
	t.fn = js.FuncOf(func(_ js.Value, args []js.Value) any {
		t.handle(args[0])
		return nil
	})
	t.tx.Set("oncomplete", t.fn)
	t.tx.Set("onabort", t.fn)
	t.run(func() { body(t) })
	select {
	case err = <-t.done:
		return err
	case <-ctx.Done():
		t.fail(ctx.Err())
		return ctx.Err()
	}
}

// handle dispatches one event of the transaction or of its requests.
func (t *txn) handle(ev js.Value) {
	switch ev.Get("type").String() {
	case "success":
		if t.next < len(t.then) {
			then := t.then[t.next]
			t.next++
			t.run(func() { then(ev.Get("target").Get("result")) })
		}
	case "complete":
		send(t.done, t.err)
		t.fn.Release()
	case "abort":
		err := t.err
		if err == nil {
			err = domErr(t.tx.Get("error"))
		}
		send(t.done, err)
		t.fn.Release()
	}
}

// begin starts a transaction. A connection that refuses (it is closing)
// is marked closed, so the next operation reopens the database.
func (c *conn) begin(stores []any, mode string) (tx js.Value, err error) {
	defer func() {
		if err != nil {
			c.closed.Store(true)
		}
	}()
	defer catch(&err)
	return c.db.Call("transaction", stores, mode), nil
}

// request places method(args…) on store; then, if not nil, receives the
// result.
func (t *txn) request(store, method string, then func(js.Value), args ...any) {
	req := t.tx.Call("objectStore", store).Call(method, args...)
	if then != nil {
		req.Set("onsuccess", t.fn)
		t.then = append(t.then, then)
	}
}

// fail aborts the transaction with err as its outcome.
func (t *txn) fail(err error) {
	if t.err == nil {
		t.err = err
	}
	defer func() { recover() }() // abort throws when the transaction has finished
	t.tx.Call("abort")
}

// run runs f; an exception or panic fails the transaction.
func (t *txn) run(f func()) {
	var err error
	func() {
		defer catch(&err)
		f()
	}()
	if err != nil {
		t.fail(err)
	}
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
	text := "indexeddb: failed"
	if v.Type() == js.TypeObject {
		text = "indexeddb: " + v.Get("name").String()
		if msg := v.Get("message").String(); msg != "" {
			text += ": " + msg
		}
	}
	return errors.New(text)
}

// catch turns a panic — a js.Error thrown by a JavaScript call, or a Go
// panic — into *err. Defer it directly.
func catch(err *error) {
	switch r := recover().(type) {
	case nil:
	case js.Error:
		*err = domErr(r.Value)
	case error:
		*err = errors.New("indexeddb: " + r.Error())
	default:
		*err = errors.New("indexeddb: panic")
	}
}
