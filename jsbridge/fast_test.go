//go:build js && wasm

package jsbridge

import (
	"context"
	"strings"
	"syscall/js"
	"testing"
	"unsafe"

	"github.com/floehq/floe/engine/omni"
)

// inboxWrite does what the shim does before a floe_call with text: asks for
// room (op 0) and writes s there.
func inboxWrite(t *testing.T, s string) int32 {
	t.Helper()
	if floeCall(0, int32(len(s)), 0, 0) == 0 {
		t.Fatal("floe_call op 0 refused room for the text")
	}
	return int32(copy(inbox, s))
}

// TestFloeCall checks each operation of the one export against the js.Func
// call it replaces, and that arguments out of range are refused with 0
// rather than a panic (which would end the runtime).
func TestFloeCall(t *testing.T) {
	noPanics(t)
	b, _ := newBridge()
	if fast != b {
		t.Fatal("usePort did not make the bridge the one floe_call serves")
	}

	t.Run("deliver", func(t *testing.T) {
		id, ch := b.waiters.add()
		defer b.waiters.remove(id)
		n := inboxWrite(t, "records: é\U0001F600")
		if floeCall(1, int32(id), n, endMore) != 1 {
			t.Fatal("deliver refused")
		}
		r := <-ch
		if r.json != "records: é\U0001F600" || r.end != endMore || !r.value.IsUndefined() {
			t.Fatalf("got %+v", r)
		}
	})

	t.Run("a long text does not keep its inbox", func(t *testing.T) {
		id, ch := b.waiters.add()
		defer b.waiters.remove(id)
		long := strings.Repeat("x", maxInbox+1)
		n := inboxWrite(t, long)
		at := unsafe.SliceData(inbox)
		if floeCall(1, int32(id), n, endMore) != 1 {
			t.Fatal("deliver refused")
		}
		r := <-ch
		if r.json != long {
			t.Fatalf("got %d bytes, want %d", len(r.json), len(long))
		}
		if inbox != nil {
			t.Fatalf("the inbox keeps %d bytes after a long text", cap(inbox))
		}
		if unsafe.StringData(r.json) != at {
			t.Fatal("the long text was copied out of the inbox instead of taking its memory")
		}
	})

	t.Run("a short text is copied and the inbox kept", func(t *testing.T) {
		id, ch := b.waiters.add()
		defer b.waiters.remove(id)
		n := inboxWrite(t, "short")
		at := unsafe.SliceData(inbox)
		if floeCall(1, int32(id), n, endMore) != 1 {
			t.Fatal("deliver refused")
		}
		r := <-ch
		if unsafe.SliceData(inbox) != at {
			t.Fatal("the inbox was dropped after a short text")
		}
		copy(inbox, "XXXXX") // the next call's text
		if r.json != "short" {
			t.Fatalf("the text changed with the inbox: %q", r.json)
		}
	})

	t.Run("settle", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			ok, n   int32
			text    string
			end     int
			isStr   bool
			wantErr string
		}{
			{"a string", 1, 5, "allow", endDone, true, ""},
			{"undefined", 1, -1, "", endDone, false, ""},
			{"a failure", 0, 4, "boom", endThrew, true, "boom"},
		} {
			id, ch := b.waiters.add()
			if c.n >= 0 {
				inboxWrite(t, c.text)
			}
			if floeCall(2, int32(id), c.ok, c.n) != 1 {
				t.Fatalf("%s: settle refused", c.name)
			}
			r := <-ch
			b.waiters.remove(id)
			if r.end != c.end || r.isStr != c.isStr || r.text != c.text || !r.value.IsUndefined() {
				t.Fatalf("%s: got %+v", c.name, r)
			}
			if c.wantErr != "" && endMessage(r) != c.wantErr {
				t.Fatalf("%s: message %q, want %q", c.name, endMessage(r), c.wantErr)
			}
		}
	})

	t.Run("an approver settled through floe_call", func(t *testing.T) {
		host := js.FuncOf(func(_ js.Value, args []js.Value) any {
			id := int32(args[0].Int())
			later(func() { floeCall(2, id, 1, inboxWrite(t, "forbidden")) })
			return nil
		})
		defer host.Release()
		d, err := b.jsApprover(host.Value)(context.Background(), omni.ToolCallMsg("call_1", "work", "{}"))
		if err != nil || d != "forbidden" {
			t.Fatalf("decision %q, %v; want forbidden", d, err)
		}
	})

	t.Run("pull", func(t *testing.T) {
		p, ticket := ticketP(portOf(b))
		if floeCall(3, 1<<20, int32(ticket), 0) != 1 { // an unknown stream
			t.Fatal("pull refused")
		}
		if v, ok := await(t, p); !ok || !v.IsNull() {
			t.Fatalf("pull of an unknown stream: %v (ok %v), want null (the end)", v, ok)
		}
	})

	t.Run("out of range", func(t *testing.T) {
		big := int32(cap(inbox) + 1)
		for _, c := range []struct {
			name        string
			op, a, b, c int32
		}{
			{"negative room", 0, -1, 0, 0},
			{"deliver past the inbox", 1, 1, big, endMore},
			{"deliver a negative length", 1, 1, -1, endMore},
			{"settle past the inbox", 2, 1, 1, big},
			{"an unknown op", 9, 0, 0, 0},
		} {
			if got := floeCall(c.op, c.a, c.b, c.c); got != 0 {
				t.Errorf("%s: floe_call answered %d, want 0", c.name, got)
			}
		}
		if floeCall(1, 1<<30, 0, endMore) != 1 { // an unknown pump: dropped, as by deliver
			t.Error("deliver to an unknown pump was refused")
		}
	})
}

// TestCallBufFits checks that a typical tool call, stamped, is written
// into callBuf's one allocation, as records (appendCall) and as JSON (the
// J record of a call the records do not carry), as the approver and the
// tool's start do.
func TestCallBufFits(t *testing.T) {
	m := omni.ToolCallMsg("call_0123456789abcdefghijklmn", "read_file", `{"path":"src/components/transcript/message-list.tsx","start_line":120,"end_line":240}`)
	m.Timestamp = "2026-12-01T10:00:00.000Z"
	if n := len(m.AppendJSON(nil)) + len("J0000000000:"); n > callBuf {
		t.Fatalf("a typical tool call is %d bytes as a J record, more than callBuf (%d)", n, callBuf)
	}
	if b := appendCall(nil, &m); b[len("t24:")+len(m.Timestamp)] != recToolCall {
		t.Fatalf("a typical tool call is not a C record: %q", b)
	}
	if a := testing.AllocsPerRun(20, func() { _ = appendCall(make([]byte, 0, callBuf), &m) }); a > 1 {
		t.Fatalf("writing a tool call allocates %v times, want 1", a)
	}
	if a := testing.AllocsPerRun(20, func() { _ = appendCall(nil, &m) }); a < 3 {
		t.Fatalf("from nothing, writing a tool call allocates %v times: callBuf saves little", a)
	}
}
