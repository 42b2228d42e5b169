//go:build wasm

package lock

// Mutex is a mutual exclusion lock for WebAssembly's one thread. Its zero
// value is unlocked; it must not be copied after first use. Lock and
// Unlock behave as sync.Mutex's: a goroutine that finds it held parks
// until it is free.
//
// Lock and Unlock are not inlined: a call each is still three fewer than
// sync.Mutex's, and inlined they made floe.wasm 4.5 kB larger (brotli), at
// every deferred Unlock's wrapper. (The Node build, which has no size
// budget, gained nothing measurable from inlining them.) Their bodies are
// functions of their own, inlined into them: the same code, and floe.wasm
// 2 kB smaller compressed than with the bodies in place, one of the moves
// of compressed size that any change of the code makes (README, Sizes).
type Mutex struct {
	held bool
	// free, made by the first goroutine that waits, is closed by Unlock:
	// every waiter wakes and tries again (waiting is rare: a holder keeps
	// the thread until it blocks).
	free chan struct{}
}

// Lock locks m, waiting while another goroutine holds it.
//
//go:noinline
func (m *Mutex) Lock() { m.lock() }

func (m *Mutex) lock() {
	if !m.held {
		m.held = true
		return
	}
	m.lockSlow()
}

func (m *Mutex) lockSlow() {
	for m.held {
		if m.free == nil {
			m.free = make(chan struct{})
		}
		<-m.free
	}
	m.held = true
}

// Unlock unlocks m. Unlocking an unlocked Mutex panics, where sync.Mutex
// ends the program.
//
//go:noinline
func (m *Mutex) Unlock() { m.unlock() }

func (m *Mutex) unlock() {
	if !m.held || m.free != nil {
		m.unlockSlow()
		return
	}
	m.held = false
}

func (m *Mutex) unlockSlow() {
	if !m.held {
		panic("lock: unlock of unlocked mutex")
	}
	m.held = false
	close(m.free)
	m.free = nil
}
