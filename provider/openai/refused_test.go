//go:build !js

package openai_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
)

// A base URL of a port nothing listens on (a wrong port): each attempt
// ends timeout, which ENGINE.md §10 retries, and its request_end says
// what happened (the URL, without the key, and that the connection was
// refused) and, but the last, the wait before the next (retry_in_ms: 2,
// 4, 8, 16, 30 s, about a minute in all with the defaults);
// Config.MaxReconnects -1 fails at the first attempt, as its doc says.
func TestRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		reconnects int
		waits      []int
		reason     string
	}{
		{0, []int{2000, 4000, 8000, 16000, 30000}, "reconnect failed after 5 retries"},
		{-1, nil, "reconnect failed after 0 retries"},
	} {
		llm, err := openai.New(openai.Options{Transport: nethttp.New(nil), Model: "m", BaseURL: "http://" + addr + "/v1", APIKey: "sk-secret"})
		if err != nil {
			t.Fatal(err)
		}
		clock := enginetest.NewClock(time.Date(2026, 11, 30, 4, 9, 45, 0, time.UTC)) // its Sleep returns at once
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("refused"), LLM: llm, Clock: clock, MaxReconnects: c.reconnects})
		if err != nil {
			t.Fatal(err)
		}
		stream, err := s.Run(context.Background(), []omni.Message{omni.UserText("Hi")}, engine.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var waits []int
		var ends int
		var reason string
		for m := range stream {
			p := m.Payload
			switch {
			case m.IsEvent(omni.RequestEnd):
				ends++
				msg := p.ErrorMessage()
				if p.Status() != omni.StatusTimeout || !strings.Contains(msg, "http://"+addr+"/v1/chat/completions") || !strings.Contains(msg, "refused") || strings.Contains(msg, "sk-secret") {
					t.Errorf("MaxReconnects %d: request_end %s %q: want timeout, naming the URL and the refused connection, not the key", c.reconnects, p.Status(), msg)
				}
				if r := p.RetryInMs(); r != nil {
					waits = append(waits, *r)
				}
			case m.IsEvent(omni.Abort):
				reason = p.Reason()
			}
		}
		s.Close()
		if ends != len(c.waits)+1 || len(waits) != len(c.waits) || reason != c.reason {
			t.Errorf("MaxReconnects %d: %d attempts, retry_in_ms %v, abort %q; want %d, %v, %q", c.reconnects, ends, waits, reason, len(c.waits)+1, c.waits, c.reason)
		}
		for i := range waits {
			if i < len(c.waits) && waits[i] != c.waits[i] {
				t.Errorf("MaxReconnects %d: retry_in_ms %v, want %v", c.reconnects, waits, c.waits)
				break
			}
		}
	}
}
