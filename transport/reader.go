package transport

import (
	"bufio"
	"io"
	"strings"
)

// Received is one event as an SSE client parses it. Comment is set (and
// the rest empty) for a comment line such as the heartbeat.
type Received struct {
	ID      string
	Name    string
	Data    string
	Comment string
}

// Reader parses an SSE stream (the subset of the HTML standard's event
// stream format this transport writes: id, event, data, comments). It is
// the client side that tests and Go clients use; not safe for concurrent
// use.
type Reader struct {
	r *bufio.Reader
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// Next returns the next event or comment; io.EOF at the end of the stream
// (an event cut off by the end is dropped, as a browser does).
func (rd *Reader) Next() (Received, error) {
	var ev Received
	seen, data := false, false
	for {
		line, err := rd.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line != "" {
				err = io.ErrUnexpectedEOF
			}
			return Received{}, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if seen {
				return ev, nil
			}
			continue
		}
		if c, ok := strings.CutPrefix(line, ":"); ok {
			if !seen {
				return Received{Comment: strings.TrimPrefix(c, " ")}, nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Name = value
		case "data":
			if data {
				ev.Data += "\n"
			}
			ev.Data += value
			data = true
		}
	}
}
