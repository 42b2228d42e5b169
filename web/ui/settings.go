//go:build js && wasm

package ui

import (
	"errors"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
	"github.com/norunners/vert"
	"honnef.co/go/js/dom/v2"
)

// Settings are the page's settings, kept in local storage only (converted
// with vert: a reflection-based Go ⇄ JS conversion the playground can
// afford and floe.wasm cannot).
type Settings struct {
	Provider      string `js:"provider"` // scripted, openai, openai-responses, openai-compatible, anthropic
	BaseURL       string `js:"baseURL"`
	Model         string `js:"model"`
	Key           string `js:"key"`
	CompactTokens int    `js:"compactTokens"` // automatic compaction at this many tokens; 0 = never
	CompactMode   string `js:"compactMode"`   // summarize or discard
	// ThinkingLevel is every run's reasoning effort (playground.ThinkingLevels;
	// "" = none sent), and Gemini speaks Gemini's dialect on Chat
	// Completions (a proxy in front of it). Settings stored before them
	// have neither: the default.
	ThinkingLevel string `js:"thinkingLevel"`
	Gemini        bool   `js:"gemini"`
	// NoImages is for a model without vision (the OpenAI and Anthropic
	// adapters' NoImages: each image goes as a text), and SystemPrompt the system
	// prompt of a new real-model session ("" = playground.WorkspacePrompt).
	NoImages     bool   `js:"noImages"`
	SystemPrompt string `js:"systemPrompt"`
	// StartsInThinking is for a chat template that opens the thinking
	// (the Chat and Responses adapters' StartsInThinking: a reply is
	// thinking until its </think>).
	StartsInThinking bool `js:"startsInThinking"`
}

// openaiAdapter reports whether the provider p goes through one of the
// OpenAI adapters, which can be told that its replies start in the
// thinking (StartsInThinking).
func openaiAdapter(p string) bool {
	return p == "openai" || p == "openai-compatible" || p == "openai-responses"
}

// imagesSetting reports whether the provider p's adapter can be told that
// its model takes no images (NoImages): the OpenAI adapters' and
// Anthropic's (an Anthropic-compatible endpoint without vision, DeepSeek's).
func imagesSetting(p string) bool { return openaiAdapter(p) || p == "anthropic" }

// noImages reports whether the settings' model takes no images.
func (s Settings) noImages() bool { return s.NoImages && imagesSetting(s.Provider) }

// startsInThinking reports whether the settings' model's replies start in
// its thinking.
func (s Settings) startsInThinking() bool {
	return s.StartsInThinking && openaiAdapter(s.Provider)
}

// Providers the settings offer, with what they need.
var providerNames = map[string]string{
	"scripted":          "scripted demo (offline)",
	"openai":            "OpenAI",
	"openai-responses":  "OpenAI Responses API",
	"openai-compatible": "OpenAI-compatible server",
	"anthropic":         "Anthropic",
}

func loadSettings() Settings {
	s := Settings{Provider: "scripted", CompactMode: omni.ModeSummarize}
	if v := parseJSON(localGet(keySettings)); v.Type() == js.TypeObject {
		if err := vert.ValueOf(v).AssignTo(&s); err != nil {
			consoleWarn("stored settings ignored: " + err.Error())
			return Settings{Provider: "scripted", CompactMode: omni.ModeSummarize}
		}
	}
	if providerNames[s.Provider] == "" {
		s.Provider = "scripted"
	}
	s.BaseURL, s.Model, s.Key = strings.TrimSpace(s.BaseURL), strings.TrimSpace(s.Model), strings.TrimSpace(s.Key) // as Save keeps them
	return s
}

// save keeps s in local storage; the error says why the browser refused
// (its local storage full: a long system prompt, a demo script).
func (s Settings) save() error {
	return localSet(keySettings, stringifyJSON(vert.ValueOf(s).JSValue()))
}

func (s Settings) compactMode() string {
	if s.CompactMode == omni.ModeDiscard {
		return omni.ModeDiscard
	}
	return omni.ModeSummarize
}

// provider returns the model of the chosen provider (nil: the scripted
// demo), its session tokens starting from seed, the header's label and,
// when the settings do not give a usable provider, why (for the note).
func (a *App) provider(seed omni.TokenCounts) (llm engine.LLM, newLLM engine.LLMFactory, label, warn string) {
	script := ""
	if a.demo != nil {
		script = " · demo script " + a.demoName
	}
	if a.set.Provider == "scripted" {
		return nil, nil, "Model: scripted demo (offline)" + script, ""
	}
	llm, newLLM, err := newProviderLLM(a.set, seed)
	if err != nil {
		return nil, nil, "Model: scripted demo (" + providerNames[a.set.Provider] + " unavailable)" + script, err.Error()
	}
	label = "Model: " + providerNames[a.set.Provider] + " · " + a.set.Model
	if a.set.ThinkingLevel != "" {
		label += " · effort " + a.set.ThinkingLevel
	}
	if a.set.noImages() {
		label += " · no images"
	}
	if a.set.startsInThinking() {
		label += " · starts in thinking"
	}
	return llm, newLLM, label, ""
}

// modelChange says, for a session resumed from storage, that its model
// is not the one it was made with (its session_meta's): a resumed session
// takes the model Settings give now. "" when they are the same.
func (a *App) modelChange(meta *omni.Payload, o playground.Options) string {
	provider, model := "floe-playground", "scripted"
	if o.LLM != nil {
		provider, model = o.Provider, o.Model
	}
	if meta.Provider() == provider && meta.ModelID() == model {
		return ""
	}
	name := func(provider, model string) string {
		if provider == "floe-playground" && model == "scripted" {
			return "the scripted demo"
		}
		if n := providerNames[provider]; n != "" {
			provider = n
		}
		return provider + " · " + model
	}
	return "This session was made with " + name(meta.Provider(), meta.ModelID()) + "; it goes on with " + name(provider, model) + ", as Settings say now."
}

func (a *App) settingsDialog() js.Value { return byID(a.doc, "settings").Underlying() }

func (a *App) settingsOpen() bool { return a.settingsDialog().Get("open").Bool() }

func (a *App) listenSettings() {
	dlg := a.settingsDialog()
	field := func(id string) js.Value { return byID(a.doc, id).Underlying() }
	field("set-system-prompt").Set("placeholder", playground.WorkspacePrompt)
	fill := func(s Settings) {
		field("set-provider").Set("value", s.Provider)
		field("set-base-url").Set("value", s.BaseURL)
		field("set-model").Set("value", s.Model)
		field("set-key").Set("value", s.Key)
		field("set-compact-tokens").Set("value", strconv.Itoa(s.CompactTokens))
		field("set-compact-mode").Set("value", s.compactMode())
		field("set-gemini").Set("checked", s.Gemini)
		field("set-effort").Set("value", s.ThinkingLevel)
		field("set-images").Set("checked", !s.NoImages)
		field("set-opened").Set("checked", s.StartsInThinking)
		field("set-system-prompt").Set("value", s.SystemPrompt)
		field("set-current-prompt").Set("textContent", a.currentPrompt())
		field("set-demo-status").Set("textContent", a.demoStatus())
		badField(a, "set-demo-file", nil)
		providerChosen(a, s.Provider)
		badURL(a, nil)
		badField(a, "set-key", nil)
		// A level stored that the page does not offer is said under its
		// field (the select shows the default, which Save keeps).
		if err := playground.CheckThinkingLevel(s.ThinkingLevel); err != nil {
			field("set-effort").Set("value", "")
			showFieldError(a, "set-effort", err)
		} else {
			badField(a, "set-effort", nil)
		}
		a.keepBlocked = ""
	}
	byID(a.doc, "open-settings").AddEventListener("click", false, func(dom.Event) {
		a.post(func() {
			fill(a.set)
			dlg.Call("showModal")
		})
	})
	byID(a.doc, "set-provider").AddEventListener("change", false, func(dom.Event) {
		p := field("set-provider").Get("value").String()
		a.post(func() { providerChosen(a, p) })
	})
	byID(a.doc, "settings-cancel").AddEventListener("click", false, func(dom.Event) { dlg.Call("close") })
	byID(a.doc, "settings-form").AddEventListener("submit", false, func(ev dom.Event) {
		s := Settings{
			// Spaces pasted around a value are no part of it (a model
			// name with them is one no server knows).
			Provider:    field("set-provider").Get("value").String(),
			BaseURL:     strings.TrimSpace(field("set-base-url").Get("value").String()),
			Model:       strings.TrimSpace(field("set-model").Get("value").String()),
			Key:         strings.TrimSpace(field("set-key").Get("value").String()),
			CompactMode: field("set-compact-mode").Get("value").String(),
			// The select offers the known levels only; one put there
			// otherwise is refused below, as a stored one is.
			ThinkingLevel: field("set-effort").Get("value").String(),
			Gemini:        field("set-gemini").Get("checked").Bool(),
			NoImages:      !field("set-images").Get("checked").Bool(),
			SystemPrompt:  field("set-system-prompt").Get("value").String(),
			// Kept whatever the provider, as the Gemini switch is; used
			// where offered (startsInThinking).
			StartsInThinking: field("set-opened").Get("checked").Bool(),
		}
		if strings.TrimSpace(s.SystemPrompt) == "" {
			s.SystemPrompt = "" // the default
		}
		s.CompactTokens, _ = strconv.Atoi(field("set-compact-tokens").Get("value").String())
		if err := playground.CheckThinkingLevel(s.ThinkingLevel); err != nil {
			ev.PreventDefault()
			a.post(func() {
				badURL(a, nil)
				badField(a, "set-key", nil)
				badField(a, "set-effort", err)
			})
			return
		}
		if s.Provider == "scripted" {
			a.post(func() { a.saveSettings(s) })
			return
		}
		// Refused at once, the dialog left open: the page can fetch
		// nothing but http(s).
		ev.PreventDefault()
		if err := playground.CheckBaseURL(s.BaseURL); err != nil {
			a.post(func() {
				badField(a, "set-key", nil)
				badField(a, "set-effort", nil)
				badURL(a, err)
			})
			return
		}
		if err := playground.CheckKey(s.Key); err != nil {
			a.post(func() {
				badURL(a, nil)
				badField(a, "set-effort", nil)
				badField(a, "set-key", err)
			})
			return
		}
		a.post(func() {
			badField(a, "set-key", nil)
			badField(a, "set-effort", nil)
		})
		// The page's Content-Security-Policy is read off the callback
		// (pagePolicies awaits a fetch); the dialog closes once it passes.
		href := js.Global().Get("location").Get("href").String()
		go func() {
			target := baseURLOf(s)
			err := playground.CheckConnect(pagePolicies(), href, target)
			a.post(func() {
				if !a.settingsOpen() {
					return // cancelled meanwhile
				}
				if err != nil && a.keepBlocked != target {
					// Said under the field; a second Save keeps it, and
					// sending then names the policy again.
					a.keepBlocked = target
					badURL(a, errors.New(err.Error()+" Save again to keep these settings anyway."))
					return
				}
				a.settingsDialog().Call("close")
				a.saveSettings(s)
			})
		}()
	})
}

// saveSettings keeps s and starts a new session with them when nothing
// is shown yet.
func (a *App) saveSettings(s Settings) {
	if providerNames[s.Provider] == "" {
		s.Provider = "scripted"
	}
	a.set = s
	saved := "Settings saved; they apply to the next new session."
	if err := s.save(); err != nil {
		saved = "Settings apply to the next new session, but are not kept after a reload (" + err.Error() + ")."
	}
	if !a.running && !a.isRemote() && (a.tr == nil || len(a.tr.Items) == 0) {
		a.newSession(saved)
	} else {
		a.note = saved
	}
}

// baseURLOf returns the base URL the provider of s is reached at: its
// own API when the settings name none.
func baseURLOf(s Settings) string {
	if u := strings.TrimSpace(s.BaseURL); u != "" {
		return u
	}
	switch s.Provider {
	case "openai":
		return openai.DefaultBaseURL
	case "openai-responses":
		return responses.DefaultBaseURL
	case "anthropic":
		return anthropic.DefaultBaseURL
	}
	return ""
}

func providerNote(p string) string {
	switch p {
	case "scripted":
		return "The scripted demo needs no network and no key: a model written in Go runs in this page."
	case "openai":
		return "Sends your prompts to api.openai.com with your key; a Base URL, if set, replaces https://api.openai.com/v1 (a proxy)."
	case "openai-responses":
		return "Sends your prompts to api.openai.com's Responses API with your key (store: false: the page keeps the conversation, reasoning included); a Base URL, if set, replaces https://api.openai.com/v1 (a proxy, Azure OpenAI, LM Studio)."
	case "openai-compatible":
		return "A local server: Ollama (http://127.0.0.1:11434/v1; start it with OLLAMA_ORIGINS set to this page's origin), llama.cpp's llama-server (http://127.0.0.1:8081/v1: start it with --port 8081, since its default 8080 is the playground's) or LM Studio (http://127.0.0.1:1234/v1, with CORS enabled in its server settings). Google's Gemini API: https://generativelanguage.googleapis.com/v1beta/openai with an AI Studio key."
	case "anthropic":
		return "Sends your prompts to api.anthropic.com with your key (the browser-access header is set); a Base URL, if set, replaces https://api.anthropic.com/v1 (a proxy)."
	}
	return ""
}

// providerChosen shows what the provider p needs and, for Chat
// Completions, the Gemini switch.
func providerChosen(a *App, p string) {
	byID(a.doc, "set-provider-note").SetTextContent(providerNote(p))
	show(byID(a.doc, "set-gemini-row"), p == "openai" || p == "openai-compatible")
	show(byID(a.doc, "set-images-row"), imagesSetting(p))
	show(byID(a.doc, "set-opened-row"), openaiAdapter(p))
	show(byID(a.doc, "set-system-prompt-row"), p != "scripted")
}

// currentPrompt is the system prompt of the session shown, as its model
// gets it, for the Settings dialog.
func (a *App) currentPrompt() string {
	switch {
	case a.isRemote():
		return "(a remote session: its server keeps its system prompt)"
	case a.sysPrompt == "":
		return "(no session yet)"
	}
	return a.sysPrompt
}

// badURL shows why the base URL is refused under its field (nil: clears it).
func badURL(a *App, err error) { badField(a, "set-base-url", err) }

// badField shows why the field id is refused under it, in the element
// id-error (nil: clears it).
func badField(a *App, id string, err error) {
	msg, in := byID(a.doc, id+"-error"), byID(a.doc, id)
	if err == nil {
		msg.SetTextContent("")
		show(msg, false)
		in.RemoveAttribute("aria-invalid")
		return
	}
	showFieldError(a, id, err)
	in.Focus()
}

// showFieldError shows err under the field id, without moving the focus.
func showFieldError(a *App, id string, err error) {
	msg := byID(a.doc, id+"-error")
	msg.SetTextContent(err.Error())
	show(msg, true)
	byID(a.doc, id).SetAttribute("aria-invalid", "true")
}
