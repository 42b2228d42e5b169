//go:build js && wasm

package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/web/jsx"
	"github.com/norunners/vert"
	"honnef.co/go/js/dom/v2"
)

// sessionsView is the list of stored sessions: open (resume), rename,
// export, delete; and the import button.
type sessionsView struct {
	a        *App
	list     elem
	items    []trace.Summary
	titles   map[string]string              // the user's titles, kept in local storage
	imported map[string]playground.Imported // imported sessions' last records' times, kept in local storage
	stored   playground.Sessions            // lists the sessions without subagents' children
	renaming string                         // the session whose title is being edited
	deleting string                         // the session whose Delete waits for confirmation
	listed   string                         // the session whose first records were awaited for the list
	reads    int                            // list reads started; an older read's answer is dropped
	dirty    bool
}

// noteStopFirst is the note for opening a session while a run is in
// flight; the run's end clears it.
const noteStopFirst = "Stop the run in flight before opening another session."

// noteDrop is the note for files dropped outside the composer that are
// no Trace files.
const noteDrop = "Drop images on the composer to attach them, a session's .jsonl files anywhere to import it."

func (s *sessionsView) init(a *App) {
	s.a, s.list = a, byID(a.doc, "sessions")
	s.titles = map[string]string{}
	if v := parseJSON(localGet(keyTitles)); v.Type() == js.TypeObject {
		if err := vert.ValueOf(v).AssignTo(&s.titles); err != nil {
			consoleWarn("stored session titles: " + err.Error())
		}
	}
	s.imported = map[string]playground.Imported{}
	if v := parseJSON(localGet(keyImported)); v.Type() == js.TypeObject {
		if err := vert.ValueOf(v).AssignTo(&s.imported); err != nil {
			consoleWarn("stored import times: " + err.Error())
		}
	}
	s.list.AddEventListener("click", false, func(ev dom.Event) {
		t := wrap(ev.Underlying().Get("target"))
		a.post(func() { s.click(t) })
	})
	s.list.AddEventListener("keydown", false, func(ev dom.Event) {
		k := ev.Underlying()
		t := wrap(k.Get("target"))
		if t == nil || !t.Class().Contains("rename-input") || composing(k) {
			return
		}
		switch k.Get("key").String() {
		case "Enter":
			ev.PreventDefault()
			title := t.Get("value").String()
			a.post(func() { s.rename(title) })
		case "Escape":
			ev.PreventDefault()
			a.post(func() { s.renaming, s.dirty = "", true })
		}
	})
	// Files dropped anywhere on the page: Trace files are imported, images
	// are the composer's (attachView); the browser would otherwise open a
	// file dropped elsewhere in place of the page.
	doc := js.Global().Get("document")
	wrap(doc).AddEventListener("dragover", false, func(ev dom.Event) {
		if hasFiles(ev) {
			ev.PreventDefault()
			ev.Underlying().Get("dataTransfer").Set("dropEffect", "copy")
		}
	})
	wrap(doc).AddEventListener("drop", false, func(ev dom.Event) {
		if !hasFiles(ev) {
			return
		}
		ev.PreventDefault()
		traces, others := splitTraceFiles(filesOf(ev.Underlying().Get("dataTransfer").Get("files")))
		if len(traces) > 0 {
			s.a.spawn(func() { s.importFiles(traces) })
		} else if t := ev.Underlying().Get("target"); len(others) > 0 && (t.Get("closest").Type() != js.TypeFunction || t.Call("closest", "#composer").IsNull()) {
			a.post(func() { a.note = noteDrop })
		}
	})
	in := byID(a.doc, "import")
	in.AddEventListener("change", false, func(dom.Event) {
		files := in.Get("files")
		list := make([]js.Value, files.Length())
		for i := range list {
			list[i] = files.Index(i)
		}
		in.Set("value", "")
		s.a.spawn(func() { s.importFiles(list) })
	})
}

func (s *sessionsView) set(list []trace.Summary, err error) {
	if err != nil {
		s.a.note = "Could not list the stored sessions: " + err.Error()
	} else {
		// An imported session's last activity is its last record's time
		// until it is written again (playground.DateImported).
		var kept map[string]playground.Imported
		list, kept = playground.DateImported(list, s.imported)
		if len(kept) != len(s.imported) {
			s.imported = kept
			s.saveImported()
		}
	}
	s.items, s.dirty = list, true
}

func (s *sessionsView) saveImported() {
	if err := localSet(keyImported, stringifyJSON(vert.ValueOf(s.imported).JSValue())); err != nil {
		consoleWarn("imported sessions' times not kept: " + err.Error())
	}
}

// refresh reads the list again. Reads may answer out of order: only the
// latest one's answer is shown.
func (s *sessionsView) refresh() {
	store := s.a.env.Store
	if store == nil {
		return
	}
	s.reads++
	n := s.reads
	go func() {
		list, err := s.stored.List(context.Background(), store)
		s.a.post(func() {
			if n == s.reads {
				s.set(list, err)
			}
		})
	}()
}

// listCurrent reads the list again once the records the session shown
// has queued are stored, when the list lacks that session: a new
// session's row appears during its first run.
func (s *sessionsView) listCurrent() {
	a := s.a
	bat, id := a.bat, a.sessID
	if bat == nil || s.listed == id {
		return
	}
	for _, it := range s.items {
		if it.ID == id {
			return
		}
	}
	s.listed = id
	go func() {
		bat.Flush(context.Background())
		a.post(s.refresh)
	}()
}

func (s *sessionsView) title(it trace.Summary) string {
	if t := s.titles[it.ID]; t != "" {
		return t
	}
	if p := strings.TrimSpace(it.FirstPrompt); p != "" {
		return cut(strings.Join(strings.Fields(p), " "), 80)
	}
	return "(no prompt yet)"
}

func (s *sessionsView) render() {
	if !s.dirty {
		return
	}
	s.dirty = false
	a := s.a
	// The title being edited keeps its field, with what was typed: the
	// list is redrawn when a run ends or a session is stored, and a new
	// field would bring the old title back under the user's caret.
	var editing elem
	focused := false // the field had the focus: clearing the list takes it away
	if s.renaming != "" {
		editing = wrap(a.doc.Call("getElementById", "rename-"+s.renaming))
		focused = editing != nil && a.doc.Get("activeElement").Equal(editing.Underlying())
	}
	// A button of the list that has the focus is drawn anew: the focus
	// goes to its new self (Delete's to Confirm delete and back, a closed
	// Rename field's to Rename), else to the row that took the place of
	// its row (deleted), else to the prompt; never to the page's body.
	var back []string
	if f := a.focusIn(s.list); f != nil && !focused {
		do := f.GetAttribute("data-do")
		if f.Class().Contains("rename-input") {
			do = "rename"
		}
		other := map[string]string{"ask-delete": "delete", "delete": "ask-delete"}[do]
		if li := wrap(f.Call("closest", "li")); li != nil {
			row := attrIs("data-session-id", li.GetAttribute("data-session-id")) + " "
			n := 1
			for p := li.Get("previousElementSibling"); !p.IsNull(); p = p.Get("previousElementSibling") {
				n++
			}
			back = []string{row + attrIs("data-do", do), row + attrIs("data-do", other),
				fmt.Sprintf("li:nth-child(%d) [data-do=open]", n), "li:last-child [data-do=open]"}
		}
	}
	s.list.SetTextContent("")
	if len(s.items) == 0 {
		s.list.AppendChild(a.el("li", "empty", "No stored session yet: send a prompt."))
	}
	for _, it := range s.items {
		li := a.el("li", "session", "")
		li.SetAttribute("data-session-id", it.ID)
		if it.ID == a.sessID {
			li.SetAttribute("aria-current", "true")
		}
		if s.renaming == it.ID {
			lbl := a.el("label", "visually-hidden", "New title")
			lbl.SetAttribute("for", "rename-"+it.ID)
			in := editing
			if in == nil {
				in = a.el("input", "rename-input", "")
				in.SetAttribute("dir", "auto")
				in.SetAttribute("id", "rename-"+it.ID)
				in.Set("value", s.title(it))
				focused = true // Rename was just clicked
			}
			li.AppendChild(lbl)
			li.AppendChild(in)
			s.list.AppendChild(li)
			if focused {
				// Given back only to a field that had it (or a new one):
				// the page never takes the focus from where the user went
				// meanwhile, the composer say.
				in.Focus()
			}
			continue
		}
		open := a.button("session-open", "", "data-do", "open")
		title := a.el("span", "title", s.title(it))
		title.SetAttribute("dir", "auto")
		open.AppendChild(title)
		open.AppendChild(a.el("span", "when", fmt.Sprintf("%s · %s · %d file(s)", it.LastActivity.Local().Format("Jan 2 15:04"), size(int(it.Size)), it.Files)))
		li.AppendChild(open)
		acts := a.el("span", "acts", "")
		acts.AppendChild(a.button("small ghost", "Rename", "data-do", "rename"))
		acts.AppendChild(a.button("small ghost", "Export", "data-do", "export"))
		if s.deleting == it.ID {
			acts.AppendChild(a.button("small danger", "Confirm delete", "data-do", "delete"))
		} else {
			acts.AppendChild(a.button("small ghost", "Delete", "data-do", "ask-delete"))
		}
		li.AppendChild(acts)
		s.list.AppendChild(li)
	}
	if back != nil && !focused {
		a.refocus(s.list, back...)
	}
}

func (s *sessionsView) click(t elem) {
	if t == nil {
		return
	}
	b := wrap(t.Call("closest", "[data-do]"))
	li := wrap(t.Call("closest", "[data-session-id]"))
	if b == nil || li == nil {
		return
	}
	id := li.GetAttribute("data-session-id")
	a := s.a
	switch b.GetAttribute("data-do") {
	case "open":
		if a.running {
			a.note = noteStopFirst
			return
		}
		if id != a.sessID {
			a.resume(id)
		}
		a.drawer = ""
	case "rename":
		s.renaming = id
	case "export":
		// Read through the Batcher the session's records go through: it
		// stores what it has queued first (trace.Batcher.Files), so that
		// the export holds every record made until now, of a run in
		// flight or of the session shown before.
		store, waits := a.storeOf(id)
		running := a.running && id == a.sessID && !a.isRemote()
		if running {
			a.note = "Exporting " + id + ": storing the records its run has made until now first…"
		} else if waits {
			a.note = "Exporting " + id + ": storing its last records first…"
		}
		a.spawn(func() { s.export(id, store, running) })
	case "ask-delete":
		s.deleting = id
	case "delete":
		s.deleting = ""
		// Through the Batcher the session's records go through, which
		// writes what it holds first.
		store, _ := a.storeOf(id)
		r := (*playground.Runner)(nil)
		if id == a.sessID && a.runner != nil {
			// The session shown: its run (if any) is stopped and ended
			// before the delete.
			r = a.runner
			if a.running {
				a.stop = true
			}
		}
		a.spawn(func() { s.delete(id, store, r) })
	}
	s.dirty = true
}

func (s *sessionsView) rename(title string) {
	id := s.renaming
	s.renaming, s.dirty = "", true
	if id == "" {
		return
	}
	if t := strings.TrimSpace(title); t != "" {
		s.titles[id] = cut(t, 200)
	} else {
		delete(s.titles, id)
	}
	if err := s.saveTitles(); err != nil {
		s.a.note = "Renamed, but the title is not kept after a reload (" + err.Error() + ")."
	}
}

// saveTitles keeps the titles in local storage; the error says why the
// browser refused (its local storage full): the page keeps them until a
// reload.
func (s *sessionsView) saveTitles() error {
	return localSet(keyTitles, stringifyJSON(vert.ValueOf(s.titles).JSValue()))
}

// delete deletes the stored session id; r, when it drives that session,
// is closed first (playground.DeleteSession). The run's end is posted
// before this answer, so the page is idle again when it shows a new
// session.
func (s *sessionsView) delete(id string, store trace.Store, r *playground.Runner) {
	a := s.a
	err := playground.DeleteSession(context.Background(), store, id, r)
	a.post(func() {
		if err != nil {
			a.note = "Could not delete the session: " + err.Error()
			return
		}
		delete(s.titles, id)
		if err := s.saveTitles(); err != nil {
			consoleWarn("session titles not kept: " + err.Error())
		}
		if _, ok := s.imported[id]; ok {
			delete(s.imported, id)
			s.saveImported()
		}
		note := "Deleted " + id + "."
		if id == a.sessID && !a.running && !a.isRemote() {
			a.newSession(note)
		} else {
			a.note = note
		}
		s.refresh()
	})
}

// export downloads the session's Trace files and its subagents' child
// sessions' (trace.ExportTree), byte for byte, read from store; running
// says the session's run is in flight (the export holds its records until
// now).
func (s *sessionsView) export(id string, store trace.Store, running bool) {
	a := s.a
	files, err := trace.ExportTree(context.Background(), store, id, time.Local)
	a.post(func() {
		if err != nil {
			a.note = "Could not export the session: " + err.Error()
			return
		}
		for _, f := range files {
			download(f.Name[strings.LastIndexByte(f.Name, '/')+1:], "application/x-ndjson", f.Data)
		}
		a.note = fmt.Sprintf("Exported %s (%d file(s)).", id, len(files))
		if running {
			a.note = fmt.Sprintf("Exported %s (%d file(s)) during its run: every record until now; export again once the run ends for the rest.", id, len(files))
		}
	})
}

// importFiles stores JSONL files chosen by the user as one session, with
// its subagents' child sessions when they are among the files
// (trace.ImportTree).
func (s *sessionsView) importFiles(list []js.Value) {
	a := s.a
	ctx := context.Background()
	sizes := make([]playground.ImportSize, len(list))
	for i, f := range list {
		sizes[i] = playground.ImportSize{Name: f.Get("name").String(), Size: f.Get("size").Float()}
	}
	if err := playground.CheckImportSizes(sizes); err != nil {
		a.post(func() { a.note = "Import refused: " + err.Error() })
		return
	}
	files := make([]trace.File, 0, len(list))
	for _, f := range list {
		t, err := jsx.AwaitCall(ctx, f, "text")
		if err != nil {
			a.post(func() { a.note = "Could not read the file: " + err.Error() })
			return
		}
		files = append(files, trace.File{Name: f.Get("name").String(), Data: []byte(t.String())})
	}
	// The sessions this page holds whose records are not all stored (the
	// session shown while it runs, and those shown before whose records
	// are still on their way), read on the page's goroutine.
	held := make(chan map[string]bool, 1)
	a.post(func() {
		m := map[string]bool{}
		if _, waits := a.storeOf(a.sessID); waits && !a.isRemote() {
			m[a.sessID] = true
		}
		for id := range a.behind {
			m[id] = true
		}
		held <- m
	})
	busy := <-held
	id, err := playground.ImportSession(ctx, a.env.Store, files, func(id string) bool { return busy[id] })
	var last time.Time
	dated := false
	if err == nil {
		last, dated = playground.LastRecordTime(ctx, a.env.Store, id)
	}
	stored := time.Now()
	a.post(func() {
		if err != nil {
			a.note = "Import refused: " + err.Error()
			return
		}
		if dated {
			s.imported[id] = playground.Imported{Last: last.UnixMilli(), Stored: stored.UnixMilli()}
			s.saveImported()
		}
		a.note = "Imported " + id + "."
		s.refresh()
	})
}

// download saves data, of media type mime, as a file named name.
func download(name, mime string, data []byte) {
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	blob := js.Global().Get("Blob").New([]any{arr}, map[string]any{"type": mime})
	url := js.Global().Get("URL").Call("createObjectURL", blob)
	doc := js.Global().Get("document")
	link := doc.Call("createElement", "a")
	link.Set("href", url)
	link.Set("download", name)
	doc.Get("body").Call("append", link)
	link.Call("click")
	link.Call("remove")
	js.Global().Call("setTimeout", js.FuncOf(func(this js.Value, args []js.Value) any {
		js.Global().Get("URL").Call("revokeObjectURL", url)
		return nil
	}), 10000)
}

// resume opens the stored session id (ENGINE.md §17): the engine starts
// from the replayed Trace and continues its file; the transcript shows the
// stored records.
// An open another open or a session shown meanwhile (New session, say)
// made stale is dropped: the reads of a long Trace outlasted the next
// choice, and the session opened first replaced the one chosen last.
func (a *App) resume(id string) {
	a.note = "Opening " + id + "…"
	a.opens++
	open, gen := a.opens, a.gen
	prev, _ := a.storeOf(id)
	a.spawn(func() {
		ctx := context.Background()
		if b, ok := prev.(*trace.Batcher); ok {
			b.Flush(ctx) // the records of its last run, when it was shown before
		}
		bat := a.batcher(false)
		res, err := trace.Resume(ctx, bat, id, time.Now)
		if err == nil {
			err = bat.Flush(ctx)
		}
		var recs []omni.Message
		var left error // a subagent's session that did not read
		if err == nil {
			recs, err = trace.History(ctx, a.env.Store, id) // with its subagents' records
			if err != nil && recs != nil {
				left, err = err, nil
			}
		}
		a.post(func() {
			if a.opens != open || a.gen != gen {
				return
			}
			if err != nil {
				note := "Could not open " + id + ": " + err.Error()
				if a.runner == nil && !a.isRemote() {
					// Nothing is shown yet (the page is loading): never
					// leave it waiting on a session it cannot open.
					a.newSession(note + " A new session was started; the stored one can still be exported or deleted.")
					return
				}
				a.note = note
				return
			}
			if a.running {
				a.note = "A run started meanwhile; open the session again when it ends."
				return
			}
			tr := &playground.Transcript{} // no clock: stored tools show no timer
			for _, r := range recs {
				tr.ApplyRecord(r)
			}
			tr.Interrupt()
			tr.Now = time.Now
			a.gen++
			o, warn := a.sessionOptions(a.gen, res.Snapshot.SessionTokens)
			meta := playground.ResumeMeta(res.Meta, o.LLM != nil)
			o.Meta, o.Resume, o.Trace = &meta, &res.Snapshot, res.Writer
			o.CallIDs = playground.StoredCallIDs(recs)
			o.SubagentTrace = subagentTrace(bat)
			notice := fmt.Sprintf("Resumed from storage: %d records.", len(recs))
			if n := len(res.Snapshot.CarryOver); n > 0 {
				how := "was cut off"
				if r, ok := playground.LastAbort(recs); ok {
					how = "ended with an abort (" + r + ")"
					if r == engine.ReasonUser {
						how = "was stopped"
					}
				}
				notice += fmt.Sprintf(" The last task %s; %d message(s) carry over to the next prompt.", how, n)
			}
			if left != nil {
				warn = joinNotes(warn, left.Error())
			}
			if n := playground.CountImages(recs); n > 0 && a.noImages {
				warn = joinNotes(warn, fmt.Sprintf("Its model takes no images (Settings): the %d image(s) of this session go to it as a text; a model that takes them gets them again.", n))
			}
			a.attach(o, bat, tr, notice, joinNotes(a.modelChange(&res.Meta.Payload, o), warn))
		})
	})
}

// traceView is the trace viewer: the stored records of the session shown.
type traceView struct {
	a       *App
	list    elem
	records []omni.Message
	raw     []string
	open    map[int]bool
	dirty   bool
}

const maxTraceRows = 2000

func (t *traceView) init(a *App) {
	t.a, t.list, t.open = a, byID(a.doc, "trace"), map[int]bool{}
	t.list.AddEventListener("click", false, func(ev dom.Event) {
		b := wrap(ev.Underlying().Get("target").Call("closest", "button[data-n]"))
		if b == nil {
			return
		}
		n := b.GetAttribute("data-n")
		a.post(func() {
			i, _ := strconv.Atoi(n)
			i--
			t.open[i] = !t.open[i]
			t.dirty = true
		})
	})
}

func (t *traceView) reset() { t.records, t.raw, t.open, t.dirty = nil, nil, map[int]bool{}, true }

func (t *traceView) refresh() {
	a := t.a
	store, id := a.env.Store, a.sessID
	if store == nil || id == "" {
		return
	}
	go func() {
		recs, err := trace.Records(context.Background(), store, id)
		a.post(func() {
			if id != a.sessID {
				return
			}
			if err != nil && !strings.Contains(err.Error(), "not found") {
				a.note = "Could not read the Trace: " + err.Error()
			}
			t.records, t.raw, t.dirty = recs, nil, true
			for _, r := range recs {
				b, _ := r.MarshalJSON()
				t.raw = append(t.raw, string(b))
			}
		})
	}()
}

func (t *traceView) render() {
	if !t.dirty || t.a.tab != "trace" {
		return
	}
	t.dirty = false
	a := t.a
	var back string // the row that had the focus has it again
	if b := a.focusIn(t.list); b != nil && b.Call("matches", "button[data-n]").Bool() {
		back = attrIs("data-n", b.GetAttribute("data-n"))
	}
	if back != "" {
		defer a.refocus(t.list, back)
	}
	t.list.SetTextContent("")
	if len(t.records) == 0 {
		t.list.AppendChild(a.el("li", "empty", "Nothing stored yet."))
		return
	}
	from := max(0, len(t.records)-maxTraceRows)
	for i := from; i < len(t.records); i++ {
		li := a.el("li", "", "")
		b := a.rowButton("data-n", i+1, t.records[i], detail(t.records[i]))
		li.AppendChild(b)
		if t.open[i] {
			b.SetAttribute("aria-expanded", "true")
			li.AppendChild(a.el("pre", "json", t.raw[i]))
		}
		t.list.AppendChild(li)
	}
}
