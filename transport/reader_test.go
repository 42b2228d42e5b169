package transport

import (
	"io"
	"strings"
	"testing"
)

func TestReaderParsesWhatChannelsWrite(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	var b strings.Builder
	b.Write(c.Publish(Event{Data: []byte(`{"a":1}`)}).Wire)
	b.Write(ping)
	b.Write(c.Publish(Event{Name: EventServer, Data: []byte("{\"b\":\n2}")}).Wire)
	b.WriteString("id: e-3\ndata: cut off")
	rd := NewReader(strings.NewReader(b.String()))
	want := []Received{{ID: "e-1", Data: `{"a":1}`}, {Comment: "ping"}, {ID: "e-2", Name: EventServer, Data: "{\"b\":\n2}"}}
	for i, w := range want {
		got, err := rd.Next()
		if err != nil || got != w {
			t.Fatalf("event %d: %+v, %v; want %+v", i, got, err, w)
		}
	}
	if _, err := rd.Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut-off event: %v", err)
	}
}
