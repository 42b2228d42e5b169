package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// vars are a Worker's variables as ModelSettings (the same as the object's
// modelSettings): each error names the variable as the user wrote it.
func vars(env map[string]string) ModelSettings {
	v := func(name string) Setting { return Setting{Name: name, Value: env[name], Set: env[name] != ""} }
	return ModelSettings{
		Model: v("FLOE_MODEL"), ModelID: v("FLOE_MODEL_ID"), BaseURL: v("FLOE_BASE_URL"), APIKeyEnv: v("FLOE_API_KEY_ENV"),
		System: v("FLOE_SYSTEM_PROMPT"), ContextWindow: v("FLOE_CONTEXT_WINDOW"), IdleTimeout: v("FLOE_IDLE_TIMEOUT_MS"),
		Gemini: v("FLOE_GEMINI"), MaxImageBytes: v("FLOE_MAX_IMAGE_BYTES"), MaxImages: v("FLOE_MAX_IMAGES"), NoImages: v("FLOE_NO_IMAGES"),
		StartsInThinking: v("FLOE_STARTS_IN_THINKING"),
		Assign:           func(name, value string) string { return name + "=" + value },
		Getenv:           func(name string) string { return env[name] },
		KeySource:        "the secret",
	}
}

func TestParseModel(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want ModelConfig
		err  string
	}{
		{env: nil, want: ModelConfig{Kind: ModelScripted}},
		{env: map[string]string{"FLOE_MODEL": "scripted"}, want: ModelConfig{Kind: ModelScripted}},
		{env: map[string]string{"FLOE_MODEL_ID": "m"}, err: "FLOE_MODEL_ID: only with a provider model (FLOE_MODEL=scripted is offline)"},
		{env: map[string]string{"FLOE_MODEL": "gpt"}, err: `FLOE_MODEL="gpt": want scripted, openai, openai-compatible, openai-responses or anthropic`},
		{env: map[string]string{"FLOE_MODEL": "openai"}, err: "FLOE_MODEL_ID: required with FLOE_MODEL=openai (the model name the provider knows)"},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m"}, err: "FLOE_BASE_URL: required with FLOE_MODEL=openai-compatible"},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "host/v1"}, err: `FLOE_BASE_URL="host/v1": want an http:// or https:// URL`},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m"}, err: "FLOE_MODEL=anthropic: the secret ANTHROPIC_API_KEY is empty or unset (set it, or name another with FLOE_API_KEY_ENV)"},
		// A base URL (LM Studio's Responses API, a proxy that holds the key)
		// needs no key of the provider's own variable; one set is sent.
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "http://127.0.0.1:1234/v1"},
			want: ModelConfig{Kind: ModelResponses, ModelID: "m", BaseURL: "http://127.0.0.1:1234/v1", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "https://gw.example/", "ANTHROPIC_API_KEY": "k2"},
			want: ModelConfig{Kind: ModelAnthropic, ModelID: "m", BaseURL: "https://gw.example", APIKey: "k2", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "https://gw.example", "FLOE_API_KEY_ENV": "K"}, err: "FLOE_API_KEY_ENV: the secret K is empty or unset"},
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "m", "FLOE_API_KEY_ENV": "K"}, err: "FLOE_API_KEY_ENV: the secret K is empty or unset"},
		// The key itself where its variable's name belongs: refused, never echoed.
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "FLOE_API_KEY_ENV": "sk-proj-Abc123"}, err: "FLOE_API_KEY_ENV: want the name (letters, digits and _) of the secret that holds the key, not the key; its value is not shown"},
		// A key of letters, digits and _ alone passes for a name: not echoed either.
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "FLOE_API_KEY_ENV": "gsk_4f9Qx2LmZ8aB7cD3eF6gH1jK"}, err: "FLOE_API_KEY_ENV: the secret it names is empty or unset, and the name is not shown: it looks like a key (want the name of the secret that holds the key, not the key)"},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "FLOE_API_KEY_ENV": "OPENROUTER_API_KEY_2", "OPENROUTER_API_KEY_2": "k"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k"},
			want: ModelConfig{Kind: ModelResponses, ModelID: "m", APIKey: "k", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "FLOE_API_KEY_ENV": "K", "K": "k2", "ANTHROPIC_API_KEY": "k1"},
			want: ModelConfig{Kind: ModelAnthropic, ModelID: "m", APIKey: "k2", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "http:///"}, err: `FLOE_BASE_URL="http:///": the URL names no host`},
		// A query is kept, the path's trailing slashes dropped before it
		// (Azure OpenAI's deployment URLs); a query is not quoted in an
		// error (it may hold a key), a fragment is refused.
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "https://r.openai.azure.com/openai/deployments/d/?api-version=2024-10-21"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "m", BaseURL: "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "https://gw.example/v1?key=secret#x"},
			err: `FLOE_BASE_URL="https://gw.example/v1?…": want the API's base URL without a fragment (#…): a fragment is not sent to the server`},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "http://h/v1//"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "m", BaseURL: "http://h/v1", System: WorkspacePrompt}},
		// openai-compatible sends a key only when FLOE_API_KEY_ENV names one.
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "m", "FLOE_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "k"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "m", BaseURL: "http://h/v1", System: WorkspacePrompt}},
		// The system prompt and the context window of session_meta.
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_SYSTEM_PROMPT": "Be terse.", "FLOE_CONTEXT_WINDOW": "128000"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: "Be terse.", ContextWindow: 128000}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_CONTEXT_WINDOW": "-1"},
			err: `FLOE_CONTEXT_WINDOW="-1": want a number of tokens (0 or more; 0 = unknown)`},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_CONTEXT_WINDOW": "128k"},
			err: `FLOE_CONTEXT_WINDOW="128k": want a number of tokens`},
		{env: map[string]string{"FLOE_SYSTEM_PROMPT": "Hi"}, err: "FLOE_SYSTEM_PROMPT: only with a provider model"},
		{env: map[string]string{"FLOE_CONTEXT_WINDOW": "8192"}, err: "FLOE_CONTEXT_WINDOW: only with a provider model"},
		// The adapters' idle timeout: milliseconds or a duration; 0 = none.
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_IDLE_TIMEOUT_MS": "1500"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt, IdleTimeout: 1500 * time.Millisecond}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_IDLE_TIMEOUT_MS": "90s"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt, IdleTimeout: 90 * time.Second}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_IDLE_TIMEOUT_MS": "0"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt, IdleTimeout: -1}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_IDLE_TIMEOUT_MS": "-5"},
			err: `FLOE_IDLE_TIMEOUT_MS="-5": want a duration up to a day, such as 90s or 5m, or milliseconds (0: none)`},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_IDLE_TIMEOUT_MS": "soon"},
			err: `FLOE_IDLE_TIMEOUT_MS="soon": want a duration`},
		{env: map[string]string{"FLOE_IDLE_TIMEOUT_MS": "1000"}, err: "FLOE_IDLE_TIMEOUT_MS: only with a provider model"},
		// FLOE_GEMINI: Gemini's dialect at any base URL, with the Chat models only.
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "gemini-3-flash", "FLOE_BASE_URL": "https://proxy.example/v1", "FLOE_GEMINI": "true"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "gemini-3-flash", BaseURL: "https://proxy.example/v1", System: WorkspacePrompt, Gemini: true}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_GEMINI": "1"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt, Gemini: true}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_GEMINI": "0"},
			want: ModelConfig{Kind: ModelOpenAI, ModelID: "m", APIKey: "k", System: WorkspacePrompt}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_GEMINI": "yes"},
			err: `FLOE_GEMINI="yes": want true or false (1 or 0)`},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "ANTHROPIC_API_KEY": "k", "FLOE_GEMINI": "true"},
			err: "FLOE_GEMINI: only with FLOE_MODEL=openai or openai-compatible (Gemini's OpenAI-compatible endpoint), not FLOE_MODEL=anthropic"},
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_GEMINI": "true"},
			err: "FLOE_GEMINI: only with FLOE_MODEL=openai or openai-compatible"},
		{env: map[string]string{"FLOE_GEMINI": "true"}, err: "FLOE_GEMINI: only with a provider model"},
		// The image budget: 0 = no limit (the adapters' below 0), unset
		// theirs; no images, for a model without vision, with the Chat
		// and Responses models only.
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "ANTHROPIC_API_KEY": "k", "FLOE_MAX_IMAGE_BYTES": "5000000", "FLOE_MAX_IMAGES": "0"},
			want: ModelConfig{Kind: ModelAnthropic, ModelID: "m", APIKey: "k", System: WorkspacePrompt, MaxImageBytes: 5000000, MaxImages: -1}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_MAX_IMAGES": "-1"},
			err: `FLOE_MAX_IMAGES="-1": want a whole number of images, at most 2147483647 (0: no limit)`},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_MAX_IMAGE_BYTES": "20MB"},
			err: `FLOE_MAX_IMAGE_BYTES="20MB": want a whole number of bytes, at most 2147483647 (0: no limit)`},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_MAX_IMAGE_BYTES": "3000000000"},
			err: `FLOE_MAX_IMAGE_BYTES="3000000000": want a whole number of bytes, at most 2147483647 (0: no limit)`},
		{env: map[string]string{"FLOE_MAX_IMAGES": "10"}, err: "FLOE_MAX_IMAGES: only with a provider model"},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "deepseek-chat", "FLOE_BASE_URL": "https://api.deepseek.com", "FLOE_NO_IMAGES": "1"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "deepseek-chat", BaseURL: "https://api.deepseek.com", System: WorkspacePrompt, NoImages: true}},
		{env: map[string]string{"FLOE_MODEL": "openai", "FLOE_MODEL_ID": "m", "OPENAI_API_KEY": "k", "FLOE_NO_IMAGES": "no"},
			err: `FLOE_NO_IMAGES="no": want true or false (1 or 0)`},
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "qwen3-8b", "FLOE_BASE_URL": "http://127.0.0.1:1234/v1", "OPENAI_API_KEY": "k", "FLOE_NO_IMAGES": "true"},
			want: ModelConfig{Kind: ModelResponses, ModelID: "qwen3-8b", BaseURL: "http://127.0.0.1:1234/v1", APIKey: "k", System: WorkspacePrompt, NoImages: true}},
		// DeepSeek's Anthropic API takes no images either.
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "deepseek-v4-flash", "FLOE_BASE_URL": "https://api.deepseek.com/anthropic/v1", "ANTHROPIC_API_KEY": "k", "FLOE_NO_IMAGES": "true"},
			want: ModelConfig{Kind: ModelAnthropic, ModelID: "deepseek-v4-flash", BaseURL: "https://api.deepseek.com/anthropic/v1", APIKey: "k", System: WorkspacePrompt, NoImages: true}},
		{env: map[string]string{"FLOE_NO_IMAGES": "true"}, err: "FLOE_NO_IMAGES: only with a provider model (FLOE_MODEL=scripted is offline)"},
		// A chat template that opens the thinking: the Chat and Responses
		// models only.
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "qwq", "FLOE_BASE_URL": "http://127.0.0.1:8000/v1", "FLOE_STARTS_IN_THINKING": "true"},
			want: ModelConfig{Kind: ModelOpenAICompatible, ModelID: "qwq", BaseURL: "http://127.0.0.1:8000/v1", System: WorkspacePrompt, StartsInThinking: true}},
		{env: map[string]string{"FLOE_MODEL": "openai-responses", "FLOE_MODEL_ID": "qwq", "FLOE_BASE_URL": "http://127.0.0.1:8000/v1", "FLOE_STARTS_IN_THINKING": "1"},
			want: ModelConfig{Kind: ModelResponses, ModelID: "qwq", BaseURL: "http://127.0.0.1:8000/v1", System: WorkspacePrompt, StartsInThinking: true}},
		{env: map[string]string{"FLOE_MODEL": "openai-compatible", "FLOE_MODEL_ID": "qwq", "FLOE_BASE_URL": "http://127.0.0.1:8000/v1", "FLOE_STARTS_IN_THINKING": "yes"},
			err: `FLOE_STARTS_IN_THINKING="yes": want true or false (1 or 0)`},
		{env: map[string]string{"FLOE_MODEL": "anthropic", "FLOE_MODEL_ID": "m", "ANTHROPIC_API_KEY": "k", "FLOE_STARTS_IN_THINKING": "true"},
			err: "FLOE_STARTS_IN_THINKING: only with FLOE_MODEL=openai, openai-compatible or openai-responses (a chat template that opens the thinking), not FLOE_MODEL=anthropic"},
		{env: map[string]string{"FLOE_STARTS_IN_THINKING": "true"}, err: "FLOE_STARTS_IN_THINKING: only with a provider model (FLOE_MODEL=scripted is offline)"},
	} {
		got, err := ParseModel(vars(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %+v, %v; want %+v", c.env, got, err, c.want)
		}
	}
}

type noTransport struct{}

func (noTransport) RoundTrip(context.Context, *provider.Request) (*provider.Response, error) {
	panic("no request expected")
}

func TestModelConfigApply(t *testing.T) {
	var cfg Config
	if err := (ModelConfig{Kind: ModelScripted}).Apply(&cfg, noTransport{}); err != nil || cfg.Model != ModelScripted || cfg.Wire != nil {
		t.Fatalf("scripted: %v %+v", err, cfg)
	}
	for _, kind := range []string{ModelOpenAI, ModelOpenAICompatible, ModelResponses, ModelAnthropic} {
		cfg = Config{}
		mc := ModelConfig{Kind: kind, ModelID: "m-1", BaseURL: "http://127.0.0.1:9/v1", APIKey: "k", System: "Be terse.", ContextWindow: 200000}
		if err := mc.Apply(&cfg, noTransport{}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		meta := cfg.NewMeta("session-x", time.Unix(0, 0))
		if meta.Payload.Provider() != kind || meta.Payload.ModelID() != "m-1" {
			t.Errorf("%s: session_meta names %q %q", kind, meta.Payload.Provider(), meta.Payload.ModelID())
		}
		if meta.Payload.SystemPrompt() != "Be terse." || string(meta.Payload.ModelContextWindow()) != "200000" {
			t.Errorf("%s: session_meta has system_prompt %q and model_context_window %s", kind, meta.Payload.SystemPrompt(), meta.Payload.ModelContextWindow())
		}
		w, err := cfg.Wire(meta)
		if err != nil || w.LLM == nil || w.NewLLM == nil || w.Resume == nil || w.Environment == nil || len(w.Tools) == 0 || w.Compaction == nil {
			t.Errorf("%s: wiring %+v, %v", kind, w, err)
		}
		w2, _ := cfg.Wire(meta)
		if w2.LLM == w.LLM {
			t.Errorf("%s: two sessions share one model context", kind)
		}
	}
	// The adapter's own check, at Apply.
	if err := (ModelConfig{Kind: ModelOpenAI}).Apply(&Config{}, noTransport{}); err == nil {
		t.Error("openai without a model id: no error")
	}
}

// StartsInThinking reaches the Chat and Responses adapters: a reply of
// "reasoning…</think>answer" is thinking, then text.
func TestStartsInThinkingWired(t *testing.T) {
	for _, c := range []struct{ kind, body string }{
		{ModelOpenAICompatible, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Okay, the user.</think>\\n\\nHi.\"}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"},
		{ModelResponses, "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"Okay, the user.</think>\\n\\nHi.\"}\n\n" +
			"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]}}\n\n"},
	} {
		for _, opened := range []bool{true, false} {
			tr := provider.TransportFunc(func(ctx context.Context, _ *provider.Request) (*provider.Response, error) {
				return &provider.Response{Status: 200, Body: io.NopCloser(strings.NewReader(c.body))}, nil
			})
			m, err := ModelConfig{Kind: c.kind, ModelID: "m", BaseURL: "http://127.0.0.1:9/v1", StartsInThinking: opened}.newModel(tr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(m omni.Message) {
				if m.Type == omni.TypeModelMsg && (m.Payload.Type == omni.Text || m.Payload.Type == omni.Thinking) {
					got = append(got, m.Payload.Type+":"+m.Payload.Body())
				}
			})
			want := "[text:Okay, the user.</think>\n\nHi.]"
			if opened {
				want = "[thinking:Okay, the user. text:Hi.]"
			}
			if out.Status != omni.StatusCompleted || fmt.Sprint(got) != want {
				t.Errorf("%s, StartsInThinking %v: %v (%+v), want %s", c.kind, opened, got, out, want)
			}
		}
	}
}

// The idle timeout reaches the adapters: a provider that never answers
// ends the request as timeout after it.
func TestIdleTimeoutWired(t *testing.T) {
	never := provider.TransportFunc(func(ctx context.Context, _ *provider.Request) (*provider.Response, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	for _, kind := range []string{ModelOpenAICompatible, ModelResponses, ModelAnthropic} {
		mc := ModelConfig{Kind: kind, ModelID: "m", BaseURL: "http://127.0.0.1:9/v1", APIKey: "k", IdleTimeout: 40 * time.Millisecond}
		m, err := mc.newModel(never)
		if err != nil {
			t.Fatal(err)
		}
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
		if out.Status != omni.StatusTimeout || !strings.HasSuffix(out.ErrorMessage, ": no data from the server for 40ms (the idle timeout)") {
			t.Errorf("%s: %+v", kind, out)
		}
	}
}
