//go:build js && wasm && floenode

package jsbridge

import (
	"syscall/js"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/errf"
)

// DirLockHeld returns the check the trace.FileStore of the { dir } store
// dir asks before each write (trace.FileStoreOptions.Held): whether this
// program still holds the session's lock file, which JavaScript holds
// (floe-node.mjs, through the port's lockHeld). Its error, wrapping
// trace.ErrLockLost, says that another process took it.
func (b *Bridge) DirLockHeld(dir string) func(id string) error {
	return func(id string) error {
		if b.port.Type() != js.TypeObject {
			return nil
		}
		if f := b.port.Get("lockHeld"); f.Type() == js.TypeFunction {
			if v := f.Invoke(dir, id); v.Type() == js.TypeString {
				return errf.Errorf("%w%s", trace.ErrLockLost, v.String())
			}
		}
		return nil
	}
}
