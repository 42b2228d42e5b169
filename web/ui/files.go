//go:build js && wasm

package ui

import (
	"context"
	"fmt"

	"github.com/floehq/floe/playground"
	"honnef.co/go/js/dom/v2"
)

// filesView is the file panel: the workspace's files; one shown.
type filesView struct {
	a      *App
	list   elem
	viewer elem
	files  []playground.FileInfo
	open   string // the file shown
	body   string
	dirty  bool
}

func (f *filesView) init(a *App) {
	f.a, f.list, f.viewer = a, byID(a.doc, "files"), byID(a.doc, "file-view")
	f.list.AddEventListener("click", false, func(ev dom.Event) {
		b := wrap(ev.Underlying().Get("target").Call("closest", "[data-path]"))
		if b == nil {
			return
		}
		p := b.GetAttribute("data-path")
		a.post(func() { f.show(p) })
	})
}

func (f *filesView) refresh() {
	fs := f.a.env.FS
	if fs == nil {
		return
	}
	go func() {
		list, err := fs.List(context.Background())
		f.a.post(func() {
			if err != nil {
				f.a.note = "Could not list the workspace: " + err.Error()
				return
			}
			f.files, f.dirty = list, true
			if f.open != "" {
				f.show(f.open)
			}
		})
	}()
}

func (f *filesView) show(p string) {
	fs := f.a.env.FS
	go func() {
		body, err := fs.Read(context.Background(), p)
		f.a.post(func() {
			if err != nil {
				f.open, f.body = "", ""
			} else {
				f.open, f.body = p, body
			}
			f.dirty = true
		})
	}()
}

func (f *filesView) render() {
	if !f.dirty {
		return
	}
	f.dirty = false
	a := f.a
	if b := a.focusIn(f.list); b != nil { // the file's button has it again
		defer a.refocus(f.list, attrIs("data-path", b.GetAttribute("data-path")))
	}
	f.list.SetTextContent("")
	if len(f.files) == 0 {
		f.list.AppendChild(a.el("li", "empty", "The workspace is empty."))
	}
	for _, fi := range f.files {
		li := a.el("li", "", "")
		b := a.button("file ghost", "", "data-path", fi.Path)
		if fi.Path == f.open {
			b.SetAttribute("aria-current", "true")
		}
		b.AppendChild(a.el("span", "path", fi.Path))
		b.AppendChild(a.el("span", "size", fmt.Sprint(size(fi.Size))))
		li.AppendChild(b)
		f.list.AppendChild(li)
	}
	show(f.viewer, f.open != "")
	f.viewer.SetTextContent(f.body)
}
