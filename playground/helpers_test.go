package playground

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/floehq/floe/engine/omni"
)

// recorder collects emitted messages; safe for concurrent use.
type recorder struct {
	mu   sync.Mutex
	msgs []omni.Message
}

func (r *recorder) emit(m omni.Message) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}

func (r *recorder) all() []omni.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]omni.Message(nil), r.msgs...)
}

// cancelAfter is a Pace that lets n waits pass and then cancels the context
// (through cancel) and reports the wait as interrupted.
func cancelAfter(n int, cancel context.CancelFunc) Pace {
	var mu sync.Mutex
	return func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		if n == 0 {
			cancel()
			return false
		}
		n--
		return true
	}
}

// checkDiscipline fails unless msgs follow PROTOCOL.md P-6/P-7 for each
// producer: start, deltas, stop, then the complete message whose body is the
// concatenation of the deltas; and every message is stamped.
func checkDiscipline(t *testing.T, msgs []omni.Message) {
	t.Helper()
	type frag struct {
		body string
		stop bool
	}
	open := map[string]*frag{}
	for i, m := range msgs {
		if _, err := time.Parse(omni.TimestampLayout, m.Timestamp); err != nil {
			t.Errorf("msg %d: timestamp %q: %v", i, m.Timestamp, err)
		}
		p := m.Payload
		key := fmt.Sprint(strings.TrimPrefix(p.Type, "partial_"), "/", p.ToolCallID)
		if m.IsPartial() {
			f := open[key]
			switch p.EventType {
			case omni.EventStart:
				if f != nil {
					t.Errorf("msg %d: start while %s is open", i, key)
				}
				open[key] = &frag{}
			case omni.EventDelta:
				if f == nil || f.stop {
					t.Fatalf("msg %d: delta outside a fragment of %s", i, key)
				}
				if !utf8.ValidString(p.Body()) {
					t.Errorf("msg %d: delta %q of %s is not valid UTF-8 (a character cut in two)", i, p.Body(), key)
				}
				f.body += p.Body()
			case omni.EventStop:
				if f == nil || f.stop {
					t.Fatalf("msg %d: stop outside a fragment of %s", i, key)
				}
				f.stop = true
			}
			continue
		}
		if f := open[key]; f != nil {
			if !f.stop {
				t.Errorf("msg %d: complete %s before its stop", i, key)
			}
			if f.body != p.Body() {
				t.Errorf("msg %d: complete %s body %q, deltas gave %q", i, key, p.Body(), f.body)
			}
			delete(open, key)
		}
	}
	for k := range open {
		t.Errorf("fragment %s never completed", k)
	}
}

// kinds lists the payload types of the complete messages and events.
func kinds(msgs []omni.Message) []string {
	var out []string
	for _, m := range msgs {
		if !m.IsPartial() {
			s := m.Payload.Type
			if s == omni.ToolCall || s == omni.ToolCallOutput {
				s += ":" + m.Payload.ToolCallID
			}
			out = append(out, s)
		}
	}
	return out
}
