//go:build js && wasm

package ui

import (
	"fmt"
	"strings"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
)

// itemView holds the elements of one transcript item.
type itemView struct {
	root, label, body elem
	// tool cards
	name, args, decision, status, approval, output elem
}

// render runs after every batch of posted work: it updates the items that
// changed, the raw stream and the controls.
func (a *App) render() {
	stick := a.nearBottom()
	for _, it := range a.dirty {
		a.renderItem(it)
		delete(a.isDirty, it.ID)
	}
	a.dirty = a.dirty[:0]
	a.log.flush()

	st := a.state()
	a.body.SetAttribute("data-state", st)
	a.statePill.SetAttribute("data-state", st)
	a.statePill.SetTextContent(map[string]string{
		stateIdle: "idle", stateRunning: "running", stateApproval: "waiting for approval", stateStopping: "stopping…",
	}[st])
	if a.tr != nil {
		s := a.tr.Session
		a.tokens.SetTextContent(fmt.Sprintf("session tokens %d · output %d · cache read %d", s.Total, s.Output, s.CacheRead))
	}
	setDisabled(a.send, a.running)
	setDisabled(a.stopBtn, !a.running || a.stop)
	setDisabled(a.reset, a.running)
	show(a.steerForm, a.running)
	a.renderSteers()
	a.noteEl.SetTextContent(a.note)
	if stick {
		t := a.transcript.Underlying()
		t.Set("scrollTop", t.Get("scrollHeight"))
	}
}

func (a *App) nearBottom() bool {
	t := a.transcript.Underlying()
	return t.Get("scrollTop").Float()+t.Get("clientHeight").Float() >= t.Get("scrollHeight").Float()-48
}

func (a *App) renderSteers() {
	a.steerQueue.SetTextContent("")
	for _, s := range a.steers {
		a.steerQueue.AppendChild(a.el("span", "chip", "queued: "+s))
	}
}

func (a *App) view(it *playground.Item) *itemView {
	if v := a.views[it.ID]; v != nil {
		return v
	}
	v := &itemView{}
	switch it.Kind {
	case playground.KindTool:
		a.toolView(v, it.Tool)
	case playground.KindRequest:
		v.root = a.el("div", "request", "")
		v.body = a.el("span", "", "")
		v.root.AppendChild(v.body)
	case playground.KindNotice:
		v.root = a.el("div", "notice", "")
		v.body = v.root
	default:
		v.root = a.el("div", "msg "+string(it.Kind), "")
		v.label = a.el("div", "label", "")
		v.body = a.el("div", "body", "")
		v.root.AppendChild(v.label)
		v.root.AppendChild(v.body)
	}
	v.root.SetAttribute("data-kind", string(it.Kind))
	a.transcript.AppendChild(v.root)
	a.views[it.ID] = v
	return v
}

func (a *App) toolView(v *itemView, c *playground.ToolCard) {
	v.root = a.el("div", "card", "")
	v.root.SetAttribute("data-call-id", c.CallID)
	head := a.el("div", "head", "")
	v.name = a.el("span", "tool-name", "")
	v.args = a.el("code", "args", "")
	v.decision = a.el("span", "badge decision", "")
	v.status = a.el("span", "badge status", "")
	for _, e := range []elem{v.name, v.args, v.decision, v.status} {
		head.AppendChild(e)
	}
	v.approval = a.el("div", "approval", "")
	v.approval.AppendChild(a.el("span", "ask", "Run this tool?"))
	for _, d := range []struct{ decision, label string }{{omni.DecisionAllow, "Allow"}, {omni.DecisionDeny, "Deny"}} {
		b := a.el("button", "btn "+d.decision, d.label)
		b.SetAttribute("type", "button")
		b.SetAttribute("data-decision", d.decision)
		v.approval.AppendChild(b)
	}
	v.output = a.el("pre", "output", "")
	v.root.AppendChild(head)
	v.root.AppendChild(v.approval)
	v.root.AppendChild(v.output)
}

func (a *App) renderItem(it *playground.Item) {
	v := a.view(it)
	switch it.Kind {
	case playground.KindTool:
		a.renderTool(v, it.Tool)
		return
	case playground.KindRequest:
		a.renderRequest(v, it.Request)
		return
	case playground.KindNotice:
		v.body.SetTextContent(it.Body)
		return
	}
	label, body := string(it.Kind), it.Body
	switch it.Kind {
	case playground.KindPrompt:
		label = "you"
	case playground.KindUser:
		label = "user"
		if s := playground.SteeringText(body); s != "" {
			label, body = "steering · delivered to the model", s
		}
	case playground.KindText:
		label = "assistant"
	}
	if it.StopReason != "" && it.StopReason != omni.StatusCompleted {
		label += " · " + it.StopReason
	}
	v.label.SetTextContent(label)
	a.setRich(v.body, body)
	toggle(v.root, "streaming", it.Streaming)
}

func (a *App) renderRequest(v *itemView, r *playground.Request) {
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
	if r.RetryInMs != nil {
		parts = append(parts, fmt.Sprintf("retry in %d ms", *r.RetryInMs))
	}
	if u := r.Usage; u != nil {
		parts = append(parts, fmt.Sprintf("%d tokens (output %d, cache read %d)", u.Total, u.Output, u.CacheRead))
	}
	v.body.SetTextContent(strings.Join(parts, " · "))
	v.root.SetAttribute("data-status", r.Status)
}

func (a *App) renderTool(v *itemView, c *playground.ToolCard) {
	v.name.SetTextContent(c.Name)
	v.args.SetTextContent(c.Args)
	toggle(v.args, "streaming", c.ArgsStreaming)
	waiting := a.pending[c.CallID] != nil
	show(v.approval, waiting)
	toggle(v.root, "ask", waiting)
	decision := map[string]string{omni.DecisionAllow: "allowed", omni.DecisionDeny: "denied", omni.DecisionForbidden: "forbidden"}[c.Decision]
	if decision == "" && c.CallStop != "" && c.CallStop != omni.StatusCompleted {
		decision = "call " + c.CallStop
	}
	v.decision.SetTextContent(decision)
	v.decision.SetAttribute("data-decision", c.Decision)
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
	v.output.SetTextContent(c.Output)
	toggle(v.output, "streaming", c.OutputStreaming)
	show(v.output, c.Output != "")
}
