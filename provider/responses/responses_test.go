package responses

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

func events(payloads ...string) []string {
	out := make([]string, len(payloads))
	for i, p := range payloads {
		var v struct{ Type string }
		json.Unmarshal([]byte(p), &v)
		out[i] = "event: " + v.Type + "\ndata: " + p + "\n\n"
	}
	return out
}

const completed = `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":20},"output_tokens":9,"total_tokens":59}}}`

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func run(t *testing.T, m *Model, p engine.GenerateParams) (*ptest.Collector, engine.Outcome) {
	t.Helper()
	c := &ptest.Collector{T: t}
	out := m.StreamGenerate(context.Background(), p, c.Emit)
	c.End()
	return c, out
}

// Encrypted reasoning items go back verbatim, function calls and outputs
// as items, user content as input parts; store is off; the thinking level
// asks for summaries and encrypted reasoning.
func TestRequestMapping(t *testing.T) {
	reasoning := `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan"}],"encrypted_content":"ENC"}`
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: events(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Plan"}`,
			`{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"More"}`,
			`{"type":"response.output_item.done","output_index":0,"item":`+reasoning+`}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"On it."}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message"}}`,
			`{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"look","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"q\":"}`,
			`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"1}"}`,
			`{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_other","name":"look","arguments":"{\"q\":1}"}}`,
			completed)},
		{Chunks: events(completed)},
		{Chunks: events(completed)},
	}}
	m, err := New(Options{Transport: tr, Model: "gpt-test", APIKey: "k", MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	tools := []omni.ToolDefinition{{Name: "look", Parameters: omni.RawJSON(`{"type":"object"}`)}}
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look.")}, SystemPrompt: "Be brief.", Tools: tools, ThinkingLevel: "high"})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if c.Text(omni.Thinking) != "Plan\n\nMore" || c.Text(omni.Text) != "On it." {
		t.Errorf("thinking %q text %q", c.Text(omni.Thinking), c.Text(omni.Text))
	}
	if calls := c.Calls(); len(calls) != 1 || calls[0].Payload.ToolCallID != "call_1" || calls[0].Payload.Arguments != `{"q":1}` {
		t.Errorf("calls %v", calls)
	}
	if got, want := js(c.Last().Payload.Rest.Request), `{"cache_read":20,"cache_write":0,"output":9,"total":59}`; got != want {
		t.Errorf("usage %s, want %s", got, want)
	}
	b := tr.Body(t, 0)
	if tr.Requests[0].URL != DefaultBaseURL+"/responses" || tr.Requests[0].Header["authorization"] != "Bearer k" ||
		b["store"] != false || b["instructions"] != "Be brief." || b["max_output_tokens"] != 64.0 ||
		js(b["reasoning"]) != `{"effort":"high","summary":"auto"}` || js(b["include"]) != `["reasoning.encrypted_content"]` ||
		js(b["tools"]) != `[{"description":"","name":"look","parameters":{"type":"object"},"strict":false,"type":"function"}]` {
		t.Errorf("request %s", tr.Requests[0].Body)
	}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("call_1", "42", omni.StatusCompleted)}, Tools: tools, ThinkingLevel: "high"})
	var item map[string]any
	json.Unmarshal([]byte(reasoning), &item)
	if got, want := js(tr.Body(t, 1)["input"]), `[{"content":[{"text":"Look.","type":"input_text"}],"role":"user"},`+js(item)+`,{"content":"On it.","role":"assistant"},{"arguments":"{\"q\":1}","call_id":"call_1","name":"look","type":"function_call"},{"call_id":"call_1","output":"42","type":"function_call_output"}]`; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	// A request of no thinking level (a run on a model that does not
	// reason, switched to) sends no reasoning item: such a model refuses
	// them.
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("More.")}, Tools: tools})
	if got := string(tr.Requests[2].Body); strings.Contains(got, `"reasoning"`) || !strings.Contains(got, `"call_id":"call_1"`) {
		t.Errorf("request of no thinking level %s", got)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reply    ptest.Reply
		status   string
		contains string
	}{
		{"failed", ptest.Reply{Chunks: events(`{"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}`)}, omni.StatusTimeout, "response failed: boom"},
		{"error event", ptest.Reply{Chunks: events(`{"type":"error","code":"insufficient_quota","message":"You exceeded your current quota"}`)}, omni.StatusFailed, "exceeded"},
		{"rate limit", ptest.Reply{Chunks: events(`{"type":"error","error":{"type":"rate_limit_exceeded","message":"slow down"}}`)}, omni.StatusTimeout, "slow down"},
		{"cut", ptest.Reply{Chunks: events(`{"type":"response.output_text.delta","output_index":0,"delta":"x"}`)}, omni.StatusMalformed, "response.completed"},
		{"500", ptest.Reply{Status: 500, Chunks: []string{`{"error":{"message":"The server had an error"}}`}}, omni.StatusTimeout, "The server had an error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := New(Options{Transport: &ptest.Transport{Replies: []ptest.Reply{tc.reply}}, Model: "m"})
			_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
			if string(out.Status) != tc.status || !strings.Contains(out.ErrorMessage, tc.contains) {
				t.Errorf("outcome %+v, want %s with %q", out, tc.status, tc.contains)
			}
		})
	}
}

// A refusal is not text: it is kept in the fidelity of an empty text.
func TestRefusal(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}`,
		`{"type":"response.refusal.delta","output_index":0,"delta":"No."}`, completed)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted || c.Text(omni.Text) != "" {
		t.Fatalf("outcome %+v text %q", out, c.Text(omni.Text))
	}
	if got := c.Complete(); len(got) != 2 || !strings.Contains(got[0], `"fidelity":{"refusal":"No."}`) {
		t.Errorf("messages %v", got)
	}
}

// A function call whose arguments come whole in output_item.added (no
// deltas) has them once, whether output_item.done or
// function_call_arguments.done repeats them.
func TestArgumentsInAdded(t *testing.T) {
	added := `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}`
	for _, repeat := range []string{
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}`,
		`{"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"city\":\"Rome\"}"}`,
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(added, repeat, completed)}}}
		m, _ := New(Options{Transport: tr, Model: "m"})
		c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if calls := c.Calls(); out.Status != omni.StatusCompleted || len(calls) != 1 || calls[0].Payload.Arguments != `{"city":"Rome"}` {
			t.Errorf("after %.40s: outcome %+v, calls %v", repeat, out, calls)
		}
	}
}

// A message's second content part that comes only as output_text.done,
// after the first streamed, is kept; a done that repeats a streamed part
// is not taken twice.
func TestContentPartOfNoDeltas(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}`,
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hel"}`,
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"lo. "}`,
		`{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"Hello. "}`,
		`{"type":"response.output_text.done","output_index":0,"content_index":1,"text":"More."}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"message"}}`, completed)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted || c.Text(omni.Text) != "Hello. More." {
		t.Fatalf("outcome %+v text %q", out, c.Text(omni.Text))
	}
}

// A non-image inline_data (a PDF) goes out as an input_file, an image's as
// an input_image.
func TestDocuments(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(completed)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	run(t, m, engine.GenerateParams{NewMessages: ptest.Attachments()})
	if got, want := js(tr.Body(t, 0)["input"]), `[{"content":[{"text":"Read it.","type":"input_text"},{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"document.pdf","type":"input_file"},{"detail":"auto","image_url":"data:image/png;base64,iVBORw==","type":"input_image"}],"role":"user"}]`; got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
}

// New refuses a negative MaxTokens, taken as none without a word.
func TestNegativeMaxTokens(t *testing.T) {
	_, err := New(Options{Transport: &ptest.Transport{}, Model: "m", MaxTokens: -1})
	if want := "openai responses: Options.MaxTokens is negative: want 0 (the default) or a number of tokens"; err == nil || err.Error() != want {
		t.Errorf("New = %v, want %q", err, want)
	}
}

// A provider's own message in an error is cut at 2 KiB with a mark, in an
// HTTP error's body, an error event and a response.failed.
func TestLongErrorMessage(t *testing.T) {
	for name, reply := range map[string]ptest.Reply{
		"HTTP 400":        {Status: 400, Chunks: []string{`{"error":{"message":"` + ptest.LongMessage(60000) + `","type":"invalid_request_error"}}`}},
		"error event":     {Chunks: events(`{"type":"error","code":"insufficient_quota","message":"` + ptest.LongMessage(1<<20) + `"}`)},
		"response.failed": {Chunks: events(`{"type":"response.failed","response":{"error":{"code":"server_error","message":"` + ptest.LongMessage(1<<20) + `"}}}`)},
	} {
		m, _ := New(Options{Transport: &ptest.Transport{Replies: []ptest.Reply{reply}}, Model: "m"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		ptest.CheckLongCut(t, name, out.ErrorMessage)
	}
}

// The deltas of an item are one text whatever their index, and a done
// that repeats them is not taken again: vLLM gives each delta the next
// content_index and its done yet another, which showed the thinking with
// a paragraph break between every two deltas, then again, and the text
// twice. A reasoning summary's part is a paragraph when the part before
// ended (its done, or the part.added of the next), as OpenAI streams it.
func TestIndexPerDelta(t *testing.T) {
	for _, tc := range []struct {
		name           string
		events         []string
		thinking, text string
	}{
		{"vLLM", []string{
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_text.delta","output_index":0,"content_index":1,"delta":"Think"}`,
			`{"type":"response.reasoning_text.delta","output_index":0,"content_index":2,"delta":"ing."}`,
			`{"type":"response.reasoning_text.done","output_index":0,"content_index":3,"text":"Thinking."}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"message","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":1,"delta":"Sun"}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":2,"delta":"ny."}`,
			`{"type":"response.output_text.done","output_index":1,"content_index":3,"text":"Sunny."}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"type":"message"}}`,
		}, "Thinking.", "Sunny."},
		{"summary parts, each done", []string{
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"A"}`,
			`{"type":"response.reasoning_summary_text.done","output_index":0,"summary_index":0,"text":"A"}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"B"}`,
			`{"type":"response.reasoning_summary_text.done","output_index":0,"summary_index":1,"text":"B"}`,
			`{"type":"response.reasoning_summary_text.done","output_index":0,"summary_index":2,"text":"C"}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}`,
		}, "A\n\nB\n\nC", ""},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(append(tc.events, completed)...)}}}
		m, _ := New(Options{Transport: tr, Model: "m"})
		c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if out.Status != omni.StatusCompleted || c.Text(omni.Thinking) != tc.thinking || c.Text(omni.Text) != tc.text {
			t.Errorf("%s: outcome %+v, thinking %q, text %q; want %q, %q", tc.name, out, c.Text(omni.Thinking), c.Text(omni.Text), tc.thinking, tc.text)
		}
	}
}

// A file the model made (assistant inline_data: an image a model generated,
// a PDF) goes as a note in an assistant message: its content takes text
// only, and the file was left out without a word, the model not told it
// had made one.
func TestAssistantFiles(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(completed)}}}
	m, _ := New(Options{Transport: tr, Model: "m"})
	run(t, m, engine.GenerateParams{NewMessages: ptest.MadeFiles()})
	if got, want := js(tr.Body(t, 0)["input"]), `[{"content":[{"text":"Draw a cat.","type":"input_text"}],"role":"user"},{"content":"Here:","role":"assistant"},{"content":"[file not sent: image/png, made by the model; the API takes no file in an assistant message]","role":"assistant"},{"content":"[file not sent: application/pdf, made by the model; the API takes no file in an assistant message]","role":"assistant"},{"content":"Done.","role":"assistant"},{"content":[{"text":"Bluer.","type":"input_text"}],"role":"user"}]`; got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
}
