//go:build js && wasm

package ui

import (
	"fmt"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// maxRows bounds the raw stream panel; older rows are dropped.
const maxRows = 1500

// streamLog is the raw stream panel: one row per message in stream order.
// Consecutive deltas of the same fragment share a row with a count, so the
// order stays readable; the row's tooltip is the last message's JSON.
type streamLog struct {
	a       *App
	list    elem
	count   elem
	pending []omni.Message
	n       int // messages seen
	rows    int
	last    elem   // last row
	lastKey string // fragment key of the last row when it holds deltas
	lastN   int
	lastMsg omni.Message // the last delta merged into the last row
	stale   bool         // the last row does not show lastN and lastMsg yet
	moved   bool         // rows came since the list was last scrolled to its end
}

func newStreamLog(a *App, list, count elem) *streamLog {
	return &streamLog{a: a, list: list, count: count}
}

func (s *streamLog) add(m omni.Message) { s.pending = append(s.pending, m) }

func (s *streamLog) clear() {
	s.list.SetTextContent("")
	s.pending, s.n, s.rows, s.last, s.lastKey, s.stale = nil, 0, 0, nil, "", false
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
	for s.rows > maxRows {
		s.list.Get("firstElementChild").Call("remove")
		s.rows--
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
		// the row's count and title, three calls into the page apiece.
		s.lastN++
		s.lastMsg, s.stale = m, true
		return
	}
	s.settle()
	b, _ := m.MarshalJSON()
	a := s.a
	li := a.el("li", "", "")
	li.SetAttribute("title", string(b))
	li.AppendChild(a.el("span", "seq", fmt.Sprint(s.n)))
	kind := "model"
	switch {
	case m.Type == omni.TypeEventMsg:
		kind = "event"
	case m.IsPartial():
		kind = "partial"
	case m.Type == omni.TypeSessionMeta:
		kind = "meta"
	}
	name := p.Type
	if name == "" {
		name = m.Type
	}
	li.AppendChild(a.el("span", "type "+kind, name))
	li.AppendChild(a.el("span", "detail", detail(m)))
	s.list.AppendChild(li)
	s.rows++
	s.last, s.lastKey, s.lastN = li, key, 1
	if key != "" {
		wrap(s.last.Call("querySelector", ".detail")).SetTextContent("delta")
	}
}

// settle draws the deltas merged into the last row since it was drawn.
func (s *streamLog) settle() {
	if !s.stale || s.last == nil {
		return
	}
	s.stale = false
	wrap(s.last.Call("querySelector", ".detail")).SetTextContent(fmt.Sprintf("delta ×%d", s.lastN))
	b, _ := s.lastMsg.MarshalJSON()
	s.last.SetAttribute("title", string(b))
}

// detail is a short description of m for the raw stream panel.
func detail(m omni.Message) string {
	p := &m.Payload
	var parts []string
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
	return strings.Join(parts, " · ")
}
