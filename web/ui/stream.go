//go:build js && wasm

package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
	"honnef.co/go/js/dom/v2"
)

// maxRows bounds the raw stream panel; older rows are dropped.
const maxRows = 1500

// streamLog is the raw stream panel: one row per message in stream order.
// Consecutive deltas of the same fragment share a row with a count, so the
// order stays readable. A row is a button named by its number, type and
// details; pressed, it shows its message's JSON (a row of deltas, its last
// delta's) below it.
type streamLog struct {
	a       *App
	list    elem
	count   elem
	pending []omni.Message
	n       int      // messages seen
	kept    []logRow // the rows shown, in order
	last    elem     // last row
	lastKey string   // fragment key of the last row when it holds deltas
	lastN   int
	stale   bool // the last row does not show lastN and its last message yet
	moved   bool // rows came since the list was last scrolled to its end
}

// logRow is a row of the stream panel.
type logRow struct {
	seq  int
	m    omni.Message // the row's message; its last delta's
	li   elem
	json elem // the JSON shown; nil when the row is closed
}

func newStreamLog(a *App, list, count elem) *streamLog {
	s := &streamLog{a: a, list: list, count: count}
	list.AddEventListener("click", false, func(ev dom.Event) {
		b := wrap(ev.Underlying().Get("target").Call("closest", "button[data-seq]"))
		if b == nil {
			return
		}
		seq, _ := strconv.Atoi(b.GetAttribute("data-seq"))
		a.post(func() { s.toggle(seq, b) })
	})
	return s
}

// toggle opens or closes the JSON of the row seq, whose button is b.
func (s *streamLog) toggle(seq int, b elem) {
	var r *logRow
	for i := range s.kept {
		if s.kept[i].seq == seq {
			r = &s.kept[i]
			break
		}
	}
	if r == nil {
		return
	}
	if r.json != nil {
		r.json.Remove()
		r.json = nil
	} else {
		r.json = s.a.el("pre", "json", "")
		r.li.AppendChild(r.json)
		s.showJSON(r)
	}
	b.SetAttribute("aria-expanded", strconv.FormatBool(r.json != nil))
}

func (s *streamLog) showJSON(r *logRow) {
	if r.json != nil {
		b, _ := r.m.MarshalJSON()
		r.json.SetTextContent(string(b))
	}
}

func (s *streamLog) add(m omni.Message) { s.pending = append(s.pending, m) }

func (s *streamLog) clear() {
	s.list.SetTextContent("")
	s.pending, s.n, s.kept, s.last, s.lastKey, s.stale = nil, 0, nil, nil, "", false
	s.count.SetTextContent("0")
}

func (s *streamLog) flush() {
	if len(s.pending) == 0 {
		return
	}
	for _, m := range s.pending {
		s.n++
		s.row(m)
	}
	s.settle()
	s.pending = s.pending[:0]
	if n := len(s.kept) - maxRows; n > 0 {
		for _, r := range s.kept[:n] {
			r.li.Remove()
		}
		s.kept = append(s.kept[:0], s.kept[n:]...)
	}
	s.count.SetTextContent(fmt.Sprint(s.n))
	s.moved = true
}

// scrollToEnd scrolls the list to its last row, if rows came since the
// last time (App.scrollSoon calls it once a frame).
func (s *streamLog) scrollToEnd() {
	if !s.moved {
		return
	}
	s.moved = false
	l := s.list.Underlying()
	l.Set("scrollTop", l.Get("scrollHeight"))
}

func (s *streamLog) row(m omni.Message) {
	p := &m.Payload
	key := ""
	if m.IsPartial() && p.EventType == omni.EventDelta {
		key = p.Type + "/" + p.ToolCallID
	}
	if key != "" && key == s.lastKey && s.last != nil {
		// Drawn once a flush (settle): a long reply's deltas each wrote
		// the row's count, a call into the page apiece.
		s.lastN++
		s.kept[len(s.kept)-1].m, s.stale = m, true
		return
	}
	s.settle()
	a := s.a
	li := a.el("li", "", "")
	d := detail(m)
	if key != "" {
		d = "delta"
	}
	li.AppendChild(a.rowButton("data-seq", s.n, m, d))
	s.list.AppendChild(li)
	s.kept = append(s.kept, logRow{seq: s.n, m: m, li: li})
	s.last, s.lastKey, s.lastN = li, key, 1
}

// rowButton is the button of a Stream or Trace row: its number n (in the
// attribute attr too), the message's type and the details d; pressed, it
// shows the message's JSON.
func (a *App) rowButton(attr string, n int, m omni.Message, d string) elem {
	kind := "model"
	switch {
	case m.Type == omni.TypeEventMsg:
		kind = "event"
	case m.IsPartial():
		kind = "partial"
	case m.Type == omni.TypeSessionMeta:
		kind = "meta"
	}
	b := a.el("button", "row", "")
	b.SetAttribute("type", "button")
	b.SetAttribute("tabindex", "-1") // reached with the arrow keys (app.js)
	b.SetAttribute(attr, strconv.Itoa(n))
	b.SetAttribute("aria-expanded", "false")
	name := m.Payload.Type
	if name == "" {
		name = m.Type
	}
	b.AppendChild(a.el("span", "seq", strconv.Itoa(n)))
	b.AppendChild(a.el("span", "type "+kind, name))
	b.AppendChild(a.el("span", "detail", d))
	return b
}

// settle draws the deltas merged into the last row since it was drawn.
func (s *streamLog) settle() {
	if !s.stale || s.last == nil {
		return
	}
	s.stale = false
	wrap(s.last.Call("querySelector", ".detail")).SetTextContent(fmt.Sprintf("delta ×%d", s.lastN))
	s.showJSON(&s.kept[len(s.kept)-1])
}

// detail is a short description of m for the raw stream panel.
func detail(m omni.Message) string {
	p := &m.Payload
	var parts []string
	model := m.Type == omni.TypeModelMsg && !m.IsPartial()
	if model {
		parts = append(parts, p.Role)
	}
	if p.EventType != "" {
		parts = append(parts, p.EventType)
	}
	if p.ToolCallID != "" {
		parts = append(parts, p.ToolCallID)
	}
	for _, s := range []string{p.Name, p.Decision(), p.Status(), p.Reason(), p.StopReason} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if p.Type == omni.TokenUsage && p.Request() != nil {
		parts = append(parts, fmt.Sprintf("total %d", p.Request().Total))
	}
	if len(m.Origin) > 0 {
		parts = append(parts, "origin "+strings.Join(m.Origin, "→"))
	}
	if b := p.Body(); model && b != "" {
		parts = append(parts, size(len(b)))
	}
	return strings.Join(parts, " · ")
}
