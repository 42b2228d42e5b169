//go:build !wasm

package lock

import "sync"

// Mutex is sync.Mutex.
type Mutex = sync.Mutex
