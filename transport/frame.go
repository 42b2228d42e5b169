package transport

import (
	"bytes"
	"unicode/utf8"
)

// EventServer is the SSE event name of server events (TRANSPORT.md §4).
// Session messages are unnamed events.
const EventServer = "server_event"

// Event is one event to publish or send: Name is "" for a session message or
// EventServer; Data is its JSON text (one line; a newline inside becomes a
// further data: line, which SSE joins back with "\n").
type Event struct {
	Name string
	Data []byte
}

// Frame is an event as a channel numbered and encoded it.
type Frame struct {
	Seq   uint64
	ID    string
	Event Event
	Wire  []byte // "id: …\n[event: …\n]data: …\n\n"
	Units int    // length of Data in UTF-16 code units (T-7's "units of string length")
}

// ping is the heartbeat comment (T-11).
var ping = []byte(": ping\n\n")

func encodeFrame(id string, ev Event) []byte {
	n := len(id) + len(ev.Data) + len(ev.Name) + 24
	b := make([]byte, 0, n)
	b = append(b, "id: "...)
	b = append(b, id...)
	b = append(b, '\n')
	if ev.Name != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Name...)
		b = append(b, '\n')
	}
	data := ev.Data
	for {
		line := data
		i := bytes.IndexByte(data, '\n')
		if i >= 0 {
			line = data[:i]
		}
		b = append(b, "data: "...)
		b = append(b, bytes.TrimSuffix(line, []byte{'\r'})...)
		b = append(b, '\n')
		if i < 0 {
			break
		}
		data = data[i+1:]
	}
	return append(b, '\n')
}

// utf16Len is the length of b as a JavaScript string would count it: one
// unit per UTF-8 sequence of a BMP character (or invalid byte), two for a
// character outside the BMP.
func utf16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
