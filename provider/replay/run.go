package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

// Model is what the runner needs of an adapter.
type Model interface {
	engine.LLM
	Usage() provider.Usage
}

// NewModel returns the adapter for a case's provider, talking to baseURL.
func NewModel(providerName, baseURL string, t provider.Transport) (Model, error) {
	switch providerName {
	case "openai-chat":
		return openai.New(openai.Options{Transport: t, BaseURL: baseURL, Model: "replay-model", APIKey: "replay-key"})
	case "openai-responses":
		return responses.New(responses.Options{Transport: t, BaseURL: baseURL, Model: "replay-model", APIKey: "replay-key"})
	case "anthropic":
		return anthropic.New(anthropic.Options{Transport: t, BaseURL: baseURL, Model: "replay-model", APIKey: "replay-key"})
	}
	return nil, errors.New("unknown provider " + strconv.Quote(providerName) + ` (want "openai-chat", "openai-responses" or "anthropic")`)
}

// Split is one way of delivering a body: the sizes of successive reads.
type Split struct {
	Name  string // "chunks", "whole", "1-byte"
	Sizes []int  // nil = whole body in one read
	One   bool   // 1-byte reads
}

// Splits returns the deliveries a case is run with: its chunks when it
// names them, else the whole body in one read and 1-byte reads.
func Splits(c *Case) []Split {
	if len(c.Response.Chunks) > 0 {
		return []Split{{Name: "chunks", Sizes: c.Response.Chunks}}
	}
	return []Split{{Name: "whole"}, {Name: "1-byte", One: true}}
}

// Run runs c with every split and returns the first difference, or nil.
func Run(ctx context.Context, c *Case) error {
	for _, s := range Splits(c) {
		if err := RunSplit(ctx, c, s); err != nil {
			if len(Splits(c)) > 1 {
				return errors.New(err.Error() + " [" + s.Name + " reads]")
			}
			return err
		}
	}
	return nil
}

// Result is what one run of an adapter produced.
type Result struct {
	Messages []omni.Message
	Outcome  engine.Outcome
	Usage    provider.Usage
	Request  []byte // the request body the adapter sent
}

// RunSplit serves c's response with the split s and checks the result.
func RunSplit(ctx context.Context, c *Case, s Split) error {
	res, err := Replay(ctx, c, s)
	if err != nil {
		return err
	}
	return Check(c, res)
}

// Replay serves c's response on a loopback server with the split s and
// runs the adapter for c.Provider against it through the native
// Transport.
func Replay(ctx context.Context, c *Case, s Split) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv, err := serve(c, s)
	if err != nil {
		return nil, err
	}
	defer srv.close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	native := nethttp.New(client)
	t := provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		resp, err := native.RoundTrip(ctx, req)
		if err == nil {
			resp.Body = &splitReader{src: resp.Body, srv: srv, sizes: s.Sizes, one: s.One}
		}
		return resp, err
	})
	m, err := NewModel(c.Provider, srv.url, t)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	res.Outcome = m.StreamGenerate(ctx, engine.GenerateParams{
		NewMessages:  []omni.Message{omni.UserText("Replay the recorded response.")},
		SystemPrompt: "You are replaying a recording.",
		Tools:        []omni.ToolDefinition{{Name: "get_weather", Description: "Weather of a city.", Parameters: omni.RawJSON(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}, func(msg omni.Message) { res.Messages = append(res.Messages, msg) })
	res.Usage = m.Usage()
	res.Request = srv.request()
	if ctx.Err() != nil {
		return nil, errors.New("the replay did not finish within 60 s")
	}
	return res, nil
}

// splitReader delivers the body in the reads a split names and tells the
// server how far the adapter has read, so that the server writes a chunk
// only once the previous one was consumed (each read then sees one chunk).
type splitReader struct {
	src   io.ReadCloser
	srv   *server
	sizes []int
	one   bool
	left  int // bytes left of the current named read
	read  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.one {
		p = p[:1]
	} else if r.sizes != nil {
		if r.left == 0 && len(r.sizes) > 0 {
			r.left, r.sizes = r.sizes[0], r.sizes[1:]
		}
		if r.left > 0 && len(p) > r.left {
			p = p[:r.left]
		}
	}
	n, err := r.src.Read(p)
	r.left -= n
	if r.left < 0 {
		r.left = 0
	}
	r.read += n
	r.srv.consumed(r.read)
	return n, err
}

func (r *splitReader) Close() error { return r.src.Close() }

// server is a one-connection HTTP/1.1 server that writes a case's response
// by hand: chunked transfer coding, one HTTP chunk per named read, and for
// end "error" a connection reset instead of the terminating chunk.
type server struct {
	ln  net.Listener
	url string

	mu   sync.Mutex
	cond *sync.Cond
	got  int // body bytes the client has read
	done bool
	req  []byte
	wg   sync.WaitGroup
}

func serve(c *Case, s Split) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &server{ln: ln, url: "http://" + ln.Addr().String() + "/v1"}
	srv.cond = sync.NewCond(&srv.mu)
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		srv.respond(conn.(*net.TCPConn), c, s)
	}()
	return srv, nil
}

func (srv *server) consumed(n int) {
	srv.mu.Lock()
	srv.got = n
	srv.mu.Unlock()
	srv.cond.Broadcast()
}

// waitFor blocks until the client has read n body bytes or went away.
func (srv *server) waitFor(n int) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for srv.got < n && !srv.done {
		srv.cond.Wait()
	}
	return !srv.done
}

func (srv *server) request() []byte {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.req
}

func (srv *server) close() {
	srv.mu.Lock()
	srv.done = true
	srv.mu.Unlock()
	srv.cond.Broadcast()
	srv.ln.Close()
	srv.wg.Wait()
}

func (srv *server) respond(conn *net.TCPConn, c *Case, s Split) {
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	body, _ := io.ReadAll(req.Body)
	srv.mu.Lock()
	srv.req = body
	srv.mu.Unlock()

	r := &c.Response
	var h strings.Builder
	h.WriteString("HTTP/1.1 " + strconv.Itoa(r.Status) + " " + http.StatusText(r.Status) + "\r\n")
	for k, v := range r.Headers {
		switch strings.ToLower(k) {
		case "content-length", "transfer-encoding", "connection":
			continue
		}
		h.WriteString(k + ": " + v + "\r\n")
	}
	h.WriteString("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
	if _, err := conn.Write([]byte(h.String())); err != nil {
		return
	}
	data := []byte(r.Body)
	sizes := s.Sizes
	if sizes == nil && len(data) > 0 {
		sizes = []int{len(data)}
	}
	off := 0
	for _, n := range sizes {
		chunk := strconv.FormatInt(int64(n), 16) + "\r\n" + string(data[off:off+n]) + "\r\n"
		if _, err := conn.Write([]byte(chunk)); err != nil {
			return
		}
		off += n
		if s.Sizes != nil && !srv.waitFor(off) {
			return
		}
	}
	if r.End == "error" {
		srv.waitFor(off)
		conn.SetLinger(0) // close with a reset, without the terminating chunk
		return
	}
	conn.Write([]byte("0\r\n\r\n"))
}

// Check compares a result with the case's expectation and the streaming
// discipline; it returns the first difference.
func Check(c *Case, res *Result) error {
	ex := &c.Expect
	if len(res.Request) > 0 && !json.Valid(res.Request) {
		return errors.New("the adapter sent a request body that is not JSON: " + clip(string(res.Request)))
	}
	var d omni.Discipline
	for i, m := range res.Messages {
		if err := m.Validate(); err != nil {
			return errors.New("message " + strconv.Itoa(i) + " is invalid: " + err.Error() + ": " + encode(m))
		}
		if err := d.Check(m); err != nil {
			return errors.New("message " + strconv.Itoa(i) + ": " + err.Error())
		}
	}
	if err := d.End(); err != nil {
		return errors.New("at the end: " + err.Error())
	}
	out := res.Outcome
	if !ex.Outcome.Status.Has(string(out.Status)) {
		return errors.New("outcome " + quote(string(out.Status)) + " (" + out.ErrorMessage + "), want " + ex.Outcome.Status.String())
	}
	if sub := ex.Outcome.ErrorMessageContains; sub != "" && !strings.Contains(out.ErrorMessage, sub) {
		return errors.New("error message " + quote(out.ErrorMessage) + " lacks " + quote(sub))
	}
	var text, thinking strings.Builder
	var calls []omni.Message
	var usage *omni.Message
	for i := range res.Messages {
		m := &res.Messages[i]
		switch {
		case m.IsModel(omni.Text):
			text.WriteString(m.Payload.Text)
		case m.IsModel(omni.Thinking):
			thinking.WriteString(m.Payload.Thinking)
		case m.IsModel(omni.ToolCall):
			calls = append(calls, *m)
		case m.IsEvent(omni.TokenUsage):
			usage = m
		}
	}
	if err := checkString("text", ex.Text, text.String()); err != nil {
		return err
	}
	if err := checkString("thinking", ex.Thinking, thinking.String()); err != nil {
		return err
	}
	if ex.HasToolCalls {
		if len(calls) != len(ex.ToolCalls) {
			return errors.New(strconv.Itoa(len(calls)) + " tool calls " + describeCalls(calls) + ", want " + strconv.Itoa(len(ex.ToolCalls)))
		}
		for i, want := range ex.ToolCalls {
			p := &calls[i].Payload
			n := "tool call " + strconv.Itoa(i)
			if len(want.ID) > 0 && !want.ID.Has(p.ToolCallID) {
				return errors.New(n + " id " + quote(p.ToolCallID) + ", want " + want.ID.String())
			}
			if len(want.Name) > 0 && !want.Name.Has(p.Name) {
				return errors.New(n + " name " + quote(p.Name) + ", want " + want.Name.String())
			}
			if len(want.Arguments) > 0 && !want.Arguments.Has(p.Arguments) {
				return errors.New(n + " arguments " + quote(p.Arguments) + ", want " + want.Arguments.String())
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range calls {
		if ids[m.Payload.ToolCallID] {
			return errors.New("tool call id " + quote(m.Payload.ToolCallID) + " used twice")
		}
		ids[m.Payload.ToolCallID] = true
	}
	if out.Status == omni.StatusCompleted {
		if len(res.Messages) == 0 || !res.Messages[len(res.Messages)-1].IsEvent(omni.TokenUsage) {
			return errors.New("completed, but the last message is not token_usage")
		}
	}
	if ex.HasUsage && usage != nil {
		r := usage.Payload.Request()
		got := map[string]int64{"output": r.Output, "cache_read": r.CacheRead, "cache_write": r.CacheWrite, "input": res.Usage.Input}
		for _, k := range []string{"input", "output", "cache_read", "cache_write"} {
			want, ok := ex.Usage[k]
			if ok && got[k] != want {
				return errors.New("usage " + k + " " + strconv.FormatInt(got[k], 10) + ", want " + strconv.FormatInt(want, 10))
			}
		}
	}
	return nil
}

func checkString(what string, want json.RawMessage, got string) error {
	if want == nil {
		return nil
	}
	var w *string
	if err := json.Unmarshal(want, &w); err != nil {
		return errors.New("expect." + what + " is neither a string nor null")
	}
	if w == nil && got != "" {
		return errors.New(what + " " + clip(quote(got)) + ", want none")
	}
	if w != nil && got != *w {
		return errors.New(what + " " + clip(quote(got)) + ", want " + clip(quote(*w)) + firstDiff(got, *w))
	}
	return nil
}

func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return " (they differ from byte " + strconv.Itoa(i) + ")"
}

func describeCalls(calls []omni.Message) string {
	s := make([]string, len(calls))
	for i, m := range calls {
		s[i] = m.Payload.Name + "(" + m.Payload.ToolCallID + ")"
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func encode(m omni.Message) string { return clip(string(m.AppendJSON(nil))) }

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
