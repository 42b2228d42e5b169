//go:build js && wasm

package ui

import (
	"fmt"
	"strings"
	"syscall/js"

	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/provider"
	"honnef.co/go/js/dom/v2"
)

// attachment is an image attached to the composer's next prompt.
type attachment struct {
	name string
	url  string // its data: URL; "" while the file is read
}

// attachView is the composer's attached images: chosen with the Attach
// image button, pasted into the prompt or dropped on the composer; shown
// as thumbnails, each with its remove button, until the prompt is sent.
type attachView struct {
	a      *App
	list   elem // the thumbnails
	hint   elem // says the images go as a text to a model that takes none
	button elem // Attach image
	input  elem // the hidden file input behind it
	atts   []*attachment
	dirty  bool
	focus  int    // after a removal: the remove button to focus (-1: none)
	note   string // the note the last attaching set, cleared by the next one
}

func (v *attachView) init(a *App) {
	v.a, v.focus = a, -1
	v.list, v.button, v.input = byID(a.doc, "attachments"), byID(a.doc, "attach"), byID(a.doc, "attach-file")
	v.hint = byID(a.doc, "attach-hint")
	v.input.SetAttribute("accept", strings.Join(playground.AttachTypes, ","))
	// The picker opens from the click itself: a browser opens it only
	// during the user's gesture.
	v.button.AddEventListener("click", false, func(dom.Event) { v.input.Call("click") })
	v.input.AddEventListener("change", false, func(dom.Event) {
		files := filesOf(v.input.Get("files"))
		v.input.Set("value", "") // the same file may be chosen again
		a.post(func() { v.add(files) })
	})
	wrap(a.prompt.Underlying()).AddEventListener("paste", false, func(ev dom.Event) {
		cd := ev.Underlying().Get("clipboardData")
		if cd.IsNull() || cd.IsUndefined() {
			return
		}
		files := filesOf(cd.Get("files"))
		if len(files) == 0 {
			return // text: the textarea takes it
		}
		ev.PreventDefault()
		a.post(func() { v.add(files) })
	})
	a.composer.AddEventListener("drop", false, func(ev dom.Event) {
		if !hasFiles(ev) {
			return
		}
		// The page's drop handler (sessionsView) takes the Trace files.
		_, images := splitTraceFiles(filesOf(ev.Underlying().Get("dataTransfer").Get("files")))
		if len(images) > 0 {
			a.post(func() { v.add(images) })
		}
	})
	v.list.AddEventListener("click", false, func(ev dom.Event) {
		b := wrap(ev.Underlying().Get("target").Call("closest", "button[data-index]"))
		if b == nil {
			return
		}
		var i int
		fmt.Sscan(b.GetAttribute("data-index"), &i)
		a.post(func() { v.remove(i) })
	})
}

// noVisionHint is said under the images attached when the session's model
// takes none.
const noVisionHint = "This session's model takes no images (Settings): they are stored with your message, and the model gets the text “" + provider.NoImage + "” in their place."

// hasFiles reports whether a drag event carries files.
func hasFiles(ev dom.Event) bool {
	dt := ev.Underlying().Get("dataTransfer")
	return !dt.IsNull() && !dt.IsUndefined() && dt.Get("types").Call("includes", "Files").Bool()
}

// splitTraceFiles splits dropped files into Trace files (.jsonl), to
// import, and the others.
func splitTraceFiles(files []js.Value) (traces, others []js.Value) {
	for _, f := range files {
		if strings.HasSuffix(strings.ToLower(f.Get("name").String()), ".jsonl") {
			traces = append(traces, f)
		} else {
			others = append(others, f)
		}
	}
	return traces, others
}

// filesOf copies a FileList.
func filesOf(list js.Value) []js.Value {
	if list.IsNull() || list.IsUndefined() {
		return nil
	}
	out := make([]js.Value, list.Length())
	for i := range out {
		out[i] = list.Index(i)
	}
	return out
}

// add attaches files, each read as a data: URL; the note says which were
// refused and why.
func (v *attachView) add(files []js.Value) {
	var why []string
	for _, f := range files {
		name := f.Get("name").String()
		if err := playground.CheckAttach(name, f.Get("type").String(), int64(f.Get("size").Float()), len(v.atts)); err != nil {
			why = append(why, err.Error()+".")
			continue
		}
		att := &attachment{name: name}
		v.atts = append(v.atts, att)
		v.read(f, att)
	}
	v.setNote(strings.Join(why, " "))
	v.dirty = true
}

// setNote shows note under the composer, in place of the last one
// attaching showed.
func (v *attachView) setNote(note string) {
	if note != "" || v.a.note == v.note {
		v.a.note = note
	}
	v.note = note
}

func (v *attachView) read(f js.Value, att *attachment) {
	r := js.Global().Get("FileReader").New()
	var onload, onerror js.Func
	release := func() { onload.Release(); onerror.Release() }
	onload = js.FuncOf(func(js.Value, []js.Value) any {
		url := r.Get("result").String()
		release()
		v.a.post(func() {
			att.url = url
			v.dirty = true
			v.a.announce("Attached " + att.name)
		})
		return nil
	})
	onerror = js.FuncOf(func(js.Value, []js.Value) any {
		why := "the browser could not read it"
		if e := r.Get("error"); !e.IsNull() && !e.IsUndefined() && e.Get("message").String() != "" {
			why += " (" + e.Get("message").String() + ")"
		}
		release()
		v.a.post(func() {
			v.drop(att)
			v.setNote(att.name + " not attached: " + why + ".")
		})
		return nil
	})
	r.Set("onload", onload)
	r.Set("onerror", onerror)
	r.Call("readAsDataURL", f)
}

// drop takes att out of the list.
func (v *attachView) drop(att *attachment) {
	for i, x := range v.atts {
		if x == att {
			v.atts = append(v.atts[:i], v.atts[i+1:]...)
			v.dirty = true
			return
		}
	}
}

// remove takes out the image at i; the focus goes to the remove button
// that takes its place, else to the one before, else to Attach image.
func (v *attachView) remove(i int) {
	if i < 0 || i >= len(v.atts) {
		return
	}
	name := v.atts[i].name
	v.drop(v.atts[i])
	v.focus = min(i, len(v.atts)-1)
	if v.focus < 0 {
		v.button.Focus()
	}
	v.a.announce("Removed " + name)
}

// images returns the data: URLs attached, and whether one is still read.
func (v *attachView) images() (urls []string, reading bool) {
	for _, att := range v.atts {
		if att.url == "" {
			reading = true
		}
		urls = append(urls, att.url)
	}
	return urls, reading
}

// take empties the list and returns what it held (sent as steering,
// which may come back: restore).
func (v *attachView) take() []*attachment {
	atts := v.atts
	v.clear()
	return atts
}

// restore attaches atts again (steering the run did not deliver, a remote
// task the server did not take) when no image is attached since; false
// when some is. A prompt takes at most MaxAttachImages of them.
func (v *attachView) restore(atts []*attachment) bool {
	if len(v.atts) > 0 {
		return false
	}
	v.atts, v.dirty = atts[:min(len(atts), playground.MaxAttachImages)], true
	return true
}

// clear empties the list (the prompt was sent).
func (v *attachView) clear() {
	if len(v.atts) > 0 {
		v.atts, v.dirty = nil, true
	}
	v.note = ""
}

func (v *attachView) render() {
	if !v.dirty {
		return
	}
	v.dirty = false
	v.list.SetTextContent("")
	for i, att := range v.atts {
		li := v.a.el("li", "attachment", "")
		if att.url == "" {
			li.AppendChild(v.a.el("span", "reading", "reading "+att.name+"…"))
		} else {
			img := v.a.el("img", "thumb", "")
			img.SetAttribute("alt", fmt.Sprintf("Attached image %d: %s", i+1, att.name))
			img.SetAttribute("src", att.url)
			li.AppendChild(img)
		}
		b := v.a.el("button", "btn remove", "×")
		b.SetAttribute("type", "button")
		b.SetAttribute("data-index", fmt.Sprint(i))
		b.SetAttribute("aria-label", fmt.Sprintf("Remove image %d: %s", i+1, att.name))
		li.AppendChild(b)
		v.list.AppendChild(li)
	}
	show(v.list, len(v.atts) > 0)
	// Images go to a model without vision as a text (the adapters'
	// NoImages): said before they are sent, and kept in the Trace for
	// the model of a later run.
	noVision := len(v.atts) > 0 && v.a.noImages
	if noVision {
		v.hint.SetTextContent(noVisionHint)
	}
	show(v.hint, noVision)
	if v.focus >= 0 {
		if b := wrap(v.list.Call("querySelector", fmt.Sprintf(`button[data-index="%d"]`, v.focus))); b != nil {
			b.Focus()
		}
		v.focus = -1
	}
}
