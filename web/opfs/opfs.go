//go:build js && wasm

// Package opfs is a playground.FS over the Origin Private File System: the
// files of one directory of navigator.storage.getDirectory(), with "/" in
// a path as subdirectories. Calls block their goroutine until the browser
// answers; never call them from a js.FuncOf body.
package opfs

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"syscall/js"

	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/web/jsx"
)

// FS is the workspace directory name under the OPFS root.
type FS struct {
	Dir string

	mu   sync.Mutex // one operation at a time: writes are read-modify-write
	root js.Value
}

// ErrUnavailable: the browser offers no Origin Private File System.
var ErrUnavailable = errors.New("opfs: the Origin Private File System is not available in this browser")

// ErrNoWrites: the browser's Origin Private File System takes no write
// from a page (Safari before 26 writes only from a Worker, through
// createSyncAccessHandle).
var ErrNoWrites = errors.New("opfs: this browser's Origin Private File System takes no write from a page (FileSystemFileHandle.createWritable is missing)")

// Open returns the FS of dir, creating the directory; created reports
// whether it did not exist before.
func Open(ctx context.Context, dir string) (*FS, bool, error) {
	st := js.Global().Get("navigator").Get("storage")
	if !st.Truthy() || st.Get("getDirectory").Type() != js.TypeFunction {
		return nil, false, ErrUnavailable
	}
	if h := js.Global().Get("FileSystemFileHandle"); h.Type() != js.TypeFunction || h.Get("prototype").Get("createWritable").Type() != js.TypeFunction {
		return nil, false, ErrNoWrites
	}
	top, err := jsx.AwaitCall(ctx, st, "getDirectory")
	if err != nil {
		return nil, false, err
	}
	created := false
	d, err := jsx.AwaitCall(ctx, top, "getDirectoryHandle", dir)
	if err != nil {
		created = true
		if d, err = jsx.AwaitCall(ctx, top, "getDirectoryHandle", dir, map[string]any{"create": true}); err != nil {
			return nil, false, err
		}
	}
	return &FS{Dir: dir, root: d}, created, nil
}

func notFound(err error, p string) error {
	switch {
	case err == nil:
	case strings.HasPrefix(err.Error(), "NotFoundError"):
		return errors.New("no such file: \"" + p + "\"")
	case strings.HasPrefix(err.Error(), "TypeMismatchError"):
		// The browser's words ("The path supplied exists, but was not an
		// entry of requested type") name neither the path nor its kind.
		return errors.New("not a file: \"" + p + "\" is a directory")
	}
	return err
}

// notDir is notFound for a directory of p's path, seg.
func notDir(err error, p, seg string) error {
	if err != nil && strings.HasPrefix(err.Error(), "TypeMismatchError") {
		return errors.New("no such file: \"" + p + "\" (\"" + seg + "\" is a file, not a directory)")
	}
	return notFound(err, p)
}

// dir returns the handle of the directory holding p and p's base name.
func (f *FS) dir(ctx context.Context, p string, create bool) (js.Value, string, error) {
	dirs, name, err := f.dirs(ctx, p, create)
	if err != nil {
		return js.Undefined(), "", err
	}
	return dirs[len(dirs)-1], name, nil
}

// dirs returns the handles of the directories of p's path, the root
// first, and p's base name.
func (f *FS) dirs(ctx context.Context, p string, create bool) ([]js.Value, string, error) {
	segs := strings.Split(p, "/")
	dirs := []js.Value{f.root}
	for _, s := range segs[:len(segs)-1] {
		d, err := jsx.AwaitCall(ctx, dirs[len(dirs)-1], "getDirectoryHandle", s, map[string]any{"create": create})
		if err != nil {
			return nil, "", notDir(err, p, s)
		}
		dirs = append(dirs, d)
	}
	return dirs, segs[len(segs)-1], nil
}

// List implements playground.FS.
func (f *FS) List(ctx context.Context) ([]playground.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []playground.FileInfo
	var walk func(d js.Value, prefix string) error
	walk = func(d js.Value, prefix string) error {
		it, err := jsx.Call(d, "values")
		if err != nil {
			return err
		}
		for {
			r, err := jsx.AwaitCall(ctx, it, "next")
			if err != nil {
				return err
			}
			if r.Get("done").Bool() {
				return nil
			}
			h := r.Get("value")
			name := prefix + h.Get("name").String()
			if h.Get("kind").String() == "directory" {
				if err := walk(h, name+"/"); err != nil {
					return err
				}
				continue
			}
			file, err := jsx.AwaitCall(ctx, h, "getFile")
			if err != nil {
				return err
			}
			out = append(out, playground.FileInfo{Path: name, Size: file.Get("size").Int()})
		}
	}
	if err := walk(f.root, ""); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Read implements playground.FS.
func (f *FS) Read(ctx context.Context, p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, name, err := f.dir(ctx, p, false)
	if err != nil {
		return "", err
	}
	h, err := jsx.AwaitCall(ctx, d, "getFileHandle", name)
	if err != nil {
		return "", notFound(err, p)
	}
	file, err := jsx.AwaitCall(ctx, h, "getFile")
	if err != nil {
		return "", err
	}
	t, err := jsx.AwaitCall(ctx, file, "text")
	if err != nil {
		return "", err
	}
	return t.String(), nil
}

// Write implements playground.FS.
func (f *FS) Write(ctx context.Context, p, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, name, err := f.dir(ctx, p, true)
	if err != nil {
		return err
	}
	h, err := jsx.AwaitCall(ctx, d, "getFileHandle", name, map[string]any{"create": true})
	if err != nil && strings.HasPrefix(err.Error(), "TypeMismatchError") {
		// An empty directory of that name (one a delete before Delete
		// removed emptied directories left behind) gives way to the
		// file, as in a MemFS, where it does not exist; removeEntry
		// refuses a directory that holds anything.
		if _, rerr := jsx.AwaitCall(ctx, d, "removeEntry", name); rerr == nil {
			h, err = jsx.AwaitCall(ctx, d, "getFileHandle", name, map[string]any{"create": true})
		}
	}
	if err != nil {
		return notFound(err, p)
	}
	opening, err := jsx.Call(h, "createWritable")
	if err != nil {
		return err
	}
	w, err := jsx.Await(ctx, opening)
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled while the file opened: the writable that comes
			// later is aborted, not left open (its swap file and the
			// file's lock held until the page goes away).
			go func() {
				bg := context.WithoutCancel(ctx)
				if w, err := jsx.Await(bg, opening); err == nil {
					jsx.AwaitCall(bg, w, "abort")
				}
			}()
		}
		return err
	}
	if _, err := jsx.AwaitCall(ctx, w, "write", content); err != nil {
		jsx.AwaitCall(context.WithoutCancel(ctx), w, "abort")
		return err
	}
	_, err = jsx.AwaitCall(ctx, w, "close")
	return err
}

// Delete implements playground.FS. The directories of p's path that the
// delete leaves empty are removed too: a path is then free for a file, as
// in a MemFS (list_files never showed them, and a write_file of a left
// directory's path failed, "not a file").
func (f *FS) Delete(ctx context.Context, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dirs, name, err := f.dirs(ctx, p, false)
	if err != nil {
		return err
	}
	d := dirs[len(dirs)-1]
	if _, err := jsx.AwaitCall(ctx, d, "getFileHandle", name); err != nil {
		return notFound(err, p)
	}
	if _, err := jsx.AwaitCall(ctx, d, "removeEntry", name); err != nil {
		return notFound(err, p)
	}
	// removeEntry refuses a directory that holds anything
	// (InvalidModificationError), which ends the walk up; the file is
	// deleted either way.
	segs := strings.Split(p, "/")
	for i := len(dirs) - 1; i > 0; i-- {
		if _, err := jsx.AwaitCall(ctx, dirs[i-1], "removeEntry", segs[i-1]); err != nil {
			break
		}
	}
	return nil
}
