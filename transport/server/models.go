package server

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
	"github.com/floehq/floe/transport/host"
)

// The models a server's sessions can use: the scripted one (offline) and
// the adapters of provider/.
const (
	ModelScripted         = "scripted"
	ModelOpenAI           = "openai"
	ModelOpenAICompatible = "openai-compatible"
	ModelResponses        = "openai-responses"
	ModelAnthropic        = "anthropic"
)

// ModelNames lists the model names, for messages.
const ModelNames = "scripted, openai, openai-compatible, openai-responses or anthropic"

// CompactPrompt is the summarize request of a provider model's compaction.
const CompactPrompt = "Summarize the conversation so far for your own later use: the user's goals, " +
	"what was done and found (files, tool results, decisions), and what remains. Be concise and keep every detail needed to continue."

// WorkspacePrompt is a provider model's system prompt when the settings
// give none: its sessions work in the demo workspace.
const WorkspacePrompt = "You are an agent working in a small workspace of text files. " +
	"Use the tools to list, read and change its files as the user asks, then answer briefly."

// ModelConfig is a checked choice of model (ParseModel).
type ModelConfig struct {
	Kind    string // one of the model names
	ModelID string // the provider's model name
	BaseURL string // "" = the adapter's default
	APIKey  string // "" = none
	// System is a provider model's system prompt (WorkspacePrompt unless
	// the settings give one) and ContextWindow its context window in
	// tokens, 0 = unknown: both go into the session_meta of new sessions.
	System        string
	ContextWindow int64
	// IdleTimeout is the adapters' Options.IdleTimeout: 0 = theirs (5
	// minutes), below 0 = none.
	IdleTimeout time.Duration
	// Gemini is the Chat adapter's Options.Gemini: speak Google's Gemini
	// dialect to a host other than Google's own (a proxy, Vertex AI).
	Gemini bool
	// MaxImageBytes and MaxImages are the adapters' options of those
	// names, what a request's images may take: 0 = theirs, below 0 = no
	// limit. NoImages is the adapters', for a model without vision.
	MaxImageBytes, MaxImages int
	NoImages                 bool
	// StartsInThinking is the Chat and Responses adapters', for a chat
	// template that opens the thinking: the reply is thinking until its
	// </think>.
	StartsInThinking bool
}

// Setting is one setting of ModelSettings: its value, whether the user
// gave it, and its name as the user writes it (a flag, a variable).
type Setting struct {
	Name  string
	Value string
	Set   bool
}

// ModelSettings are the settings that choose a model, as a command line or
// a Worker's variables give them. ParseModel checks them and names, in
// each error, the setting that was wrong as the user wrote it.
type ModelSettings struct {
	Model     Setting // a model name; "" = scripted
	ModelID   Setting // required with a provider model
	BaseURL   Setting // required with openai-compatible
	APIKeyEnv Setting // the variable holding the key; "" = the provider's own
	Delay     Setting // the scripted model's pace: refused with a provider model when given
	// System and ContextWindow (a non-negative integer) go into a provider
	// model's session_meta; both are refused with the scripted model.
	System        Setting
	ContextWindow Setting
	// IdleTimeout: how long a request may wait on the provider without a
	// byte, a duration ("90s", "5m") or a whole number of milliseconds; "0"
	// = none; refused with the scripted model.
	IdleTimeout Setting
	// Gemini: "true" or "1" (or "false", "0", "") has openai or
	// openai-compatible speak Gemini's dialect at any base URL (thought
	// signatures sent back on tool calls); refused with the other models.
	Gemini Setting
	// MaxImageBytes and MaxImages: what a request's images may take, a
	// whole number of bytes (of their data: URLs' base64; a PDF's counts)
	// and of images; "0" = no limit, "" = the adapter's default. NoImages
	// ("true" or "1", as Gemini) has a provider model send each image as
	// a text, for a model without vision. All three are refused with the
	// scripted model.
	MaxImageBytes, MaxImages, NoImages Setting
	// StartsInThinking ("true" or "1", as Gemini) has openai,
	// openai-compatible or openai-responses read a reply as thinking until
	// its </think> (a chat template that opens the thinking); refused with
	// the other models.
	StartsInThinking Setting
	// Assign writes a setting with its value as the user would:
	// "--model openai" for a flag, "FLOE_MODEL=openai" for a variable.
	Assign func(name, value string) string
	// Getenv reads the variable holding the key; KeySource names what it
	// reads, for the error when that is empty ("the environment variable").
	Getenv    func(string) string
	KeySource string
}

// ParseModel checks s: a provider model needs its model id, a valid base
// URL (required with openai-compatible) and a key (from the provider's own
// variable, OPENAI_API_KEY or ANTHROPIC_API_KEY, or the one APIKeyEnv
// names; openai-compatible sends a key only when APIKeyEnv names one, so
// that an OpenAI key is not handed to another host). With a base URL the
// provider's own variable may be unset (a local server, a proxy that
// holds the key): no key is sent then.
func ParseModel(s ModelSettings) (ModelConfig, error) {
	kind := s.Model.Value
	if kind == "" {
		kind = ModelScripted
	}
	// A base URL's trailing slashes go (before its query, if any), as
	// floe.mjs's models drop them: the adapters append "/chat/completions"
	// and the like.
	mc := ModelConfig{Kind: kind, ModelID: s.ModelID.Value, BaseURL: provider.BaseURL(s.BaseURL.Value, "")}
	switch kind {
	case ModelScripted:
		for _, f := range []Setting{s.ModelID, s.BaseURL, s.APIKeyEnv, s.System, s.ContextWindow, s.IdleTimeout, s.Gemini, s.MaxImageBytes, s.MaxImages, s.NoImages, s.StartsInThinking} {
			if f.Set {
				return mc, errors.New(f.Name + ": only with a provider model (" + s.Assign(s.Model.Name, kind) + " is offline)")
			}
		}
		return mc, nil
	case ModelOpenAI, ModelOpenAICompatible, ModelResponses, ModelAnthropic:
	default:
		return mc, errors.New(s.Assign(s.Model.Name, strconv.Quote(kind)) + ": want " + ModelNames)
	}
	with := s.Assign(s.Model.Name, kind)
	if s.Delay.Set {
		return mc, errors.New(s.Delay.Name + ": only with " + s.Assign(s.Model.Name, ModelScripted))
	}
	if mc.ModelID == "" {
		return mc, errors.New(s.ModelID.Name + ": required with " + with + " (the model name the provider knows)")
	}
	if kind == ModelOpenAICompatible && mc.BaseURL == "" {
		return mc, errors.New(s.BaseURL.Name + ": required with " + with + " (such as http://127.0.0.1:11434/v1)")
	}
	if s.BaseURL.Value != "" {
		if why := baseURLProblem(mc.BaseURL, s.APIKeyEnv.Name); why != "" {
			return mc, errors.New(s.Assign(s.BaseURL.Name, strconv.Quote(withoutQuery(s.BaseURL.Value))) + ": " + why)
		}
	}
	mc.System = s.System.Value
	if !s.System.Set {
		mc.System = WorkspacePrompt
	}
	if v := s.ContextWindow.Value; s.ContextWindow.Set || v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return mc, errors.New(s.Assign(s.ContextWindow.Name, strconv.Quote(v)) + ": want a number of tokens (0 or more; 0 = unknown)")
		}
		mc.ContextWindow = n
	}
	if v := s.IdleTimeout.Value; s.IdleTimeout.Set || v != "" {
		d, err := time.ParseDuration(v)
		if n, nerr := strconv.ParseInt(v, 10, 64); nerr == nil {
			d, err = time.Duration(n)*time.Millisecond, nil
		}
		if err != nil || d < 0 || d > 24*time.Hour {
			return mc, errors.New(s.Assign(s.IdleTimeout.Name, strconv.Quote(v)) + ": want a duration up to a day, such as 90s or 5m, or milliseconds (0: none)")
		}
		mc.IdleTimeout = d
		if d == 0 {
			mc.IdleTimeout = -1
		}
	}
	for _, b := range []struct {
		s         Setting
		to        *bool
		what      string
		responses bool // openai-responses takes it too
		anthropic bool // and anthropic
	}{{s.Gemini, &mc.Gemini, "Gemini's OpenAI-compatible endpoint", false, false}, {s.NoImages, &mc.NoImages, "a model without vision", true, true},
		{s.StartsInThinking, &mc.StartsInThinking, "a chat template that opens the thinking", true, false}} {
		v := b.s.Value
		on := v == "true" || v == "1"
		if !on && v != "false" && v != "0" && v != "" {
			return mc, errors.New(s.Assign(b.s.Name, strconv.Quote(v)) + ": want true or false (1 or 0)")
		}
		if on && kind != ModelOpenAI && kind != ModelOpenAICompatible && (!b.responses || kind != ModelResponses) && (!b.anthropic || kind != ModelAnthropic) {
			models := " or " + ModelOpenAICompatible
			if b.responses {
				models = ", " + ModelOpenAICompatible + " or " + ModelResponses
			}
			return mc, errors.New(b.s.Name + ": only with " + s.Assign(s.Model.Name, ModelOpenAI) + models + " (" + b.what + "), not " + with)
		}
		*b.to = on
	}
	for _, n := range []struct {
		s    Setting
		to   *int
		what string
	}{{s.MaxImageBytes, &mc.MaxImageBytes, "bytes"}, {s.MaxImages, &mc.MaxImages, "images"}} {
		if v := n.s.Value; n.s.Set || v != "" {
			k, err := strconv.ParseInt(v, 10, 32)
			if err != nil || k < 0 {
				return mc, errors.New(s.Assign(n.s.Name, strconv.Quote(v)) + ": want a whole number of " + n.what + ", at most 2147483647 (0: no limit)")
			}
			*n.to = int(k)
			if k == 0 {
				*n.to = -1
			}
		}
	}
	keyEnv := s.APIKeyEnv.Value
	if s.APIKeyEnv.Set && keyEnv == "" {
		return mc, errors.New(s.APIKeyEnv.Name + ": empty variable name")
	}
	if s.APIKeyEnv.Set && !varName(keyEnv) {
		// Likely the key itself: never echoed (an answer or a log would
		// show it).
		return mc, errors.New(s.APIKeyEnv.Name + ": want the name (letters, digits and _) of " + s.KeySource + " that holds the key, not the key; its value is not shown")
	}
	if keyEnv == "" {
		switch kind {
		case ModelOpenAI, ModelResponses:
			keyEnv = "OPENAI_API_KEY"
		case ModelAnthropic:
			keyEnv = "ANTHROPIC_API_KEY"
		}
	}
	if keyEnv != "" {
		if s.Getenv != nil {
			mc.APIKey = s.Getenv(keyEnv)
		}
		if mc.APIKey == "" && !s.APIKeyEnv.Set && mc.BaseURL != "" {
			// A local server or a proxy of the provider's API (LM
			// Studio's Responses API, a gateway that holds the key):
			// none is sent, as the adapters send none without one.
			return mc, nil
		}
		if mc.APIKey == "" {
			name := s.APIKeyEnv.Name
			if !s.APIKeyEnv.Set {
				name = with
			}
			if s.APIKeyEnv.Set && keyLike(keyEnv) {
				// A key of letters, digits and _ alone (Groq's gsk_…,
				// Mistral's) passes for a name: not echoed either.
				return mc, errors.New(name + ": " + s.KeySource + " it names is empty or unset, and the name is not shown: it looks like a key (want the name of " + s.KeySource + " that holds the key, not the key)")
			}
			return mc, errors.New(name + ": " + s.KeySource + " " + keyEnv + " is empty or unset (set it, or name another with " + s.APIKeyEnv.Name + ")")
		}
	}
	return mc, nil
}

// varName reports whether s can name an environment variable or a
// Worker's secret: letters, digits and _, not starting with a digit.
func varName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !(i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// keyLike reports whether a variable's name s looks like a key given in
// its place: 20 characters or more, a lower-case letter and a digit among
// them (names are most often upper case: OPENAI_API_KEY).
func keyLike(s string) bool {
	lower, digit := false, false
	for i := 0; i < len(s); i++ {
		lower = lower || 'a' <= s[i] && s[i] <= 'z'
		digit = digit || '0' <= s[i] && s[i] <= '9'
	}
	return len(s) >= 20 && lower && digit
}

// withoutQuery is u as an error quotes it: its query, which may hold a
// key (a proxy's ?key=), as "?…".
func withoutQuery(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

// baseURLProblem says what is wrong with u as an API's base URL, or "".
func baseURLProblem(u, keyFlag string) string {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "want an http:// or https:// URL"
	}
	return provider.BaseURLProblem(u, keyFlag)
}

// providerModel is what every adapter's Model offers.
type providerModel interface {
	engine.LLM
	engine.HistoryLoader
	Factory() engine.LLMFactory
}

// newModel returns a fresh model context.
func (mc ModelConfig) newModel(t provider.Transport) (providerModel, error) {
	switch mc.Kind {
	case ModelOpenAI, ModelOpenAICompatible:
		return openai.New(openai.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey, IdleTimeout: mc.IdleTimeout, Gemini: mc.Gemini,
			MaxImageBytes: mc.MaxImageBytes, MaxImages: mc.MaxImages, NoImages: mc.NoImages, StartsInThinking: mc.StartsInThinking})
	case ModelResponses:
		return responses.New(responses.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey, IdleTimeout: mc.IdleTimeout,
			MaxImageBytes: mc.MaxImageBytes, MaxImages: mc.MaxImages, NoImages: mc.NoImages, StartsInThinking: mc.StartsInThinking})
	case ModelAnthropic:
		return anthropic.New(anthropic.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey, IdleTimeout: mc.IdleTimeout,
			MaxImageBytes: mc.MaxImageBytes, MaxImages: mc.MaxImages, NoImages: mc.NoImages})
	}
	return nil, errors.New("model " + mc.Kind + ": not a provider model")
}

// Apply sets cfg's wiring: the scripted model by name, a provider model
// over t through Wire and NewMeta. Each session gets a fresh model context
// (the engine loads a resumed session's history into it) and its own demo
// workspace; compaction summarizes with a fresh context from the
// adapter's Factory. The adapter's options are checked here, once: the
// error is the adapter's.
func (mc ModelConfig) Apply(cfg *Config, t provider.Transport) error {
	if mc.Kind == "" || mc.Kind == ModelScripted {
		cfg.Model = ModelScripted
		return nil
	}
	cfg.Model = mc.Kind // a label only: Wire wires the sessions
	if _, err := mc.newModel(t); err != nil {
		return err
	}
	cfg.Wire = func(omni.Message) (host.Wiring, error) {
		m, err := mc.newModel(t)
		if err != nil {
			return host.Wiring{}, err
		}
		ws := playground.NewWorkspace(nil)
		ws.LineDelay = 0
		return host.Wiring{
			LLM:         m,
			NewLLM:      m.Factory(),
			Resume:      m.Factory(), // the same model, from a resumed session's totals
			Environment: ws,
			Tools:       ws.Tools(),
			Compaction:  &engine.Compaction{Mode: omni.ModeSummarize, Prompt: CompactPrompt},
			MaxTurns:    16,
		}, nil
	}
	cfg.NewMeta = func(id string, now time.Time) omni.Message {
		m := NewMeta(id, now)
		r := m.Payload.Edit()
		r.Provider, r.ModelID, r.SystemPrompt = mc.Kind, mc.ModelID, mc.System
		r.ModelContextWindow = omni.RawJSON(strconv.FormatInt(mc.ContextWindow, 10))
		return m
	}
	return nil
}
