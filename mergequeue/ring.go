package mergequeue

// minRing is the smallest buffer a ring allocates.
const minRing = 8

// ring is a FIFO ring buffer. It is not safe for concurrent use; [Queue]
// guards it with its mutex. Popped slots are zeroed so the garbage collector
// can free what they referenced.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest item
	n    int // number of items
}

// push appends vs in order. When the buffer is too small it grows by
// doubling, but never beyond max(limit, r.n+len(vs)), so its size stays
// within the queue's capacity plus the largest batch overshoot.
func (r *ring[T]) push(vs []T, limit int) {
	need := r.n + len(vs)
	if need > len(r.buf) {
		r.grow(need, limit)
	}
	tail := r.head + r.n
	if tail >= len(r.buf) {
		tail -= len(r.buf)
	}
	k := copy(r.buf[tail:], vs)
	copy(r.buf, vs[k:]) // the part that wraps around, if any
	r.n = need
}

// grow reallocates the buffer to hold at least need items, moving the
// items to the front in order.
func (r *ring[T]) grow(need, limit int) {
	size := max(2*len(r.buf), minRing)
	size = max(min(size, limit), need)
	buf := make([]T, size)
	k := copy(buf, r.buf[r.head:min(r.head+r.n, len(r.buf))])
	copy(buf[k:], r.buf[:r.n-k])
	r.buf, r.head = buf, 0
}

// slot appends one item and returns it for the caller to fill; it holds
// the zero value, or an item a [Queue.Swap] consumer has taken.
func (r *ring[T]) slot(limit int) *T {
	if r.n+1 > len(r.buf) {
		r.grow(r.n+1, limit)
	}
	tail := r.head + r.n
	if tail >= len(r.buf) {
		tail -= len(r.buf)
	}
	r.n++
	return &r.buf[tail]
}

// take returns every item as one slice and gives the ring buf (its full
// length, which may hold stale items) as its new, empty buffer. It copies
// only when the items wrap around the end of the buffer.
func (r *ring[T]) take(buf []T) []T {
	if r.head != 0 { // wrapped, or partly popped: move them to buf
		out := r.popN(buf[:0], r.n)
		return out
	}
	out := r.buf[:r.n]
	r.buf, r.head, r.n = buf[:cap(buf)], 0, 0
	return out
}

// pop removes and returns the oldest item. The ring must not be empty.
func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	var zero T
	r.buf[r.head] = zero
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	return v
}

// popN removes the k oldest items (k ≤ r.n) and appends them to dst.
func (r *ring[T]) popN(dst []T, k int) []T {
	first := r.buf[r.head:min(r.head+k, len(r.buf))]
	dst = append(dst, first...)
	clear(first)
	if rest := r.buf[:k-len(first)]; len(rest) > 0 {
		dst = append(dst, rest...)
		clear(rest)
	}
	r.head += k
	if r.head >= len(r.buf) {
		r.head -= len(r.buf)
	}
	r.n -= k
	if r.n == 0 {
		r.head = 0
	}
	return dst
}

// reset drops every item and the buffer.
func (r *ring[T]) reset() {
	*r = ring[T]{}
}
