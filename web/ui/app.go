//go:build js && wasm

package ui

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
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

// Env is what the page's main package hands the App: where sessions are
// stored, the workspace's file system, the JavaScript evaluator.
type Env struct {
	Store trace.Store          // sessions; nil: nothing is stored
	FS    playground.FS        // the workspace
	Eval  playground.Evaluator // run_js; nil: not offered
	Pace  playground.Pace      // the scripted model's pacing
	Diag  func(engine.Diagnostic)
	Plain bool // render model text as plain text (the Markdown benchmark's baseline)
	// BackoffMs is the reconnect backoff's base (ENGINE.md §10); 0: the
	// engine's default.
	BackoffMs int
	// InMemory says the workspace is kept in memory (the browser refused
	// the page its private file system: a private window): the page says
	// its files last until it is closed or reloaded.
	InMemory bool
}

// pendingApproval is a tool call waiting for the user's decision.
type pendingApproval struct {
	answer func(string)
	name   string
	item   *playground.Item
}

// App is the playground page. Create it with [New] and start it with
// [App.Run]; all its fields belong to the loop goroutine.
type App struct {
	doc  js.Value
	loop playground.Loop
	env  Env
	set  Settings

	// the session shown
	runner *playground.Runner
	bat    *trace.Batcher // its records on their way to the store; nil when not stored
	tr     *playground.Transcript
	remote js.Value // a remote session's handle (remote.go); undefined for a local one
	gen    int      // session generation: output of an older session is dropped
	opens  int      // opens of a stored session asked for: only the last one's is shown
	sessID string
	// sysPrompt is the session's system prompt, as its model gets it;
	// noImages says its model takes no images (Settings.NoImages).
	sysPrompt string
	noImages  bool
	// the run in flight
	running, stop, compacting bool
	pending                   map[string]*pendingApproval // by approvalKey
	cancelled                 map[string]bool             // approvals Stop cancelled
	always                    map[string]bool             // tools always allowed in this session
	steers                    []queuedSteer               // steering queued, not yet delivered
	retrying                  *playground.Item            // the request whose retry is counting down
	note                      string                      // one-line note under the composer
	keepBlocked               string                      // a base URL the page's policy blocks that a second Save keeps

	// demo is the demo script loaded in Settings (nil: none), demoName
	// its file's name; demoErr says why the one local storage keeps is
	// refused.
	demo              *playground.Demo
	demoName, demoErr string

	views   map[*playground.Item]*itemView
	dirty   []*playground.Item
	isDirty map[*playground.Item]bool
	// behind are the Batchers of sessions the page showed before, by
	// session, while records they queued are on their way to the store.
	behind map[string]*trace.Batcher

	ticking map[*playground.Item]bool
	ticks   atomic.Int32 // len(ticking), read by the ticker goroutine
	log     *streamLog

	sessions sessionsView
	files    filesView
	atts     attachView
	traceV   traceView
	tab      string // the side panel shown: stream, files, trace
	tabShown string // the tab the page shows
	drawer   string // narrow screens: "", "sessions" or "side"
	drawn    string // the drawer the last render showed
	inert    string // the drawer the page behind is inert for (renderInert)
	decided  bool   // an approval that had the focus was answered

	composer, body, transcript, intro, send, stopBtn, compactBtn, reset elem
	stuck, scrolling                                                    bool    // the transcript follows its end; a scroll to the ends waits for the next frame
	followTop, followEnd                                                float64 // the transcript's scrollTop as scrollSoon last set it, and its end then (scrollTop + clientHeight)
	floor                                                               elem    // holds the transcript as high as followEnd until the next frame (see scrollSoon)
	floored                                                             bool    // the floor is up
	steerQueue, noteEl, banner, live, statePill, sessionIDEl, tokens    elem
	modelLabel                                                          elem
	shownControls                                                       controls // what render last drew of them (drawControls)
	shownSteers                                                         []string // the queued steering drawn: each one's text and its images' count
	steersKnown                                                         bool
	prompt                                                              *dom.HTMLTextAreaElement
}

// New binds the page skeleton of doc.
func New(doc js.Value, env Env) *App {
	a := &App{doc: doc, env: env, views: map[*playground.Item]*itemView{}, isDirty: map[*playground.Item]bool{},
		ticking: map[*playground.Item]bool{}, tab: "stream", behind: map[string]*trace.Batcher{}}
	a.body = wrap(doc.Get("body"))
	for _, b := range []struct {
		dst *elem
		id  string
	}{
		{&a.composer, "composer"}, {&a.transcript, "transcript"}, {&a.intro, "intro"}, {&a.send, "send"},
		{&a.stopBtn, "stop"}, {&a.compactBtn, "compact"}, {&a.reset, "reset"},
		{&a.steerQueue, "steer-queue"}, {&a.noteEl, "note"}, {&a.banner, "error"}, {&a.live, "live"},
		{&a.statePill, "state"}, {&a.sessionIDEl, "session-id"}, {&a.tokens, "tokens"}, {&a.modelLabel, "model-label"},
	} {
		*b.dst = byID(doc, b.id)
	}
	a.prompt = &dom.HTMLTextAreaElement{BasicHTMLElement: byID(doc, "prompt")}
	a.floor = a.el("div", "floor", "")
	a.floor.SetAttribute("aria-hidden", "true")
	a.transcript.AppendChild(a.floor)
	a.log = newStreamLog(a, byID(doc, "stream"), byID(doc, "stream-count"))
	a.sessions.init(a)
	a.files.init(a)
	a.atts.init(a)
	a.traceV.init(a)
	a.set = loadSettings()
	a.loadDemo()
	if env.InMemory {
		byID(doc, "intro-workspace").SetTextContent("kept in memory")
		byID(doc, "files-hint").SetTextContent("The workspace, in memory.")
		show(byID(doc, "intro-memory"), true)
		show(byID(doc, "files-memory"), true)
		byID(doc, "tab-files").AppendChild(a.el("span", "memory-tab", " · in memory"))
	}
	return a
}

// Run opens the last session (or a new one), wires the controls and runs
// the loop until ctx is done.
func (a *App) Run(ctx context.Context) {
	a.post(a.start)
	a.listen()
	a.exposeRemote()
	go a.tick(ctx)
	a.loop.Run(ctx, a.render)
}

// tick marks the items that show a running time (tool timers, retry
// countdowns) five times a second, while there are any.
func (a *App) tick(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if a.ticks.Load() > 0 {
				a.post(func() {
					for it := range a.ticking {
						a.mark(it)
					}
				})
			}
		}
	}
}

// post queues f on the loop; a panic in f is shown on the page instead of
// ending the program.
func (a *App) post(f func()) { a.loop.Post(a.guarded(f)) }

// postQuiet posts f, which changes nothing a render draws, with no render
// after it (playground.Loop.PostQuiet).
func (a *App) postQuiet(f func()) { a.loop.PostQuiet(a.guarded(f)) }

// guarded is f with a panic in it shown on the page.
func (a *App) guarded(f func()) func() {
	return func() {
		defer func() {
			if p := recover(); p != nil {
				a.fail(fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		f()
	}
}

// spawn runs f in a goroutine of its own; a panic in it is shown on the
// page, as post's are, instead of ending the program (the work on what a
// user gives: a file to import, a stored session to read).
func (a *App) spawn(f func()) {
	go func() {
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				a.post(func() { a.fail(err) })
			}
		}()
		f()
	}()
}

func (a *App) fail(err error) {
	show(a.banner, true)
	a.banner.SetTextContent("Playground error: " + err.Error())
	consoleError(err.Error())
}

// start opens the session the page showed last, when it is stored, or a
// new one.
func (a *App) start() {
	a.files.refresh()
	if a.env.Store == nil {
		a.newSession("")
		return
	}
	last := localGet(keyCurrent)
	go func() {
		list, err := a.sessions.stored.List(context.Background(), a.env.Store)
		a.post(func() {
			a.sessions.set(list, err)
			for _, s := range list {
				if s.ID == last {
					a.resume(last)
					return
				}
			}
			a.newSession("")
		})
	}()
}

// composing reports whether the key event k belongs to an input method's
// composition (Japanese, Chinese, Korean): its Enter confirms the text
// being composed and its Escape cancels it, neither meant for the page.
// Safari sends the key that ends a composition with isComposing false
// and keyCode 229.
func composing(k js.Value) bool {
	return k.Get("isComposing").Bool() || k.Get("keyCode").Int() == 229
}

func (a *App) listen() {
	a.byForm(a.composer, a.sendPrompt)
	a.prompt.AddEventListener("keydown", false, func(ev dom.Event) {
		k := ev.Underlying()
		if k.Get("key").String() == "Enter" && !k.Get("shiftKey").Bool() && !composing(k) {
			ev.PreventDefault()
			a.post(a.sendPrompt)
		}
	})
	wrap(a.doc).AddEventListener("keydown", false, func(ev dom.Event) {
		k := ev.Underlying()
		if k.Get("key").String() == "Escape" && !k.Get("defaultPrevented").Bool() && !composing(k) && !a.settingsOpen() {
			a.post(func() {
				if a.drawer != "" {
					a.drawer = "" // a narrow screen's open drawer closes first
					return
				}
				a.stopRun()
			})
		}
	})
	// Whether the transcript follows its end is decided when the user
	// scrolls, not read from its layout at each render (see scrollSoon).
	a.stuck = true
	a.transcript.AddEventListener("scroll", false, func(dom.Event) {
		t := a.transcript.Underlying()
		near := a.nearBottom()
		top := t.Get("scrollTop").Float()
		end := top + t.Get("clientHeight").Float()
		// The event of scrollSoon's own scroll may come after the reply
		// grew again: a position not above the one it set still follows.
		// So does one the browser set as the view grew taller (the
		// composer's images or a steering chip gone): it pulls the view up
		// to keep its end where it was. Either only keeps the following:
		// once the user scrolled up, only the end starts it again (a view
		// made taller, or a scroll down to where the page last scrolled,
		// is not at the end of a transcript grown since).
		a.post(func() { a.stuck = near || (a.stuck && (top >= a.followTop-1 || end >= a.followEnd-1)) })
	})
	// A <details> the user closes (a thinking block, a compaction) makes
	// the transcript shorter as what a render takes away does (see
	// scrollSoon), with no render to put up the floor first. So while the
	// transcript follows, it is scrolled to its end at once, in the
	// microtask after the close and before any frame: the late scroll
	// event of the view the browser pulls up then finds it where the page
	// set it. One opened only makes the transcript taller.
	closed := js.FuncOf(func(_ js.Value, args []js.Value) any {
		for i, recs := 0, args[0]; i < recs.Length(); i++ {
			if !recs.Index(i).Get("target").Get("open").Bool() {
				a.post(func() {
					if a.stuck {
						a.toEnd()
					}
				})
				break
			}
		}
		return nil
	})
	js.Global().Get("MutationObserver").New(closed).Call("observe", a.transcript.Underlying(),
		map[string]any{"subtree": true, "attributeFilter": []any{"open"}})
	a.stopBtn.AddEventListener("click", false, func(dom.Event) { a.post(a.stopRun) })
	a.compactBtn.AddEventListener("click", false, func(dom.Event) { a.post(a.compact) })
	a.reset.AddEventListener("click", false, func(dom.Event) {
		a.post(func() {
			if !a.running {
				a.newSession("")
				a.drawer = "" // as an open does: the new session is behind the drawer
			}
		})
	})
	a.transcript.AddEventListener("click", false, func(ev dom.Event) {
		target := wrap(ev.Underlying().Get("target"))
		a.post(func() { a.clickIn(target) })
	})
	for _, t := range tabs {
		byID(a.doc, "tab-"+t).AddEventListener("click", false, func(dom.Event) { a.post(func() { a.showTab(t) }) })
	}
	// A drawer is modal only where it covers the page: the page is drawn
	// again when the screen crosses a drawer's width.
	for _, d := range drawers {
		js.Global().Call("matchMedia", d[0]).Call("addEventListener", "change", js.FuncOf(func(js.Value, []js.Value) any {
			a.post(func() {})
			return nil
		}))
	}
	byID(a.doc, "toggle-sessions").AddEventListener("click", false, func(dom.Event) { a.post(func() { a.toggleDrawer("sessions") }) })
	byID(a.doc, "toggle-side").AddEventListener("click", false, func(dom.Event) { a.post(func() { a.toggleDrawer("side") }) })
	a.listenSettings()
	a.listenDemo()
}

// tabs are the side panel's tabs, in their order.
var tabs = []string{"stream", "files", "trace"}

func (a *App) byForm(form elem, f func()) {
	form.AddEventListener("submit", false, func(ev dom.Event) {
		ev.PreventDefault()
		a.post(f)
	})
}

func (a *App) toggleDrawer(d string) {
	if a.drawer == d {
		a.drawer = ""
	} else {
		a.drawer = d
	}
}

func (a *App) showTab(t string) {
	a.tab = t
	switch t {
	case "files":
		a.files.refresh()
	case "trace":
		a.traceV.refresh()
	}
}

// sessionOptions are the options every session of the page shares; seed
// is the session's tokens so far (a resumed session's). warn explains why
// the chosen provider is not used, if it is not.
func (a *App) sessionOptions(gen int, seed omni.TokenCounts) (o playground.Options, warn string) {
	o = playground.Options{
		Pace: a.env.Pace, FS: a.env.FS, Eval: a.env.Eval, ReconnectBackoffMs: a.env.BackoffMs,
		OnDiagnostic: func(d engine.Diagnostic) {
			if a.env.Diag != nil {
				a.env.Diag(d)
			}
			if errors.Is(d.Err, engine.ErrReplyCut) { // the stream has no word for it: the transcript says so
				text := strings.TrimPrefix(d.Err.Error(), "llm: ")
				a.post(func() {
					if a.gen == gen {
						a.mark(a.tr.AddNotice(strings.ToUpper(text[:1]) + text[1:] + "."))
					}
				})
			}
		},
		OnSubagent: func(child, callID string) {
			a.post(func() {
				if a.gen == gen {
					a.tr.Link(child, callID)
				}
			})
		},
		OnChange: func() { a.post(a.files.refresh) },
	}
	if a.set.CompactTokens > 0 {
		o.Compaction = &engine.Compaction{MaxContextLength: int64(a.set.CompactTokens), Mode: a.set.compactMode()}
	} else {
		o.Compaction = &engine.Compaction{Mode: a.set.compactMode()}
	}
	llm, newLLM, label, warn := a.provider(seed)
	o.LLM, o.NewLLM = llm, newLLM
	if llm == nil {
		o.Demo = a.demo
	}
	a.noImages = llm != nil && a.set.noImages()
	a.atts.dirty = true // the hint of the images attached
	if llm != nil {
		o.Provider, o.Model, o.ThinkingLevel = a.set.Provider, a.set.Model, a.set.ThinkingLevel
	}
	a.modelLabel.SetTextContent(label)
	return o, warn
}

// newSession starts a fresh session, stored when the page has a store, and
// shows note under the composer (with why the chosen provider is not used,
// if it is not).
func (a *App) newSession(note string) {
	a.gen++
	o, warn := a.sessionOptions(a.gen, omni.TokenCounts{})
	meta := playground.Meta(time.Now())
	if o.LLM != nil {
		meta = playground.ProviderMeta(time.Now(), a.set.Provider, a.set.Model, a.set.SystemPrompt)
	}
	o.Meta = &meta
	var bat *trace.Batcher
	if a.env.Store != nil {
		bat = a.batcher(true)
		o.Trace = trace.NewWriter(bat, meta.Payload.SessionID(), 1)
		o.SubagentTrace = subagentTrace(bat)
	}
	a.attach(o, bat, &playground.Transcript{Now: time.Now}, "", joinNotes(note, warn))
}

// subagentTrace stores a subagent's child session through bat, under the
// child's own id.
func subagentTrace(bat *trace.Batcher) func(string) engine.TraceSink {
	return func(child string) engine.TraceSink { return trace.NewWriter(bat, child, 1) }
}

// joinNotes joins the non-empty notes with a space.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

// retire keeps bat, the Batcher of the session id the page shows no
// more, as the one to read that session through until what it queued is
// stored: an export, an open or a delete of it right after the switch
// would miss its last records (or, a delete, see them written after it).
func (a *App) retire(id string, bat *trace.Batcher) {
	a.behind[id] = bat
	go func() {
		bat.Flush(context.Background())
		a.post(func() {
			if a.behind[id] == bat {
				delete(a.behind, id)
			}
		})
	}()
}

// storeOf is the Store to read or delete the stored session id through:
// the Batcher its records go through (the session shown's, or that of one
// shown before whose records are still on their way), which stores them
// first; else the page's store. waits says that a Batcher holds records
// of it.
func (a *App) storeOf(id string) (store trace.Store, waits bool) {
	if id == a.sessID && a.bat != nil {
		return a.bat, a.running
	}
	if b := a.behind[id]; b != nil {
		return b, true
	}
	return a.env.Store, false
}

func (a *App) batcher(fresh bool) *trace.Batcher {
	return trace.NewBatcher(a.env.Store, trace.BatcherOptions{Fresh: fresh, Report: func(err error) {
		consoleWarn("floe trace: " + err.Error())
	}})
}

// attach shows the session o opens, with the transcript tr (a resumed
// session's stored records), a notice in the transcript and a note under
// the composer, if any.
func (a *App) attach(o playground.Options, bat *trace.Batcher, tr *playground.Transcript, notice, note string) {
	sess, _, err := playground.Open(o)
	if err != nil {
		a.fail(fmt.Errorf("open session: %w", err))
		return
	}
	a.detachRemote()
	if old := a.bat; old != nil {
		a.retire(a.sessID, old)
	}
	a.runner, a.bat, a.sessID = playground.NewRunner(sess), bat, sess.ID()
	a.sysPrompt = o.Meta.Payload.SystemPrompt()
	a.runner.SetThinkingLevel(o.ThinkingLevel)
	a.resetView(tr)
	a.note = note
	a.sessions.dirty = true // the current session's row, highlighted
	if notice != "" {
		a.mark(tr.AddNotice(notice))
	}
	show(a.intro, len(tr.Items) == 0)
	a.sessionIDEl.SetTextContent(sess.ID())
	if bat != nil {
		if err := localSet(keyCurrent, sess.ID()); err != nil {
			consoleWarn("a reload will not reopen " + sess.ID() + ": " + err.Error())
		}
	}
}

// resetView empties the transcript and panels and shows tr.
func (a *App) resetView(tr *playground.Transcript) {
	a.tr = tr
	for _, v := range a.views {
		v.root.Remove()
	}
	a.views, a.dirty, a.isDirty = map[*playground.Item]*itemView{}, nil, map[*playground.Item]bool{}
	a.ticking = map[*playground.Item]bool{}
	a.ticks.Store(0)
	a.pending, a.cancelled, a.always = map[string]*pendingApproval{}, map[string]bool{}, map[string]bool{}
	a.retrying, a.steers, a.note = nil, nil, ""
	// The user's scroll up was in the transcript taken away: this one
	// shows its end and follows it.
	a.stuck = true
	a.log.clear()
	a.markAll(tr)
	a.traceV.reset()
	if a.tab == "trace" {
		a.traceV.refresh()
	}
}

// markAll marks the items of tr and, after each, those nested in it (a
// stored subagent's).
func (a *App) markAll(tr *playground.Transcript) {
	for _, it := range tr.Items {
		a.mark(it)
		if it.Sub != nil {
			a.markAll(it.Sub)
		}
	}
}

// originKey names a transcript by its origin path.
func originKey(origin []string) string { return strings.Join(origin, "/") }

func approvalKey(origin []string, callID string) string { return originKey(origin) + "|" + callID }

// queuedSteer is a steering message sent, not yet delivered: its text
// and images come back to the composer when the run ends first.
type queuedSteer struct {
	text string
	atts []*attachment
}

func (a *App) sendPrompt() {
	text := strings.TrimSpace(a.prompt.Value())
	images, reading := a.atts.images()
	if text == "" && len(images) == 0 || (a.runner == nil && !a.isRemote()) {
		return
	}
	if reading {
		a.note = "An image is still being read: send again once its thumbnail shows."
		return
	}
	if a.running {
		a.steer(text, images)
		return
	}
	if a.isRemote() {
		a.startRemote(text, images) // the server echoes the prompt on the stream
		return
	}
	gen := a.gen
	approve := playground.AskApprover(func(call omni.Message, answer func(string)) {
		a.post(func() { a.askApproval(gen, call, answer) })
	})
	if err := a.runner.Start(text, images, approve, a.deliver(gen), a.ender(gen)); err != nil {
		a.note = err.Error()
		return
	}
	show(a.intro, false)
	it := a.tr.AddPrompt(text)
	it.Images = images
	a.mark(it)
	a.prompt.SetValue("")
	a.atts.clear()
	a.running, a.stop, a.note = true, false, ""
	a.cancelled = map[string]bool{}
}

func (a *App) deliver(gen int) func(omni.Message) {
	return func(m omni.Message) {
		a.post(func() {
			if a.gen == gen {
				a.apply(m)
			}
		})
	}
}

func (a *App) ender(gen int) func(error) {
	return func(err error) { a.post(func() { a.runEnded(gen, err) }) }
}

func (a *App) compact() {
	if a.running || a.runner == nil || a.runner.Session().Compactability() != engine.CompactOK {
		return
	}
	gen := a.gen
	if err := a.runner.StartCompact(a.deliver(gen), a.ender(gen)); err != nil {
		a.note = err.Error()
		return
	}
	a.running, a.compacting, a.stop, a.note = true, true, false, ""
}

func (a *App) apply(m omni.Message) {
	a.log.add(m)
	p := &m.Payload
	root := len(m.Origin) == 0
	if root && p.Type == omni.Text && p.Role == omni.RoleUser && len(a.steers) > 0 && !m.IsPartial() {
		a.steers = a.steers[1:] // steering is delivered in queue order (E-11.4)
	}
	if p.Type == omni.ApprovalDecision {
		delete(a.pending, approvalKey(m.Origin, p.ToolCallID))
	}
	if root && p.Type == omni.RequestBegin && !a.isRemote() {
		a.sessions.listCurrent()
	}
	if root && p.Type == omni.RequestBegin && a.retrying != nil {
		a.untick(a.retrying)
		a.mark(a.retrying)
		a.retrying = nil
	}
	var it *playground.Item
	if a.isRemote() {
		it = a.tr.ApplyRecord(m) // a remote stream echoes the prompts too
	} else {
		it = a.tr.Apply(m)
	}
	if it == nil {
		return
	}
	a.mark(it)
	if root && p.Type == omni.RequestEnd && p.RetryInMs() != nil && p.Status() != omni.StatusCompleted {
		a.retrying = it
		a.tickOn(it)
	}
	if it.Kind == playground.KindTool && it.Tool != nil {
		if !it.Tool.Started.IsZero() && it.Tool.Ended.IsZero() {
			a.tickOn(it)
		} else {
			a.untick(it)
		}
	}
	if root && m.Type == omni.TypeModelMsg && !m.IsPartial() && p.Type == omni.Text && p.Role == omni.RoleAssistant {
		a.announce(cut(p.Text, 600)) // completed messages only
	}
}

func (a *App) tickOn(it *playground.Item) {
	if !a.ticking[it] {
		a.ticking[it] = true
		a.ticks.Store(int32(len(a.ticking)))
	}
}

func (a *App) untick(it *playground.Item) {
	if a.ticking[it] {
		delete(a.ticking, it)
		a.ticks.Store(int32(len(a.ticking)))
	}
}

func (a *App) askApproval(gen int, call omni.Message, answer func(string)) {
	if gen != a.gen || !a.running {
		answer(omni.DecisionDeny)
		return
	}
	name := call.Payload.Name
	if a.always[name] {
		answer(omni.DecisionAllow)
		return
	}
	it := a.tr.Find(call.Origin).Tool(call.Payload.ToolCallID, name)
	if it.Tool.Args == "" {
		it.Tool.Args = call.Payload.Arguments
	}
	a.pending[approvalKey(call.Origin, call.Payload.ToolCallID)] = &pendingApproval{answer: answer, name: name, item: it}
	a.mark(it)
	a.announce(name + " waits for your approval.")
}

// announce adds text to the page's aria-live region, which a screen
// reader reads out: completed answers and approvals, never a delta. The
// last three stay (two in one render are both read).
func (a *App) announce(text string) {
	a.live.AppendChild(a.el("p", "", text))
	for a.live.Get("childElementCount").Int() > 3 {
		a.live.Get("firstElementChild").Call("remove")
	}
}

func (a *App) clickIn(target elem) {
	if target == nil {
		return
	}
	if b := wrap(target.Call("closest", "[data-action]")); b != nil {
		a.action(b)
		return
	}
	b := wrap(target.Call("closest", "button[data-decision]"))
	card := wrap(target.Call("closest", "[data-approval-key]"))
	if b == nil || card == nil {
		return
	}
	key := card.GetAttribute("data-approval-key")
	p := a.pending[key]
	if p == nil {
		return
	}
	decision := b.GetAttribute("data-decision")
	if decision == "always" {
		a.always[p.name] = true
		for k, q := range a.pending { // every call of that tool waiting now
			if q.name == p.name {
				delete(a.pending, k)
				q.answer(omni.DecisionAllow)
				a.mark(q.item)
			}
		}
		return
	}
	delete(a.pending, key)
	p.answer(decision)
	a.mark(p.item)
}

// action runs the button b of the transcript with a data-action.
func (a *App) action(b elem) {
	switch b.GetAttribute("data-action") {
	case "retry-now":
		if a.isRemote() {
			a.remote.Call("retryNow")
		} else if a.runner != nil && !a.runner.SkipReconnectWait() {
			a.note = "No retry is waiting."
		}
	case "give-up":
		a.stopRun()
	case "copy":
		pre := b.Get("parentElement").Call("querySelector", "pre")
		if !pre.IsNull() {
			copyText(pre.Get("textContent").String())
			b.SetTextContent("Copied")
		}
	case "download": // a file the model made
		if v := a.viewOf(b); v != nil && v.item.File != nil {
			f := v.item.File
			data, err := base64.StdEncoding.DecodeString(f.Data)
			if err != nil {
				data, err = base64.RawStdEncoding.DecodeString(f.Data)
			}
			if err != nil {
				a.note = "Not downloaded: " + f.Name + " is no base64 (" + err.Error() + ")."
				return
			}
			download(f.Name, f.MimeType, data)
		}
	case "expand":
		if v := a.viewOf(b); v != nil {
			part := b.GetAttribute("data-part")
			v.expanded[part] = !v.expanded[part]
			a.mark(v.item)
		}
	}
}

func (a *App) stopRun() {
	if a.running && a.isRemote() {
		a.remote.Call("abort")
		a.stop = true
		return
	}
	if a.running && a.runner.Stop() {
		a.stop = true
	}
}

// steer sends text and images as steering for the run in flight; the
// composer is emptied once they are queued.
func (a *App) steer(text string, images []string) {
	if a.isRemote() {
		if err := playground.CheckRemoteSteer(text, images); err != nil {
			a.note = "Steering " + err.Error() + "."
			return
		}
		a.remote.Call("steer", text, jsStrings(images))
	} else if !a.runner.Steer(text, images) {
		a.note = "The run had already ended; send it as a new prompt."
		return
	}
	a.steers = append(a.steers, queuedSteer{text, a.atts.take()})
	a.prompt.SetValue("")
}

// jsStrings is ss as a JavaScript array.
func jsStrings(ss []string) js.Value {
	arr := js.Global().Get("Array").New(len(ss))
	for i, s := range ss {
		arr.SetIndex(i, s)
	}
	return arr
}

func (a *App) runEnded(gen int, err error) {
	if gen != a.gen {
		return
	}
	a.running, a.compacting = false, false
	for key, p := range a.pending {
		delete(a.pending, key)
		a.cancelled[key] = true
		a.mark(p.item)
	}
	if a.retrying != nil {
		a.untick(a.retrying)
		a.mark(a.retrying)
		a.retrying = nil
	}
	for it := range a.ticking {
		a.mark(it)
	}
	if a.note == noteStopFirst {
		a.note = ""
	}
	if len(a.steers) > 0 {
		a.note = fmt.Sprintf("%d steering message(s) not delivered: the run ended first.", len(a.steers))
		// What they held is given back, to send as a prompt: never over
		// a draft the user typed or images attached since.
		var texts []string
		var atts []*attachment
		for _, s := range a.steers {
			if s.text != "" {
				texts = append(texts, s.text)
			}
			atts = append(atts, s.atts...)
		}
		textBack := len(texts) > 0 && strings.TrimSpace(a.prompt.Value()) == ""
		if textBack {
			a.prompt.SetValue(strings.Join(texts, "\n\n"))
		}
		imagesBack := len(atts) > 0 && a.atts.restore(atts)
		switch {
		case textBack && imagesBack:
			a.note += " Their text and images are back in the composer."
		case textBack:
			a.note += " Their text is back in the composer."
		case imagesBack:
			a.note += " Their images are back in the composer."
		}
		a.steers = nil
	}
	if err != nil {
		a.fail(err)
	}
	if act := a.doc.Get("activeElement"); act.IsNull() || act.Equal(a.doc.Get("body")) {
		a.prompt.Focus() // only when nothing else has the focus: never while the user types
	}
	if bat := a.bat; bat != nil {
		go func() {
			bat.Flush(context.Background())
			a.post(func() {
				a.sessions.refresh()
				if a.tab == "trace" {
					a.traceV.refresh()
				}
			})
		}()
	}
}

func (a *App) mark(it *playground.Item) {
	if it == nil {
		return
	}
	if !a.isDirty[it] {
		a.isDirty[it] = true
		a.dirty = append(a.dirty, it)
	}
}

func (a *App) state() string {
	switch {
	case a.runner == nil && !a.isRemote():
		return "loading"
	case !a.running:
		return stateIdle
	case a.stop:
		return stateStopping
	case len(a.pending) > 0:
		return stateApproval
	}
	return stateRunning
}

// cut returns s cut after n characters (not bytes: a Japanese title kept
// a third of an English one's), with "…" when it was longer.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
