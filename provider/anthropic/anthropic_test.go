package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// events frames Anthropic events (event: line plus data).
func events(payloads ...string) []string {
	out := make([]string, len(payloads))
	for i, p := range payloads {
		var v struct{ Type string }
		json.Unmarshal([]byte(p), &v)
		out[i] = "event: " + v.Type + "\ndata: " + p + "\n\n"
	}
	return out
}

var (
	start    = `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":30,"cache_read_input_tokens":100,"cache_creation_input_tokens":7,"output_tokens":1}}}`
	msgDelta = `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12}}`
	stop     = `{"type":"message_stop"}`
)

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func run(t *testing.T, m *Model, p engine.GenerateParams) (*ptest.Collector, engine.Outcome) {
	t.Helper()
	c := &ptest.Collector{T: t}
	out := m.StreamGenerate(context.Background(), p, c.Emit)
	c.End()
	return c, out
}

// Thinking comes back with its signature, redacted thinking as is, tool
// results first in the user turn with their images; the request carries
// the system prompt, tools, the thinking budget and the headers.
func TestRequestMapping(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: events(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Plan."}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"123"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Looking."}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"look","input":{}}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
			`{"type":"content_block_stop","index":3}`,
			msgDelta, stop)},
		{Chunks: events(start, msgDelta, stop)},
	}}
	m, err := New(Options{Transport: tr, Model: "claude-test", APIKey: "sk-ant", BrowserAccess: true, BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tools := []omni.ToolDefinition{{Name: "look", Description: "Looks.", Parameters: omni.RawJSON(`{"type":"object"}`)}}
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look.")}, SystemPrompt: "Be brief.", Tools: tools, ThinkingLevel: "medium"})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if c.Text(omni.Thinking) != "Plan." || c.Text(omni.Text) != "Looking." {
		t.Errorf("thinking %q text %q", c.Text(omni.Thinking), c.Text(omni.Text))
	}
	if got, want := js(c.Last().Payload.Rest.Request), `{"cache_read":100,"cache_write":7,"output":12,"total":149}`; got != want {
		t.Errorf("usage %s, want %s", got, want)
	}
	req := tr.Requests[0]
	if req.URL != "http://127.0.0.1:1/v1/messages" || req.Header["x-api-key"] != "sk-ant" || req.Header["anthropic-version"] != DefaultVersion ||
		req.Header["anthropic-dangerous-direct-browser-access"] != "true" {
		t.Errorf("request %s %v", req.URL, req.Header)
	}
	b := tr.Body(t, 0)
	if js(b["system"]) != `[{"cache_control":{"type":"ephemeral"},"text":"Be brief.","type":"text"}]` || js(b["thinking"]) != `{"budget_tokens":8192,"type":"enabled"}` || b["max_tokens"] != float64(8192+DefaultMaxTokens) ||
		js(b["tools"]) != `[{"description":"Looks.","input_schema":{"type":"object"},"name":"look"}]` {
		t.Errorf("body %s", req.Body)
	}

	outB := omni.ToolOutput("toolu_1", "", omni.StatusCompleted)
	outB.Payload.Edit().Images = []string{"data:image/png;base64,AAAA"}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("and?"), outB}, Tools: tools})
	msgs := tr.Body(t, 1)["messages"].([]any)
	if got, want := js(msgs[1:]), `[{"content":[{"signature":"sig123","thinking":"Plan.","type":"thinking"},{"data":"opaque","type":"redacted_thinking"},{"text":"Looking.","type":"text"},{"id":"toolu_1","input":{"q":1},"name":"look","type":"tool_use"}],"role":"assistant"},{"content":[{"content":[{"source":{"data":"AAAA","media_type":"image/png","type":"base64"},"type":"image"}],"tool_use_id":"toolu_1","type":"tool_result"},{"cache_control":{"type":"ephemeral"},"text":"and?","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	if b := tr.Body(t, 1); b["thinking"] != nil || b["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("without a level: thinking %v, max_tokens %v", b["thinking"], b["max_tokens"])
	}
}

func TestThinkingBudget(t *testing.T) {
	for level, want := range map[string]int{"": 0, "none": 0, "low": 2048, "high": 16384, "4096": 4096} {
		if got, err := ThinkingBudget(level); err != nil || got != want {
			t.Errorf("ThinkingBudget(%q) = %d, %v; want %d", level, got, err, want)
		}
	}
	for _, level := range []string{"extreme", "12", "-5000"} {
		if _, err := ThinkingBudget(level); err == nil || !strings.Contains(err.Error(), "unknown thinking level") {
			t.Errorf("ThinkingBudget(%q) = %v, want an error", level, err)
		}
	}
	m, _ := New(Options{Transport: &ptest.Transport{}, Model: "m"})
	_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: "extreme"})
	if out.Status != omni.StatusFailed || !out.Permanent || !strings.Contains(out.ErrorMessage, "extreme") {
		t.Errorf("outcome %+v", out)
	}
	// A budget at or above a max_tokens the caller set takes half of it
	// (the model's limit: "max" over Opus 4.1's 32000 was refused).
	tr0 := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ = New(Options{Transport: tr0, Model: "m", MaxTokens: 32000})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: "max"})
	if b := tr0.Body(t, 0); b["max_tokens"] != float64(32000) || js(b["thinking"]) != `{"budget_tokens":16000,"type":"enabled"}` {
		t.Errorf("max_tokens %v, thinking %v", b["max_tokens"], b["thinking"])
	}
	// A budget at or above a max_tokens of 2048 or less raises it.
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ = New(Options{Transport: tr, Model: "m", MaxTokens: 1000})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: "low"})
	if b := tr.Body(t, 0); b["max_tokens"] != float64(2048+DefaultMaxTokens) {
		t.Errorf("max_tokens %v", b["max_tokens"])
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reply    ptest.Reply
		status   string
		contains string
	}{
		{"529", ptest.Reply{Status: 529, Chunks: []string{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}, omni.StatusTimeout, "overloaded_error: Overloaded"},
		{"401", ptest.Reply{Status: 401, Chunks: []string{`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}}, omni.StatusAuth, "invalid x-api-key"},
		{"overloaded mid-stream", ptest.Reply{Chunks: events(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, omni.StatusTimeout, "Overloaded"},
		{"authentication event", ptest.Reply{Chunks: events(`{"type":"error","error":{"type":"authentication_error","message":"bad key"}}`)}, omni.StatusAuth, "bad key"},
		{"invalid request event", ptest.Reply{Chunks: events(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)}, omni.StatusFailed, "bad"},
		{"cut", ptest.Reply{Chunks: events(start)}, omni.StatusMalformed, "message_stop"},
		{"delta of no block", ptest.Reply{Chunks: events(start, `{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}`)}, omni.StatusMalformed, "never started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := New(Options{Transport: &ptest.Transport{Replies: []ptest.Reply{tc.reply}}, Model: "m"})
			c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
			if string(out.Status) != tc.status || !strings.Contains(out.ErrorMessage, tc.contains) {
				t.Errorf("outcome %+v, want %s with %q", out, tc.status, tc.contains)
			}
			if tc.name == "overloaded mid-stream" && c.Text(omni.Text) != "Hi" {
				t.Errorf("text %q", c.Text(omni.Text))
			}
		})
	}
}

// Claude 4.6 and later think adaptively at an effort (4.7 and later refuse
// a budget); earlier models take a budget.
func TestAdaptiveThinking(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-opus-4-7": true, "claude-sonnet-4-6": true, "anthropic.claude-opus-4-6-v1": true, "claude-opus-5": true,
		"claude-fable-5": true, "claude-mythos-preview": true,
		"claude-sonnet-4-5-20250929": false, "claude-opus-4-20250514": false, "claude-opus-4-1-20250805": false,
		"claude-3-7-sonnet-20250219": false, "claude-haiku-4-5": false, "my-model": false,
	} {
		if got := Adaptive(model); got != want {
			t.Errorf("Adaptive(%q) = %v, want %v", model, got, want)
		}
	}
	for level, effort := range map[string]string{"minimal": "low", "medium": "medium", "max": "max", "20000": "high"} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "claude-opus-4-7"})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: level})
		b := tr.Body(t, 0)
		if js(b["thinking"]) != `{"type":"adaptive"}` || js(b["output_config"]) != `{"effort":"`+effort+`"}` || b["max_tokens"] != float64(DefaultMaxTokens) {
			t.Errorf("%s: thinking %v, output_config %v, max_tokens %v", level, b["thinking"], b["output_config"], b["max_tokens"])
		}
	}
}

// Whitespace-only text is no text block: the API refuses one ("text
// content blocks must contain non-whitespace text"), and a committed
// turn holding one failed every later request.
func TestBlankTextBlocks(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("go"), omni.AssistantText("\n\n", omni.StatusCompleted), omni.ToolCallMsg("toolu_1", "f", "{}")})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("toolu_1", "  ", omni.StatusCompleted), omni.UserText("and?")}})
	if got, want := js(tr.Body(t, 0)["messages"].([]any)[1:]), `[{"content":[{"id":"toolu_1","input":{},"name":"f","type":"tool_use"}],"role":"assistant"},{"content":[{"content":[{"text":"(no output)","type":"text"}],"tool_use_id":"toolu_1","type":"tool_result"},{"cache_control":{"type":"ephemeral"},"text":"and?","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// A tool call id the API's pattern refuses (another provider's) goes out
// with each other byte as "_" and a hash of the id after it, the same in
// the call and its result: two ids that differ only in such bytes (a
// model of one's own names its calls "调用一", "调用二") went out as one,
// which the API refuses.
func TestToolIDsSent(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	hist := []omni.Message{omni.UserText("go")}
	ids := []string{"functions.get_weather:0", "调用一", "调用二", "toolu_1"}
	for _, id := range ids {
		hist = append(hist, omni.ToolCallMsg(id, "f", "{}"))
	}
	for _, id := range ids {
		hist = append(hist, omni.ToolOutput(id, "sunny", omni.StatusCompleted))
	}
	m.LoadHistory(context.Background(), append(hist, omni.AssistantText("ok", omni.StatusCompleted)))
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("and?")}})
	msgs := tr.Body(t, 0)["messages"].([]any)
	var uses, results []string
	for _, b := range msgs[1].(map[string]any)["content"].([]any) {
		uses = append(uses, b.(map[string]any)["id"].(string))
	}
	for _, b := range msgs[2].(map[string]any)["content"].([]any) {
		results = append(results, b.(map[string]any)["tool_use_id"].(string))
	}
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	seen := map[string]bool{}
	for i, id := range uses {
		if !pattern.MatchString(id) || seen[id] || i >= len(results) || results[i] != id {
			t.Fatalf("tool_use ids %q, tool_result ids %q: want each in the pattern, distinct and paired", uses, results)
		}
		seen[id] = true
	}
	if !strings.HasPrefix(uses[0], "functions_get_weather_0_") || uses[3] != "toolu_1" {
		t.Errorf("tool_use ids %q", uses)
	}
}

// A tool call of the history whose name the API's pattern refuses
// (another provider's, "fs.read", before a session changed models) goes
// out with each other byte as "_" and a hash of the name after it, cut to
// fit 128 bytes; its result pairs with it by id (the name went as it was, and
// the API answered 400 to every request of the session). A name the
// pattern takes goes as it is.
func TestHistoryToolNamesSent(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	hist := []omni.Message{omni.UserText("go")}
	names := []string{"fs.read", "fs/read", "读", "", strings.Repeat("n", 129), strings.Repeat("é", 100), "get_weather-2"}
	for i, name := range names {
		hist = append(hist, omni.ToolCallMsg(fmt.Sprint("c", i), name, "{}"))
	}
	for i := range names {
		hist = append(hist, omni.ToolOutput(fmt.Sprint("c", i), "done", omni.StatusCompleted))
	}
	m.LoadHistory(context.Background(), append(hist, omni.AssistantText("ok", omni.StatusCompleted)))
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("and?")}})
	msgs := tr.Body(t, 0)["messages"].([]any)
	var sent []string
	for _, b := range msgs[1].(map[string]any)["content"].([]any) {
		sent = append(sent, b.(map[string]any)["name"].(string))
	}
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	seen := map[string]bool{}
	for _, name := range sent {
		if !pattern.MatchString(name) || seen[name] {
			t.Fatalf("tool_use names %q: want each in the pattern, and distinct", sent)
		}
		seen[name] = true
	}
	if len(sent) != len(names) || !strings.HasPrefix(sent[0], "fs_read__") || sent[6] != "get_weather-2" || len(sent[4]) != 128 {
		t.Errorf("tool_use names %q", sent)
	}
	if n := len(msgs[2].(map[string]any)["content"].([]any)); n != len(names) {
		t.Errorf("%d tool results, want %d", n, len(names))
	}
}

// A non-image inline_data (a PDF) goes out as a document block, an image's
// as an image block.
func TestDocuments(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	run(t, m, engine.GenerateParams{NewMessages: ptest.Attachments()})
	if got, want := js(tr.Body(t, 0)["messages"]), `[{"content":[{"text":"Read it.","type":"text"},{"source":{"data":"JVBERi0=","media_type":"application/pdf","type":"base64"},"type":"document"},{"cache_control":{"type":"ephemeral"},"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// An image goes with the media type its bytes show, which the API checks
// (a JPEG labelled image/png was refused with a 400), else with its label
// as the API takes it (image/jpg as image/jpeg, no case or parameters);
// one the API would refuse fails the request before it is sent, naming
// the image and what is wrong: another media type, a data: URL not in
// base64, a URL that is no web URL (each was sent, and refused on every
// later request of the session).
func TestImages(t *testing.T) {
	const (
		png  = "iVBORw0KGgoAAAANSUhEUg"
		jpeg = "/9j/4AAQSkZJRgABAQ"
		gif  = "R0lGODlhAQABAIAAAP"
		webp = "UklGRiQAAABXRUJQVlA4"
	)
	img := func(u string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}}
	}
	for _, c := range []struct{ url, media string }{
		{"data:image/png;base64," + jpeg, "image/jpeg"},
		{"data:image/jpeg;base64," + png, "image/png"},
		{"data:image/bmp;base64," + gif, "image/gif"},
		{"data:;base64," + webp, "image/webp"},
		{"data:image/jpg;base64,AAAA", "image/jpeg"},
		{"data:IMAGE/PNG;base64,AAAA", "image/png"},
		{"DATA:image/webp;charset=x;BASE64,AAAA", "image/webp"},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "m", NoCache: true})
		out := omni.ToolOutput("toolu_1", "shot", omni.StatusCompleted)
		out.Payload.Rest = &omni.Rest{Images: []string{c.url}}
		if err := m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("toolu_1", "shot", "{}"), out}); err != nil {
			t.Fatal(err)
		}
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{img(c.url)}})
		msgs := tr.Body(t, 0)["messages"].([]any)
		result := msgs[2].(map[string]any)["content"].([]any)
		inResult := result[0].(map[string]any)["content"].([]any)[1].(map[string]any)["source"].(map[string]any)["media_type"]
		inPrompt := result[1].(map[string]any)["source"].(map[string]any)["media_type"]
		if inResult != c.media || inPrompt != c.media {
			t.Errorf("%.40s: media_type %v in the tool result, %v in the prompt, want %s", c.url, inResult, inPrompt, c.media)
		}
	}
	// An image the API would refuse goes as a text block that says why:
	// sent, the API refused the request, and every later one of the
	// session, whose history holds it.
	for _, c := range []struct{ url, want string }{
		{"data:image/bmp;base64,Qk0=", `[image not sent: media type \"image/bmp\" (bytes of no PNG, JPEG, GIF or WebP image): Anthropic takes image/jpeg, image/png, image/gif and image/webp]`},
		{"data:;base64,AAAA", `[image not sent: media type \"\"`},
		// Labelled as one the API takes, of bytes that show another (a
		// BMP, an AVIF): the API refused it as it refuses a mislabelled one.
		{"data:image/png;base64,Qk02AAAAAAAAADYAAAAoAAAA", `[image not sent: media type \"image/png\" (bytes of no PNG, JPEG, GIF or WebP image)`},
		{"data:image/jpeg;base64,AAAAIGZ0eXBhdmlmAAAAAGF2aWY=", `[image not sent: media type \"image/jpeg\" (bytes of no PNG, JPEG, GIF or WebP image)`},
		{"data:image/webp;base64,UklGRgAAAABXQVZF", `[image not sent: media type \"image/webp\" (bytes of no PNG, JPEG, GIF or WebP image)`},
		{"data:image/png," + strings.Repeat("%89PNG", 10), `[image not sent: \"data:image/png,%89PNG%89PNG%89PNG%89PNG%\"… is no http or https URL, nor a data:<media type>;base64,… URL, which Anthropic takes]`},
		{"/shots/a.png", `[image not sent: \"/shots/a.png\" is no http or https URL`},
		// A media type as long as the data: URL's head is cut, as the URL is.
		{"data:image/" + strings.Repeat("é", 4000) + ";base64,AAAA", `[image not sent: media type \"image/` + strings.Repeat("é", 17) + `\"… (bytes of no PNG`},
	} {
		for _, inTool := range []bool{false, true} {
			tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
			m, _ := New(Options{Transport: tr, Model: "m"})
			in := []omni.Message{omni.UserText("look"), img(c.url)}
			if inTool {
				out := omni.ToolOutput("toolu_1", "shot", omni.StatusCompleted)
				out.Payload.Rest = &omni.Rest{Images: []string{"data:image/png;base64," + png, c.url}}
				in = []omni.Message{omni.UserText("look"), omni.ToolCallMsg("toolu_1", "shot", "{}"), out}
			}
			_, o := run(t, m, engine.GenerateParams{NewMessages: in})
			if o.Status != omni.StatusCompleted || len(tr.Requests) != 1 {
				t.Fatalf("%q (in a tool output: %v): %+v, %d requests", c.url, inTool, o, len(tr.Requests))
			}
			body := string(tr.Requests[0].Body)
			if !strings.Contains(body, `{"type":"text","text":"`+c.want) {
				t.Errorf("%q (in a tool output: %v): the request says nothing of the image:\n%s", c.url, inTool, body)
			}
			if strings.Count(body, `"type":"image"`) != map[bool]int{false: 0, true: 1}[inTool] {
				t.Errorf("%q (in a tool output: %v): image blocks in %s", c.url, inTool, body)
			}
			if i := strings.Index(body, "[image not sent"); i >= 0 && strings.Index(body[i:], "]") > 300 {
				t.Errorf("%.40q: a note of more than 300 bytes", c.url)
			}
		}
	}
}

// New refuses a negative MaxTokens (taken as the default without a word)
// and a key or a version that no header can hold (net/http
// refused each request, retried as a network error), naming the option
// and never showing the value.
func TestOptionsRefused(t *testing.T) {
	tr := &ptest.Transport{}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Transport: tr, Model: "m", MaxTokens: -8192}, "anthropic: Options.MaxTokens is negative: want 0 (the default) or a number of tokens"},
		{Options{Transport: tr, Model: "m", APIKey: "sk-ant-secret\n"}, "anthropic: Options.APIKey: the value ends in a line break, which a header cannot hold (read from a file with it?)"},
		{Options{Transport: tr, Model: "m", Version: "2023-06-01\x00secret"}, "anthropic: Options.Version: the value holds a line break or another control character"},
		{Options{Transport: tr, Model: "m", Header: map[string]string{"X-Api-Key": "secret"}, APIKey: "k"}, ""},
	} {
		_, err := New(tc.o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("New(%+v) = %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("New(%+v) = %v: it shows the value", tc.o, err)
		}
	}
}

// NoImages, for a model without vision (DeepSeek's Anthropic API takes no
// images): no image goes; a tool result's are text blocks of its
// tool_result, a user's a text block.
func TestNoImages(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"
	for _, no := range []bool{true, false} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, err := New(Options{Transport: tr, Model: "deepseek-v4-flash", BaseURL: "https://api.deepseek.com/anthropic/v1", NoCache: true, NoImages: no})
		if err != nil {
			t.Fatal(err)
		}
		out := omni.ToolOutput("toolu_1", "shot", omni.StatusCompleted)
		out.Payload.Rest = &omni.Rest{Images: []string{png, "https://example.com/a.png"}}
		m.LoadHistory(context.Background(), []omni.Message{omni.UserText("look"), omni.ToolCallMsg("toolu_1", "shot", "{}"), out})
		img := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: png}}}
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{img}})
		got := js(tr.Body(t, 0)["messages"].([]any)[2])
		none := `{"text":"[image not sent: the model takes no images]","type":"text"}`
		want := `{"content":[{"content":[{"text":"shot","type":"text"},` + none + `,` + none + `],"tool_use_id":"toolu_1","type":"tool_result"},` + none + `],"role":"user"}`
		if no && got != want {
			t.Errorf("the last user message\n got %s\nwant %s", got, want)
		}
		if images := strings.Count(got, `"type":"image"`); !no && images != 3 {
			t.Errorf("without NoImages, %d images in %s, want 3", images, got)
		}
	}
}

// A provider's own message in an error is cut at 2 KiB with a mark, in an
// HTTP error's body and in an error event.
func TestLongErrorMessage(t *testing.T) {
	for name, reply := range map[string]ptest.Reply{
		"HTTP 400":    {Status: 400, Chunks: []string{`{"type":"error","error":{"type":"invalid_request_error","message":"` + ptest.LongMessage(60000) + `"}}`}},
		"error event": {Chunks: events(start, `{"type":"error","error":{"type":"overloaded_error","message":"`+ptest.LongMessage(1<<20)+`"}}`)},
	} {
		m, _ := New(Options{Transport: &ptest.Transport{Replies: []ptest.Reply{reply}}, Model: "m"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		ptest.CheckLongCut(t, name, out.ErrorMessage)
	}
}

// A tool name outside the API's pattern (^[a-zA-Z0-9_-]{1,128}$) fails
// the request before it is sent, naming the tool: sent, the API answered
// 400 to it and to every later request of the session.
func TestToolNameRefused(t *testing.T) {
	long := strings.Repeat("a", 129)
	for _, tc := range []struct{ name, want string }{
		{"fs.read", `anthropic: tool "fs.read": the API takes a name of 1 to 128 letters, digits, '_' and '-' (rename the tool)`},
		{long, `anthropic: tool "` + long + `": the API takes a name of 1 to 128`},
		{"读", `anthropic: tool "读": the API takes`},
		{"read_file-2", ""},
		{strings.Repeat("a", 128), ""},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "m"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")},
			Tools: []omni.ToolDefinition{{Name: "ok"}, {Name: tc.name}}})
		switch {
		case tc.want == "" && out.Status != omni.StatusCompleted:
			t.Errorf("tool %q: outcome %+v", tc.name, out)
		case tc.want != "" && (out.Status != omni.StatusFailed || !out.Permanent || !strings.HasPrefix(out.ErrorMessage, tc.want) || len(tr.Requests) != 0):
			t.Errorf("tool %q: outcome %+v after %d requests, want failed, permanent, %q", tc.name, out, len(tr.Requests), tc.want)
		}
	}
}

// A file the model made (assistant inline_data: an image a model generated,
// a PDF) goes as a text block noting it: it went as an image or document
// block in the assistant turn, which the API refuses with a 400 ("'image'
// blocks are not permitted within assistant turns"), in every later
// request of the session.
func TestAssistantFiles(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	run(t, m, engine.GenerateParams{NewMessages: ptest.MadeFiles()})
	if got, want := js(tr.Body(t, 0)["messages"]), `[{"content":[{"cache_control":{"type":"ephemeral"},"text":"Draw a cat.","type":"text"}],"role":"user"},{"content":[{"text":"Here:","type":"text"},{"text":"[file not sent: image/png, made by the model; the API takes no file in an assistant message]","type":"text"},{"text":"[file not sent: application/pdf, made by the model; the API takes no file in an assistant message]","type":"text"},{"text":"Done.","type":"text"}],"role":"assistant"},{"content":[{"cache_control":{"type":"ephemeral"},"text":"Bluer.","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}
