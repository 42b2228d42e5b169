//go:build js && wasm

package ui

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"honnef.co/go/js/dom/v2"
)

// Page states, shown in the header and in body[data-state] (tests wait on it).
const (
	stateIdle     = "idle"
	stateRunning  = "running"
	stateApproval = "approval"
	stateStopping = "stopping"
)

// App is the playground page. Create it with [New] and start it with
// [App.Run]; all its fields belong to the loop goroutine.
type App struct {
	doc        js.Value // the document
	loop       playground.Loop
	newSession func() (*engine.Session, error)

	runner  *playground.Runner
	tr      *playground.Transcript
	gen     int // session generation: output of an older session is dropped
	running bool
	stop    bool // Stop was pressed for the run in flight

	views   map[int]*itemView
	dirty   []*playground.Item
	isDirty map[int]bool
	log     *streamLog

	pending map[string]func(string) // approval answers by tool_call_id
	steers  []string                // steering queued, not yet delivered
	note    string                  // one-line note under the composer

	composer, body, transcript, intro, send, stopBtn, reset elem
	steerForm, steerQueue, noteEl, banner                   elem
	statePill, sessionID, tokens                            elem
	prompt                                                  *dom.HTMLTextAreaElement
	steerInput                                              *dom.HTMLInputElement
}

// New binds the page skeleton of doc; newSession makes the engine session
// for the page and for "New session".
func New(doc js.Value, newSession func() (*engine.Session, error)) *App {
	a := &App{doc: doc, newSession: newSession, views: map[int]*itemView{}, isDirty: map[int]bool{}, pending: map[string]func(string){}}
	a.body = wrap(doc.Get("body"))
	for _, b := range []struct {
		dst *elem
		id  string
	}{
		{&a.composer, "composer"}, {&a.transcript, "transcript"}, {&a.intro, "intro"}, {&a.send, "send"},
		{&a.stopBtn, "stop"}, {&a.reset, "reset"}, {&a.steerForm, "steer-form"},
		{&a.steerQueue, "steer-queue"}, {&a.noteEl, "note"}, {&a.banner, "error"}, {&a.statePill, "state"},
		{&a.sessionID, "session-id"}, {&a.tokens, "tokens"},
	} {
		*b.dst = byID(doc, b.id)
	}
	a.prompt = &dom.HTMLTextAreaElement{BasicHTMLElement: byID(doc, "prompt")}
	a.steerInput = &dom.HTMLInputElement{BasicHTMLElement: byID(doc, "steer")}
	a.log = newStreamLog(a, byID(doc, "stream"), byID(doc, "stream-count"))
	return a
}

// Run creates the first session, wires the controls and runs the loop until
// ctx is done.
func (a *App) Run(ctx context.Context) {
	a.post(a.resetSession)
	a.listen()
	a.loop.Run(ctx, a.render)
}

// post queues f on the loop; a panic in f is shown on the page instead of
// ending the program.
func (a *App) post(f func()) {
	a.loop.Post(func() {
		defer func() {
			if p := recover(); p != nil {
				a.fail(fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		f()
	})
}

func (a *App) fail(err error) {
	show(a.banner, true)
	a.banner.SetTextContent("Playground error: " + err.Error())
	consoleError(err.Error())
}

func (a *App) listen() {
	a.byForm(a.composer, a.sendPrompt)
	a.byForm(a.steerForm, a.steer)
	a.prompt.AddEventListener("keydown", false, func(ev dom.Event) {
		k := ev.Underlying()
		if k.Get("key").String() == "Enter" && !k.Get("shiftKey").Bool() && !k.Get("isComposing").Bool() {
			ev.PreventDefault()
			a.post(a.sendPrompt)
		}
	})
	a.stopBtn.AddEventListener("click", false, func(dom.Event) { a.post(a.stopRun) })
	a.reset.AddEventListener("click", false, func(dom.Event) { a.post(a.resetSession) })
	a.transcript.AddEventListener("click", false, func(ev dom.Event) {
		target := wrap(ev.Underlying().Get("target"))
		a.post(func() { a.clickIn(target) })
	})
}

func (a *App) byForm(form elem, f func()) {
	form.AddEventListener("submit", false, func(ev dom.Event) {
		ev.PreventDefault()
		a.post(f)
	})
}

// resetSession starts a fresh session (and clears the page) when idle.
func (a *App) resetSession() {
	if a.running {
		return
	}
	sess, err := a.newSession()
	if err != nil {
		a.fail(fmt.Errorf("new session: %w", err))
		return
	}
	a.gen++
	a.runner = playground.NewRunner(sess)
	a.tr = &playground.Transcript{}
	for _, v := range a.views {
		v.root.Remove()
	}
	a.views, a.dirty, a.isDirty = map[int]*itemView{}, nil, map[int]bool{}
	a.log.clear()
	show(a.intro, true)
	a.sessionID.SetTextContent(sess.ID())
	a.note = ""
}

func (a *App) sendPrompt() {
	text := strings.TrimSpace(a.prompt.Value())
	if text == "" || a.running || a.runner == nil {
		return
	}
	gen := a.gen
	approve := playground.AskApprover(func(call omni.Message, answer func(string)) {
		a.post(func() { a.askApproval(gen, call, answer) })
	})
	deliver := func(m omni.Message) {
		a.post(func() {
			if a.gen == gen {
				a.apply(m)
			}
		})
	}
	end := func(err error) { a.post(func() { a.runEnded(gen, err) }) }
	if err := a.runner.Start(text, approve, deliver, end); err != nil {
		a.note = err.Error()
		return
	}
	show(a.intro, false)
	a.mark(a.tr.AddPrompt(text))
	a.prompt.SetValue("")
	a.running, a.stop, a.note = true, false, ""
}

func (a *App) apply(m omni.Message) {
	a.log.add(m)
	if m.Payload.Type == omni.Text && m.Payload.Role == omni.RoleUser && len(a.steers) > 0 {
		a.steers = a.steers[1:] // steering is delivered in queue order (E-11.4)
	}
	if m.Payload.Type == omni.ApprovalDecision {
		delete(a.pending, m.Payload.ToolCallID)
	}
	if it := a.tr.Apply(m); it != nil {
		a.mark(it)
	}
}

func (a *App) askApproval(gen int, call omni.Message, answer func(string)) {
	if gen != a.gen || !a.running {
		answer(omni.DecisionDeny)
		return
	}
	a.pending[call.Payload.ToolCallID] = answer
	it := a.tr.Tool(call.Payload.ToolCallID, call.Payload.Name)
	if it.Tool.Args == "" {
		it.Tool.Args = call.Payload.Arguments
	}
	a.mark(it)
}

func (a *App) clickIn(target elem) {
	if target == nil {
		return
	}
	b := wrap(target.Call("closest", "button[data-decision]"))
	card := wrap(target.Call("closest", "[data-call-id]"))
	if b == nil || card == nil {
		return
	}
	id := card.GetAttribute("data-call-id")
	answer := a.pending[id]
	if answer == nil {
		return
	}
	delete(a.pending, id)
	answer(b.GetAttribute("data-decision"))
	if it := a.tr.Tool(id, ""); it != nil {
		a.mark(it)
	}
}

func (a *App) stopRun() {
	if a.running && a.runner.Stop() {
		a.stop = true
	}
}

func (a *App) steer() {
	in := a.steerInput
	text := strings.TrimSpace(in.Value())
	if text == "" || !a.running {
		return
	}
	if !a.runner.Steer(text) {
		a.note = "The run had already ended; send it as a new prompt."
		return
	}
	a.steers = append(a.steers, text)
	in.SetValue("")
}

func (a *App) runEnded(gen int, err error) {
	if gen != a.gen {
		return
	}
	a.running = false
	for id := range a.pending {
		delete(a.pending, id)
		if it := a.tr.Tool(id, ""); it != nil {
			a.mark(it)
		}
	}
	if len(a.steers) > 0 {
		a.note = fmt.Sprintf("%d steering message(s) not delivered: the run ended first.", len(a.steers))
		a.steers = nil
	}
	if err != nil {
		a.fail(err)
	}
	a.prompt.Focus()
}

func (a *App) mark(it *playground.Item) {
	if !a.isDirty[it.ID] {
		a.isDirty[it.ID] = true
		a.dirty = append(a.dirty, it)
	}
}

func (a *App) state() string {
	switch {
	case !a.running:
		return stateIdle
	case a.stop:
		return stateStopping
	case len(a.pending) > 0:
		return stateApproval
	}
	return stateRunning
}
