// Package lock provides the mutual exclusion lock of the engine's hot
// paths: sync.Mutex natively, and on WebAssembly a lock without atomic
// operations.
//
// Go on WebAssembly runs every goroutine on one thread and switches
// between them only where one blocks (there is no preemption at an
// arbitrary instruction), so a lock there needs no atomic operation: a
// flag read and written with no call in between cannot be interleaved.
// sync.Mutex pays for the general case there too: its Lock and Unlock
// are four calls deep each (sync, internal/sync, sync/atomic and the
// runtime's atomic, which is not inlined), about 4% of the engine's time
// on a long stream.
package lock
