package server

import (
	"strings"
	"testing"
)

// FuzzParseModel: any values of the settings are taken or refused with an
// error naming a setting (as the user writes it) or the key's source; a
// model taken has the budget of images ParseModel's doc gives (0 is the
// adapter's, below 0 no limit, else the number given).
func FuzzParseModel(f *testing.F) {
	f.Add("openai", "m", "", "5000000", "0", "true", "")
	f.Add("anthropic", "m", "", "-1", "10", "1", "")
	f.Add("openai-compatible", "deepseek-chat", "https://api.deepseek.com", "", "", "no", "90s")
	f.Add("", "", "", "3", "", "", "")
	f.Add("openai", "m", "", "+7", "2147483648", "false", "0")
	f.Fuzz(func(t *testing.T, model, id, base, bytes, images, noImages, idle string) {
		env := map[string]string{"FLOE_MODEL": model, "FLOE_MODEL_ID": id, "FLOE_BASE_URL": base, "FLOE_MAX_IMAGE_BYTES": bytes,
			"FLOE_MAX_IMAGES": images, "FLOE_NO_IMAGES": noImages, "FLOE_IDLE_TIMEOUT_MS": idle, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
		mc, err := ParseModel(vars(env))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "FLOE_") {
				t.Fatalf("ParseModel(%q): %v: names no setting", env, err)
			}
			return
		}
		for _, c := range []struct {
			v   string
			got int
		}{{bytes, mc.MaxImageBytes}, {images, mc.MaxImages}} {
			if c.v == "" && c.got != 0 || c.v == "0" && c.got != -1 || c.got < -1 {
				t.Fatalf("ParseModel(%q): %q taken as %d", env, c.v, c.got)
			}
		}
		if mc.NoImages && (mc.Kind == ModelScripted || noImages != "true" && noImages != "1") {
			t.Fatalf("ParseModel(%q): NoImages with %s", env, mc.Kind)
		}
	})
}
