package anthropic

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/internal/ptest"
)

const cc = `"cache_control":{"type":"ephemeral"}`

// toolUse is a reply that calls look with id.
func toolUse(id string) ptest.Reply {
	return ptest.Reply{Chunks: events(start,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"`+id+`","name":"look","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}`, stop)}
}

func signedThinking(text string) omni.Message {
	m := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, Thinking: text, StopReason: omni.StatusCompleted}}
	m.Payload.Edit().Fidelity = provider.Fidelity(fidSignature, "sig")
	return m
}

var lookTool = []omni.ToolDefinition{{Name: "look", Description: "Looks.", Parameters: omni.RawJSON(`{"type":"object"}`)}}

// The breakpoints of a tool loop, request by request: the system prompt
// as one text block (tools and system cached), the last block of the
// last message, and the last block of the user message before it, where
// the previous request put its last one.
func TestCacheBreakpoints(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{toolUse("toolu_1"), toolUse("toolu_2"), {Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "claude-test"})
	p := engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look.")}, SystemPrompt: "Be brief.", Tools: lookTool}
	run(t, m, p)
	if got, want := string(tr.Requests[0].Body), `{"model":"claude-test","max_tokens":8192,"stream":true,`+
		`"system":[{"type":"text","text":"Be brief.",`+cc+`}],`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"Look.",`+cc+`}]}],`+
		`"tools":[{"name":"look","description":"Looks.","input_schema":{"type":"object"}}]}`; got != want {
		t.Errorf("first request\n got %s\nwant %s", got, want)
	}
	for _, id := range []string{"toolu_1", "toolu_2"} {
		p.NewMessages = []omni.Message{omni.ToolOutput(id, "seen "+id, omni.StatusCompleted)}
		run(t, m, p)
	}
	b := string(tr.Requests[2].Body)
	if got, want := b[strings.Index(b, `"messages"`):strings.Index(b, `,"tools"`)], `"messages":[`+
		`{"role":"user","content":[{"type":"text","text":"Look."}]},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"look","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"seen toolu_1"}],`+cc+`}]},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"look","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"seen toolu_2"}],`+cc+`}]}]`; got != want {
		t.Errorf("third request\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(b, `"system":[{"type":"text","text":"Be brief.",`+cc+`}]`) || strings.Count(b, cc) != 3 {
		t.Errorf("third request: %d breakpoints\n%s", strings.Count(b, cc), b)
	}
}

// A turn of more blocks than the API looks back over (20) before a
// breakpoint: the next request still marks the block where this one's
// last breakpoint was, so the prefix it cached is found.
func TestCachePrefixCarriedOver(t *testing.T) {
	var blocks []string
	for i := 0; i < 25; i++ {
		id := "toolu_" + strconv.Itoa(i)
		blocks = append(blocks, `{"type":"content_block_start","index":`+strconv.Itoa(i)+`,"content_block":{"type":"tool_use","id":"`+id+`","name":"look","input":{}}}`,
			`{"type":"content_block_stop","index":`+strconv.Itoa(i)+`}`)
	}
	first := ptest.Reply{Chunks: events(append(append([]string{start}, blocks...), msgDelta, stop)...)}
	tr := &ptest.Transport{Replies: []ptest.Reply{first, {Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "claude-test"})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look at all.")}, SystemPrompt: "Be brief.", Tools: lookTool})
	var outs []omni.Message
	for i := 0; i < 25; i++ {
		outs = append(outs, omni.ToolOutput("toolu_"+strconv.Itoa(i), "ok", omni.StatusCompleted))
	}
	run(t, m, engine.GenerateParams{NewMessages: outs, SystemPrompt: "Be brief.", Tools: lookTool})
	b0, b1 := string(tr.Requests[0].Body), string(tr.Requests[1].Body)
	tail0 := b0[:strings.LastIndex(b0, cc)]
	msgs0 := tail0[strings.Index(tail0, `"messages"`):]
	msgs1 := b1[strings.Index(b1, `"messages"`):]
	if !strings.HasPrefix(msgs1, msgs0+cc) || strings.Count(b1, cc) != 3 || !strings.HasSuffix(b1[:strings.LastIndex(b1, cc)], `"toolu_24","content":[{"type":"text","text":"ok"}],`) {
		t.Errorf("the second request does not mark the first one's last breakpoint\nfirst  %s\nsecond %s", b0, b1)
	}
}

// A thinking block cannot carry a breakpoint: the block before it does;
// a turn of thinking alone leaves it to the turn before.
func TestCacheThinkingLast(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history []omni.Message
		want    string
	}{
		{"text then thinking", []omni.Message{omni.UserText("go"), omni.AssistantText("So.", omni.StatusCompleted), signedThinking("Hm.")},
			`[{"role":"user","content":[{"type":"text","text":"go",` + cc + `}]},{"role":"assistant","content":[{"type":"text","text":"So.",` + cc + `},{"type":"thinking","thinking":"Hm.","signature":"sig"}]}]`},
		{"thinking alone", []omni.Message{omni.UserText("go"), signedThinking("Hm.")},
			`[{"role":"user","content":[{"type":"text","text":"go",` + cc + `}]},{"role":"assistant","content":[{"type":"thinking","thinking":"Hm.","signature":"sig"}]}]`},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "claude-test"})
		m.LoadHistory(context.Background(), tc.history)
		run(t, m, engine.GenerateParams{})
		b := string(tr.Requests[0].Body)
		if got := b[strings.Index(b, `"messages":`)+11 : strings.LastIndex(b, "}")]; got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// No system prompt: no breakpoint there (and no system); a blank one is
// sent as it was, a string (the API refuses a blank text block); NoCache
// sends no cache_control at all, the system prompt as a string.
func TestCacheNoSystemAndOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noCache bool
		system  string
		want    string
	}{
		{"no system prompt", false, "", `{"model":"m","max_tokens":8192,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Hi.",` + cc + `}]}]}`},
		{"blank system prompt", false, " \n", `{"model":"m","max_tokens":8192,"stream":true,"system":" \n","messages":[{"role":"user","content":[{"type":"text","text":"Hi.",` + cc + `}]}]}`},
		{"NoCache", true, "Be brief.", `{"model":"m","max_tokens":8192,"stream":true,"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Hi."}]}]}`},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "m", NoCache: tc.noCache})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Hi.")}, SystemPrompt: tc.system})
		if got := string(tr.Requests[0].Body); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// NoCache through a tool loop and a compaction's fresh context.
	tr := &ptest.Transport{Replies: []ptest.Reply{toolUse("toolu_1"), {Chunks: events(start, msgDelta, stop)}, {Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m", NoCache: true})
	p := engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look.")}, SystemPrompt: "Be brief.", Tools: lookTool}
	run(t, m, p)
	p.NewMessages = []omni.Message{omni.ToolOutput("toolu_1", "seen", omni.StatusCompleted)}
	run(t, m, p)
	m.Factory()(omni.TokenCounts{}).StreamGenerate(context.Background(), p, func(omni.Message) {})
	for i := range tr.Requests {
		if b := string(tr.Requests[i].Body); strings.Contains(b, "cache_control") {
			t.Errorf("NoCache: request %d: %s", i, b)
		}
	}
}

// CacheTTL "1h" puts the hour's TTL on every breakpoint, through a tool
// loop and a compaction's fresh context (the API wants a longer TTL
// before a shorter one: they are all the same); "5m" is the default's
// body; another value is refused, naming it.
func TestCacheTTL(t *testing.T) {
	const cc1h = `"cache_control":{"type":"ephemeral","ttl":"1h"}`
	tr := &ptest.Transport{Replies: []ptest.Reply{toolUse("toolu_1"), toolUse("toolu_2"), {Chunks: events(start, msgDelta, stop)}, {Chunks: events(start, msgDelta, stop)}}}
	m, err := New(Options{Transport: tr, Model: "m", CacheTTL: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	p := engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look.")}, SystemPrompt: "Be brief.", Tools: lookTool}
	run(t, m, p)
	for _, id := range []string{"toolu_1", "toolu_2"} {
		p.NewMessages = []omni.Message{omni.ToolOutput(id, "seen "+id, omni.StatusCompleted)}
		run(t, m, p)
	}
	m.Factory()(omni.TokenCounts{}).StreamGenerate(context.Background(), p, func(omni.Message) {})
	for i, want := range []int{2, 3, 3, 2} {
		b := string(tr.Requests[i].Body)
		if n := strings.Count(b, cc1h); n != want || strings.Count(b, "cache_control") != want {
			t.Errorf("request %d: %d breakpoints of an hour, want %d\n%s", i, n, want, b)
		}
	}
	if !strings.Contains(string(tr.Requests[2].Body), `"system":[{"type":"text","text":"Be brief.",`+cc1h+`}]`) {
		t.Errorf("no hour's breakpoint on the system prompt: %s", tr.Requests[2].Body)
	}

	bodies := map[string]string{}
	for _, ttl := range []string{"", "5m"} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, err := New(Options{Transport: tr, Model: "m", CacheTTL: ttl})
		if err != nil {
			t.Fatalf("CacheTTL %q: %v", ttl, err)
		}
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Hi.")}, SystemPrompt: "Be brief."})
		bodies[ttl] = string(tr.Requests[0].Body)
	}
	if bodies[""] != bodies["5m"] || strings.Count(bodies["5m"], cc) != 2 {
		t.Errorf(`CacheTTL "5m" sends %s, want the default's %s`, bodies["5m"], bodies[""])
	}

	for _, bad := range []string{"1H", "60m", "300", " 1h"} {
		_, err := New(Options{Transport: &ptest.Transport{}, Model: "m", CacheTTL: bad})
		if err == nil || !strings.Contains(err.Error(), "Options.CacheTTL") || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("CacheTTL %q: %v, want an error naming the option and the value", bad, err)
		}
	}
}

// CacheTTL "1h" sends the anthropic-beta the hour's TTL asked for, after
// the betas of one the caller sends (named in any case), once; the default
// TTL and NoCache send none.
func TestCacheTTLBeta(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		header map[string]string
		want   string
	}{
		{"1h", Options{CacheTTL: "1h"}, nil, "extended-cache-ttl-2025-04-11"},
		{"1h with another beta", Options{CacheTTL: "1h"}, map[string]string{"Anthropic-Beta": "files-api-2025-04-14"}, "files-api-2025-04-14,extended-cache-ttl-2025-04-11"},
		{"1h with it already", Options{CacheTTL: "1h"}, map[string]string{"anthropic-beta": "extended-cache-ttl-2025-04-11"}, "extended-cache-ttl-2025-04-11"},
		{"5m", Options{CacheTTL: "5m"}, nil, ""},
		{"1h, NoCache", Options{CacheTTL: "1h", NoCache: true}, nil, ""},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		o := tc.o
		o.Transport, o.Model, o.Header = tr, "m", tc.header
		m, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Hi.")}})
		if got := tr.Requests[0].Header["anthropic-beta"]; got != tc.want {
			t.Errorf("%s: anthropic-beta %q, want %q", tc.name, got, tc.want)
		}
		if tc.header != nil && len(tc.header) != 1 {
			t.Errorf("%s: the caller's header map was changed: %v", tc.name, tc.header)
		}
	}
}
