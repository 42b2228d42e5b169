package playground

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// ImportSession stores the files a person chose ([ImportFiles]) as a
// session with its subagents' child sessions ([trace.ImportTree]) and
// returns its id. A subagent's session alone (one of its parent's
// files chosen) is refused, storing nothing: it would be stored but never
// listed, since the list shows a child with its parent only. busy (nil:
// none) reports whether this page holds a session of an id the files
// hold (its run in flight, or its records still on their way to the
// store): such an import is refused, storing nothing (it took the id of a
// session whose first records were not stored yet, and the run's records
// then went into the imported session, or were refused).
func ImportSession(ctx context.Context, store trace.Store, files []trace.File, busy func(id string) bool) (string, error) {
	files, err := ImportFiles(files)
	if err != nil {
		return "", err
	}
	if busy != nil {
		for _, id := range trace.ImportIDs(files) {
			if busy(id) {
				return "", fmt.Errorf("session %s is busy: it runs in this page, or its records are still being stored: import it once its run has ended; nothing was imported", trace.QuoteID(id))
			}
		}
	}
	scratch := &trace.MemStore{}
	id, err := trace.ImportTree(ctx, scratch, files)
	if err != nil {
		return "", err
	}
	if data, err := scratch.ReadFile(ctx, id, 1); err == nil && trace.MetaSource(data) == omni.SourceSubagent {
		return "", fmt.Errorf("session %s is a subagent's, which the list shows with the session that ran it only: import it with that session's files (its own and its subagents', as exported together); nothing was imported", trace.QuoteID(id))
	}
	return trace.ImportTree(ctx, store, files)
}

// MaxImportBytes bounds the files of one import, each and together. The
// page reads them whole before it stores any: each as text in JavaScript,
// then its bytes in Go's WebAssembly memory, twice over while it is
// copied, and again as the import checks the session in a scratch store;
// a file of hundreds of MB ran the page out of memory. An export is read
// whole the same way. 128 MiB holds a long session's Trace with images
// (a prompt's eight images of 5 MiB are 53 MiB as data: URLs), and twice
// the largest record a Trace may hold (omni.MaxMessageBytes, 64 MiB).
const MaxImportBytes = 128 << 20

// ImportSize is a file chosen for an import, by its name and its size in
// bytes (a File's size, known before it is read).
type ImportSize struct {
	Name string
	Size float64
}

// CheckImportSizes says why the chosen files are not read for an import:
// one over [MaxImportBytes], named with its size, or all of them
// together; nil when they may be.
func CheckImportSizes(files []ImportSize) error {
	total := 0.0
	for _, f := range files {
		if f.Size > MaxImportBytes {
			return fmt.Errorf("%q is %.0f bytes (%s), over the %d bytes (128 MiB) an import reads: nothing was imported", f.Name, f.Size, mib(f.Size), MaxImportBytes)
		}
		total += f.Size
	}
	if total > MaxImportBytes {
		return fmt.Errorf("the %d files chosen are %.0f bytes (%s) together, over the %d bytes (128 MiB) an import reads: nothing was imported", len(files), total, mib(total), MaxImportBytes)
	}
	return nil
}

func mib(n float64) string { return fmt.Sprintf("%.1f MiB", n/(1<<20)) }

// ImportFiles prepares the files a person chose for an import
// ([trace.ImportTree]). A file saved again where its name is taken gets
// a copy's name: "X_001 (1).jsonl" (Chrome, Edge), "X_001(1).jsonl"
// (Firefox), "X_001-1.jsonl", "X_001 - Copy.jsonl" (Windows); such a
// name is read as the name it copies, and a file that then repeats
// another byte for byte (the same export chosen twice) is left out. Two
// different files of one name are refused, naming both. One file whose
// name is no trace file's is named by its session_meta (its name "").
func ImportFiles(files []trace.File) ([]trace.File, error) {
	if len(files) == 1 {
		f := files[0]
		if _, _, ok := trace.ParseFileName(baseName(f.Name)); !ok {
			f.Name = ""
		}
		return []trace.File{f}, nil
	}
	out := make([]trace.File, 0, len(files))
	chosen := make([]string, 0, len(files)) // the name each file of out was chosen under
	for _, f := range files {
		name, as := f.Name, f.Name
		if n, ok := copiedName(baseName(name)); ok {
			as = n
		}
		dup := -1
		for i := range out {
			if out[i].Name == as {
				dup = i
			}
		}
		switch {
		case dup < 0:
			out, chosen = append(out, trace.File{Name: as, Data: f.Data}), append(chosen, name)
		case !bytes.Equal(out[dup].Data, f.Data):
			return nil, fmt.Errorf("%q and %q are two different files named %q: choose one of them", chosen[dup], name, as)
		}
	}
	return out, nil
}

// copiedName returns the trace file name that name is a copy's name of.
func copiedName(name string) (string, bool) {
	if _, _, ok := trace.ParseFileName(name); ok {
		return "", false
	}
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return "", false
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, " - Copy"), " ")
	switch {
	case strings.HasSuffix(base, ")"):
		if i := strings.LastIndexByte(base, '('); i > 0 && digits(base[i+1:len(base)-1]) {
			base = strings.TrimSuffix(strings.TrimSuffix(base[:i], " "), " - Copy")
		}
	case strings.LastIndexByte(base, '-') > 0:
		if i := strings.LastIndexByte(base, '-'); digits(base[i+1:]) {
			base = base[:i]
		}
	}
	n := base + ".jsonl"
	_, _, ok = trace.ParseFileName(n)
	return n, ok
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func baseName(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }
