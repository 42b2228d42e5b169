//go:build js && wasm

package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall/js"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/playground/markdown"
)

// collapseAt is the length, in characters, above which tool arguments and
// outputs are cut, with a "show all" button.
const collapseAt = 1200

// itemView holds the elements of one transcript item.
type itemView struct {
	item              *playground.Item
	root, label, body elem
	md                markdown.Doc
	chunks            []elem
	plain             js.Value // the text node of a plain-text body
	shown             string   // the body text rendered
	// tool cards
	name, decision, status, timer, approval, args, argsMore, output, outMore, sub elem
	expanded                                                                      map[string]bool
	mdCost                                                                        time.Duration // the last Markdown drawing's cost
	mdAt                                                                          time.Time     // when it ended
	redraw                                                                        bool          // a redraw is set for later (redrawLater)
	shownArgs, shownOut                                                           string
	// a request's retry countdown, made once with its buttons: made anew
	// at each tick, a button could be replaced between the press and the
	// release of a click, and the click was lost
	countdown elem
	asking    bool // the approval buttons are shown
	// the images of a prompt or a tool's output, drawn in images (made
	// when the first comes)
	images    elem
	shownImgs []string
}

// render runs after every batch of posted work: it updates the items that
// changed, the raw stream and the controls.
func (a *App) render() {
	had := a.doc.Get("activeElement")
	if len(a.dirty) > 0 && a.stuck && !a.floored && a.followEnd > 0 {
		// Up before an item is drawn again: see scrollSoon.
		a.floor.Underlying().Get("style").Set("height", fmt.Sprintf("%.0fpx", a.followEnd))
		a.floored = true
	}
	for _, it := range a.dirty {
		a.renderItem(it)
		delete(a.isDirty, it)
	}
	a.dirty = a.dirty[:0]
	if a.decided {
		// The approval answered from the keyboard is hidden: the focus
		// goes to the next one waiting, else to the prompt.
		a.decided = false
		a.refocus(a.transcript, `.card.ask button[data-decision="allow"]`)
	}
	a.log.flush()

	st := a.state()
	// A drawer closed with the focus in it gives the focus back to the
	// button that opens it (below), unless what is drawn meanwhile gives
	// it elsewhere. Found before the drawer is hidden: the browser takes
	// the focus out of a hidden drawer at its next style update.
	var back, closing elem
	if a.drawn != a.drawer {
		if d, ok := drawers[a.drawn]; ok && a.focusIn(byID(a.doc, d[1])) != nil {
			closing, back = byID(a.doc, d[1]), byID(a.doc, d[2])
		}
		a.drawn = a.drawer
	}
	c := controls{state: st, drawer: a.drawer, running: a.running, compacting: a.compacting && st == stateRunning,
		noSend: a.runner == nil && !a.isRemote(), noStop: !a.running || a.stop, noReset: a.running,
		noCompact: a.running || a.runner == nil || a.runner.Session().Compactability() != engine.CompactOK}
	if a.tr != nil {
		s := a.tr.Session
		c.tokens = fmt.Sprintf("session: %d tokens · output %d · cache read %d", s.Total, s.Output, s.CacheRead)
	}
	if c != a.shownControls {
		a.drawControls(c)
	}
	a.renderInert() // before anything gives the focus to what it leaves
	a.renderSteers()
	a.atts.render()
	if a.noteEl.Get("textContent").String() != a.note {
		a.noteEl.SetTextContent(a.note) // a status region: set again, it would be read again
	}
	if a.tabShown != a.tab {
		// Set when the tab changes only: a focused tab's tabindex set
		// again makes the browser check at once whether it may keep the
		// focus (in a drawer being hidden, it may not).
		for _, t := range tabs {
			tab := byID(a.doc, "tab-"+t)
			tab.SetAttribute("aria-selected", strconv.FormatBool(a.tab == t))
			if a.tab == t {
				tab.SetAttribute("tabindex", "0")
			} else {
				tab.SetAttribute("tabindex", "-1")
			}
			show(byID(a.doc, "panel-"+t), a.tab == t)
		}
		a.tabShown = a.tab
	}
	a.sessions.render()
	a.files.render()
	a.traceV.render()
	if act := wrap(a.doc.Get("activeElement")); back != nil && (act == nil || act.Underlying().Equal(a.body.Underlying()) || a.focusIn(closing) != nil) {
		back.Focus()
	}
	a.keepFocus(had)
	a.scrollSoon()
}

// controls is what a render draws of the page's state outside the
// transcript and the panels: the state, the open drawer, the buttons.
type controls struct {
	state, drawer, tokens              string
	running, compacting                bool
	noSend, noStop, noReset, noCompact bool // the buttons disabled
}

// drawControls draws c. A render draws them only when they changed: at
// each delta of a streaming reply, its dozen attributes and texts were
// set again, a call into the page apiece.
func (a *App) drawControls(c controls) {
	a.shownControls = c
	a.body.SetAttribute("data-state", c.state)
	a.body.SetAttribute("data-drawer", c.drawer)
	a.statePill.SetAttribute("data-state", c.state)
	label := map[string]string{
		"loading": "loading…", stateIdle: "idle", stateRunning: "running", stateApproval: "waiting for approval", stateStopping: "stopping…",
	}[c.state]
	if c.compacting {
		label = "compacting"
	}
	a.statePill.SetTextContent(label)
	if c.tokens != "" {
		a.tokens.SetTextContent(c.tokens)
	}
	if c.running {
		a.send.SetTextContent("Steer")
		a.send.SetAttribute("title", "Send to the run in flight (delivered after the current turn)")
	} else {
		a.send.SetTextContent("Send")
		a.send.RemoveAttribute("title")
	}
	setDisabled(a.send, c.noSend)
	setDisabled(a.stopBtn, c.noStop)
	setDisabled(a.reset, c.noReset)
	setDisabled(a.compactBtn, c.noCompact)
	byID(a.doc, "toggle-sessions").SetAttribute("aria-expanded", strconv.FormatBool(c.drawer == "sessions"))
	byID(a.doc, "toggle-side").SetAttribute("aria-expanded", strconv.FormatBool(c.drawer == "side"))
}

// keepFocus gives the focus to the prompt when this render took it from
// had, the element that had it: a control it disabled (Stop once
// pressed, Compact during a compaction) or took away (a retry's Retry
// now and Give up) would leave it on the page's body, from where the
// next Tab starts again at the top of the page.
func (a *App) keepFocus(had js.Value) {
	act, body := a.doc.Get("activeElement"), a.body.Underlying()
	lost := (act.IsNull() || act.Equal(body)) && !had.IsNull() && !had.Equal(body)
	for _, b := range []elem{a.send, a.stopBtn, a.reset, a.compactBtn} {
		if act.Equal(b.Underlying()) && b.HasAttribute("disabled") {
			lost = true // the browser takes the focus from it at its next style update
		}
	}
	if lost {
		a.prompt.Focus()
	}
}

// drawers are the drawers of a narrow screen: the width below which each is
// one (it covers the page), its panel and its button.
var drawers = map[string][3]string{
	"sessions": {"(max-width: 1100px)", "sessions-panel", "toggle-sessions"},
	"side":     {"(max-width: 900px)", "side", "toggle-side"},
}

// renderInert makes the page behind an open drawer inert, as behind a
// modal dialog: Tab stays in the drawer and on its button (which closes
// it), and a screen reader reads the drawer alone. The status and live
// regions under the composer are left as they are, so what they say is
// still read.
func (a *App) renderInert() {
	modal := ""
	if d, ok := drawers[a.drawer]; ok && js.Global().Call("matchMedia", d[0]).Get("matches").Bool() {
		modal = a.drawer
	}
	if modal == a.inert {
		return
	}
	a.inert = modal
	d := drawers[modal]
	for _, id := range []string{"transcript", "composer", "open-settings", "sessions-panel", "side", "toggle-sessions", "toggle-side"} {
		if e := byID(a.doc, id); modal != "" && id != d[1] && id != d[2] {
			e.SetAttribute("inert", "")
		} else {
			e.RemoveAttribute("inert")
		}
	}
}

// scrollSoon scrolls the transcript (when it follows its end) and the raw
// stream to their ends at the next animation frame, once however many
// renders come before it. Reading a scroll position or height forces a
// layout of the page: done at every render (one a delta), the layout of a
// long reply made streaming it quadratic.
//
// What a render takes away (a decided approval's buttons, a retry's
// countdown, a Markdown block drawn again shorter) would make the browser
// pull the view up to the transcript's new end at its next layout, which
// may come before the frame, and send that scroll's event at the frame;
// had the transcript grown again by then, the view would be above the end
// followed and not near the new one, as after the user's scroll up. So a
// render that draws items again, while the transcript follows, first puts
// up the transcript's floor: an empty element, out of the flow, as high
// as the end scrolled to. The transcript cannot get shorter than that, the
// view is not moved, and the frame takes the floor down before it
// scrolls, so it is never painted. (A view grown taller is told from the
// user's scroll by the scroll listener.)
func (a *App) scrollSoon() {
	if a.scrolling {
		return
	}
	a.scrolling = true
	var f js.Func
	f = js.FuncOf(func(js.Value, []js.Value) any {
		f.Release()
		// Quiet: a render after it would ask for the next frame, and a
		// page with nothing to do would render at every frame.
		a.postQuiet(func() {
			a.scrolling = false
			if a.floored {
				a.floor.Underlying().Get("style").Set("height", "0")
				a.floored = false
			}
			if a.stuck {
				a.toEnd()
			}
			a.log.scrollToEnd()
		})
		return nil
	})
	js.Global().Call("requestAnimationFrame", f)
}

// toEnd scrolls the transcript to its end now, and keeps where, for the
// scroll listener to tell the page's scroll from the user's.
func (a *App) toEnd() {
	t := a.transcript.Underlying()
	t.Set("scrollTop", t.Get("scrollHeight"))
	a.followTop = t.Get("scrollTop").Float()
	a.followEnd = a.followTop + t.Get("clientHeight").Float()
}

func (a *App) nearBottom() bool {
	t := a.transcript.Underlying()
	return t.Get("scrollTop").Float()+t.Get("clientHeight").Float() >= t.Get("scrollHeight").Float()-48
}

func (a *App) renderSteers() {
	// Drawn again only when the queue changed (see drawControls).
	key := make([]string, 0, 2*len(a.steers))
	for _, s := range a.steers {
		key = append(key, s.text, strconv.Itoa(len(s.atts)))
	}
	if a.steersKnown && slices.Equal(key, a.shownSteers) {
		return
	}
	a.shownSteers, a.steersKnown = key, true
	a.steerQueue.SetTextContent("")
	for _, s := range a.steers {
		// The text in a <bdi>, isolated: a right-to-left one does not
		// reorder the label around it.
		chip, n := playground.SteerChip(s.text, len(s.atts)), len("queued: ")
		c := a.el("span", "chip", chip[:n])
		c.Call("append", a.el("bdi", "", s.text).Underlying(), chip[n+len(s.text):])
		a.steerQueue.AppendChild(c)
	}
}

// container is the element the items of t go into: the transcript, or the
// nested area of the card that hosts a subagent.
func (a *App) container(t *playground.Transcript) elem {
	if t.Host == nil {
		return a.transcript
	}
	return a.view(t.Host).sub
}

func (a *App) viewOf(e elem) *itemView {
	root := wrap(e.Call("closest", "[data-item]"))
	if root == nil {
		return nil
	}
	for _, v := range a.views {
		if v.root.Underlying().Equal(root.Underlying()) {
			return v
		}
	}
	return nil
}

func (a *App) view(it *playground.Item) *itemView {
	if v := a.views[it]; v != nil {
		return v
	}
	v := &itemView{item: it, expanded: map[string]bool{}}
	switch it.Kind {
	case playground.KindTool, playground.KindSubagent:
		a.toolView(v, it)
	case playground.KindRequest:
		v.root = a.el("div", "request", "")
		v.body = a.el("span", "", "")
		v.root.AppendChild(v.body)
		v.approval = a.el("span", "retry", "")
		v.root.AppendChild(v.approval)
	case playground.KindNotice:
		v.root = a.el("div", "notice", "")
		v.body = v.root
	case playground.KindCompact:
		v.root = a.el("details", "compact", "")
		v.label = a.el("summary", "", "")
		v.body = a.el("div", "body", "")
		v.root.AppendChild(v.label)
		v.root.AppendChild(v.body)
	case playground.KindThinking:
		v.root = a.el("details", "msg thinking", "")
		v.label = a.el("summary", "label", "")
		v.body = a.el("div", "body md", "")
		v.body.SetAttribute("dir", "auto")
		v.root.AppendChild(v.label)
		v.root.AppendChild(v.body)
	default:
		v.root = a.el("div", "msg "+string(it.Kind), "")
		v.label = a.el("div", "label", "")
		v.body = a.el("div", "body", "")
		if it.Kind == playground.KindText {
			v.body.SetAttribute("class", "body md")
		}
		// Arabic or Hebrew text reads right to left: its direction is
		// taken from its first strong character ("مرحبا!" ends with "!"
		// on its left), as each Markdown block's is (mdNodes).
		v.body.SetAttribute("dir", "auto")
		v.root.AppendChild(v.label)
		v.root.AppendChild(v.body)
	}
	v.root.SetAttribute("data-kind", string(it.Kind))
	v.root.SetAttribute("data-item", "")
	a.views[it] = v
	a.container(it.T).AppendChild(v.root)
	return v
}

func (a *App) button(class, text string, attrs ...string) elem {
	b := a.el("button", "btn "+class, text)
	b.SetAttribute("type", "button")
	for i := 0; i+1 < len(attrs); i += 2 {
		b.SetAttribute(attrs[i], attrs[i+1])
	}
	return b
}

func (a *App) toolView(v *itemView, it *playground.Item) {
	v.root = a.el("div", "card", "")
	head := a.el("div", "head", "")
	v.name = a.el("span", "tool-name", "")
	v.decision = a.el("span", "badge decision", "")
	v.status = a.el("span", "badge status", "")
	v.timer = a.el("span", "timer", "")
	for _, e := range []elem{v.name, v.decision, v.timer, v.status} {
		head.AppendChild(e)
	}
	v.root.AppendChild(head)
	v.sub = a.el("div", "subagent", "")
	if it.Kind == playground.KindSubagent {
		v.name.SetTextContent("subagent")
		v.root.AppendChild(v.sub)
		return
	}
	v.root.SetAttribute("data-call-id", it.Tool.CallID)
	v.root.SetAttribute("data-approval-key", approvalKey(it.T.Path(), it.Tool.CallID))
	v.approval = a.el("div", "approval", "")
	v.approval.SetAttribute("role", "group")
	v.approval.AppendChild(a.el("span", "ask", "Run this tool?"))
	v.approval.AppendChild(a.button("allow", "Allow", "data-decision", omni.DecisionAllow))
	v.approval.AppendChild(a.button("deny", "Deny", "data-decision", omni.DecisionDeny))
	v.approval.AppendChild(a.button("always", "Always allow this tool", "data-decision", "always",
		"title", "Allow this tool without asking for the rest of this session"))
	v.args = a.el("pre", "args", "")
	v.argsMore = a.button("more", "", "data-action", "expand", "data-part", "args")
	v.output = a.el("pre", "output", "")
	v.outMore = a.button("more", "", "data-action", "expand", "data-part", "output")
	for _, e := range []elem{v.approval, v.args, v.argsMore, v.output, v.outMore, v.sub} {
		v.root.AppendChild(e)
	}
}

func (a *App) renderItem(it *playground.Item) {
	v := a.view(it)
	switch it.Kind {
	case playground.KindTool:
		a.renderTool(v, it.Tool)
		return
	case playground.KindSubagent:
		v.decision.SetTextContent(it.Body)
		show(v.status, false)
		return
	case playground.KindRequest:
		a.renderRequest(v, it)
		return
	case playground.KindNotice:
		v.body.SetTextContent(it.Body)
		return
	case playground.KindFile:
		a.renderFile(v, it)
		return
	case playground.KindCompact:
		status := it.StopReason
		if it.Streaming {
			status = "running…"
		}
		v.label.SetTextContent("Compaction · " + status)
		v.root.SetAttribute("data-status", it.StopReason)
		v.body.SetTextContent(it.Body)
		return
	}
	label, body := string(it.Kind), it.Body
	md := false
	switch it.Kind {
	case playground.KindPrompt:
		label = "you"
	case playground.KindUser:
		label = "user"
		if s, ok := playground.SteeringText(body); ok {
			label, body = "steering · delivered to the model", s
		}
	case playground.KindText:
		label, md = "assistant", true
	case playground.KindThinking:
		label, md = "thinking", true
		if it.Streaming {
			label = "thinking…"
		}
		if n := utf8.RuneCountInString(body); n > 0 || it.Streaming {
			label += fmt.Sprintf(" · %d characters", n)
		} else {
			// Redacted (Anthropic's redacted_thinking) or kept encrypted
			// (a reasoning item with no summary): sent back, never shown.
			label += " · not shown by the provider"
		}
	}
	if it.StopReason != "" && it.StopReason != omni.StatusCompleted {
		label += " · " + it.StopReason
	}
	v.label.SetTextContent(label)
	toggle(v.root, "streaming", it.Streaming)
	if it.Kind == playground.KindPrompt || it.Kind == playground.KindUser {
		of := "sent with the prompt"
		if label == "steering · delivered to the model" {
			of = "sent with the steering"
		}
		a.setImages(v, it.Images, of)
	}
	if !md || a.env.Plain {
		a.setPlain(v, body)
		return
	}
	if body == v.shown && it.Streaming {
		return
	}
	// A streaming reply's last block is parsed and drawn again whole at
	// each update: in one long paragraph that is quadratic (and most of it
	// the collector's work on the parser's garbage). While it streams, an
	// item is drawn again only once four times its last drawing's cost has
	// passed, so drawing takes at most about a fifth of the time; the wait
	// ends in a redraw of its own.
	if it.Streaming && v.mdCost > 0 {
		if wait := 4*v.mdCost - time.Since(v.mdAt); wait > 0 {
			a.redrawLater(v, wait)
			return
		}
	}
	began := time.Now()
	defer func() { v.mdCost, v.mdAt = time.Since(began), time.Now() }()
	keep, fresh := v.md.Update(body, !it.Streaming)
	if keep == len(v.chunks) && len(fresh) == 0 {
		return
	}
	for _, c := range v.chunks[keep:] {
		c.Remove()
	}
	v.chunks = v.chunks[:keep]
	for _, c := range fresh {
		ce := a.el("div", "chunk", "")
		a.mdNodes(ce.Underlying(), c.Nodes, true)
		v.body.AppendChild(ce)
		v.chunks = append(v.chunks, ce)
	}
	v.shown = body
}

// renderFile shows a file the model made: its name, media type and size
// with a Download button, and an image drawn as a prompt's is (setImages:
// from its data: URL, up to MaxImageBytes). The download is made of its
// bytes when the button is pressed, as a Blob, not held as a data: URL
// (the page's policy draws no blob: image, and a file of megabytes would
// sit in the page twice).
func (a *App) renderFile(v *itemView, it *playground.Item) {
	f := it.File
	if v.shown == "" { // a file does not change: drawn once
		v.label.SetTextContent("file · made by the model")
		n := len(f.Data) * 3 / 4 // its bytes: the base64 less its padding
		n -= len(f.Data) - len(strings.TrimRight(f.Data, "="))
		v.body.SetTextContent(f.Name + " · " + f.MimeType + " · " + size(n) + " ")
		v.body.AppendChild(a.button("small", "Download", "data-action", "download", "aria-label", "Download "+f.Name))
		v.shown = f.Name
	}
	a.setImages(v, it.Images, "made by the model")
}

// redrawLater marks v's item dirty once wait has passed, if it is still
// shown (a session opened meanwhile has views of its own).
func (a *App) redrawLater(v *itemView, wait time.Duration) {
	if v.redraw {
		return
	}
	v.redraw = true
	time.AfterFunc(wait, func() {
		a.post(func() {
			v.redraw = false
			if a.views[v.item] == v {
				a.mark(v.item)
			}
		})
	})
}

// setPlain shows body as the text of one text node.
func (a *App) setPlain(v *itemView, body string) {
	if v.shown == body && !v.plain.IsUndefined() {
		return
	}
	switch {
	case v.plain.IsUndefined():
		v.plain = a.doc.Call("createTextNode", body)
		v.body.Underlying().Call("append", v.plain)
	case strings.HasPrefix(body, v.shown):
		v.plain.Call("appendData", body[len(v.shown):]) // streaming: only the new text crosses
	default:
		v.plain.Set("data", body)
	}
	v.shown = body
}

func (a *App) renderRequest(v *itemView, it *playground.Item) {
	r := it.Request
	parts := []string{fmt.Sprintf("request %d", r.N)}
	switch r.Status {
	case "":
		parts = append(parts, "streaming…")
	default:
		parts = append(parts, r.Status)
	}
	if r.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", r.Attempt))
	}
	if r.ErrorMessage != "" {
		parts = append(parts, r.ErrorMessage)
	}
	if r.Status == omni.StatusAuth {
		parts = append(parts, "the provider refused the key: check the API key in Settings")
	}
	if r.Status == omni.StatusCompleted && !r.Answered {
		parts = append(parts, "the model answered nothing")
	}
	if u := r.Usage; u != nil {
		parts = append(parts, fmt.Sprintf("%d tokens (output %d, cache read %d)", u.Total, u.Output, u.CacheRead))
	}
	v.body.SetTextContent(strings.Join(parts, " · "))
	v.root.SetAttribute("data-status", r.Status)
	if it != a.retrying || !a.running || r.RetryInMs == nil {
		if v.countdown != nil {
			v.approval.SetTextContent("")
			v.countdown = nil
		}
		return
	}
	left := time.Duration(*r.RetryInMs)*time.Millisecond - time.Since(r.Ended)
	if left < 0 {
		left = 0
	}
	text := fmt.Sprintf("retrying in %.1f s", left.Seconds())
	if v.countdown != nil {
		v.countdown.SetTextContent(text)
		return
	}
	v.approval.SetTextContent("")
	v.countdown = a.el("span", "countdown", text)
	v.approval.AppendChild(v.countdown)
	v.approval.AppendChild(a.button("small", "Retry now", "data-action", "retry-now"))
	v.approval.AppendChild(a.button("small danger", "Give up", "data-action", "give-up"))
}

func (a *App) renderTool(v *itemView, c *playground.ToolCard) {
	v.name.SetTextContent(c.Name)
	key := v.root.GetAttribute("data-approval-key")
	waiting := a.pending[key] != nil
	if !waiting && v.asking && a.focusIn(v.approval) != nil {
		a.decided = true
	}
	v.asking = waiting
	if waiting {
		v.approval.SetAttribute("aria-label", "Approve the call of "+c.Name)
	}
	show(v.approval, waiting)
	toggle(v.root, "ask", waiting)
	decision := map[string]string{omni.DecisionAllow: "allowed", omni.DecisionDeny: "denied", omni.DecisionForbidden: "forbidden"}[c.Decision]
	switch {
	case c.Decision != "":
	case a.cancelled[key] || c.Cancelled == engine.ReasonUser:
		decision = "approval cancelled by Stop"
	case c.Cancelled != "":
		decision = "approval cancelled: " + c.Cancelled
	}
	if decision == "" && c.CallStop != "" && c.CallStop != omni.StatusCompleted {
		decision = "call " + c.CallStop
	}
	v.decision.SetTextContent(decision)
	v.decision.SetAttribute("data-decision", c.Decision)
	if (a.cancelled[key] || c.Cancelled != "") && c.Decision == "" {
		v.decision.SetAttribute("data-decision", "cancelled")
	}
	status := c.OutputStop
	switch {
	case c.OutputStreaming:
		status = "running"
	case status == "" && waiting:
		status = "awaiting approval"
	case status == "" && c.Decision == omni.DecisionAllow:
		status = "started"
	}
	v.status.SetTextContent(status)
	v.status.SetAttribute("data-status", c.OutputStop)
	show(v.status, status != "")
	show(v.decision, decision != "")
	if !c.Started.IsZero() {
		end := c.Ended
		if end.IsZero() {
			end = time.Now()
		}
		v.timer.SetTextContent(fmt.Sprintf("%.1f s", end.Sub(c.Started).Seconds()))
	}
	a.setLong(v, "args", v.args, v.argsMore, c.Args, &v.shownArgs)
	toggle(v.args, "streaming", c.ArgsStreaming)
	a.setLong(v, "output", v.output, v.outMore, c.Output, &v.shownOut)
	toggle(v.output, "streaming", c.OutputStreaming)
	a.setImages(v, c.Images, "from "+c.Name)
}

// setImages draws imgs (a tool output's, a prompt's) at the end of v's
// item, when they changed: data: images in a box of a fixed size (no
// layout shift when one loads), named by their place and whose they are
// (of, "from read_screenshot"); what is not drawn says why, a remote
// image as a link that is not followed until pressed.
func (a *App) setImages(v *itemView, imgs []string, of string) {
	if sameStrings(imgs, v.shownImgs) {
		return
	}
	v.shownImgs = imgs
	if v.images == nil {
		v.images = a.el("div", "images", "")
		v.root.AppendChild(v.images)
	}
	v.images.SetTextContent("")
	for i, u := range imgs {
		if i == playground.MaxImages {
			v.images.AppendChild(a.el("p", "image-note", fmt.Sprintf("%d more images not drawn", len(imgs)-i)))
			break
		}
		name := fmt.Sprintf("Image %d of %d %s", i+1, len(imgs), of)
		s := playground.ShowImage(u)
		if s.Src != "" {
			img := a.el("img", "shot", "")
			for _, at := range [][2]string{{"alt", name}, {"loading", "lazy"}, {"decoding", "async"}, {"src", s.Src}} {
				img.SetAttribute(at[0], at[1])
			}
			v.images.AppendChild(img)
			continue
		}
		p := a.el("p", "image-note", name+": "+s.Why)
		if s.Link != "" {
			l := a.el("a", "", cut(s.Link, 80))
			for _, at := range [][2]string{{"href", s.Link}, {"target", "_blank"}, {"rel", "noopener noreferrer"}, {"referrerpolicy", "no-referrer"}} {
				l.SetAttribute(at[0], at[1])
			}
			p.Underlying().Call("append", " ", l.Underlying())
		}
		v.images.AppendChild(p)
	}
	show(v.images, len(imgs) > 0)
}

// sameStrings reports whether a and b hold the same strings, comparing a
// pair's bytes only when they are not the same string (an image's data: URL
// may be megabytes, and a streaming output is drawn at each delta).
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || (unsafe.StringData(a[i]) != unsafe.StringData(b[i]) && a[i] != b[i]) {
			return false
		}
	}
	return true
}

// setLong shows s in pre, cut to collapseAt characters (and 24 lines)
// unless the user asked for all of it; more is the button that toggles.
// Counted in bytes, a text of up to 1,200 characters not in ASCII (400
// of Japanese are 1,200 bytes) had a "show all" that showed nothing more.
func (a *App) setLong(v *itemView, part string, pre, more elem, s string, shown *string) {
	show(pre, s != "")
	long := len(s) > collapseAt && utf8.RuneCountInString(s) > collapseAt || strings.Count(s, "\n") > 24
	show(more, long)
	text := s
	if long && !v.expanded[part] {
		text = cutLines(s, collapseAt, 24)
		more.SetTextContent(fmt.Sprintf("show all (%s)", size(len(s))))
	} else if long {
		more.SetTextContent("show less")
	}
	if text != *shown {
		pre.SetTextContent(text)
		*shown = text
	}
}

func cutLines(s string, n, lines int) string {
	s = cut(s, n)
	i := 0
	for k := 0; k < lines; k++ {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:i] + "…"
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
