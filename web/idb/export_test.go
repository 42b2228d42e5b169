//go:build js && wasm

package idb

// SetReadSizes sets ReadParts' rows a transaction and bytes a part; the
// returned function restores them.
func SetReadSizes(rows, bytes int) (restore func()) {
	r, b := batchRows, partBytes
	batchRows, partBytes = rows, bytes
	return func() { batchRows, partBytes = r, b }
}

// Close closes the Store's connection, as a page that goes away does;
// a later call opens another.
func Close(s *Store) {
	if c := s.conn.Load(); c != nil {
		c.db.Call("close")
		c.closed.Store(true)
	}
}
