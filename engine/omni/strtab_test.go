package omni

import (
	"testing"
	"unsafe"
)

// TestStrTabs checks that intern, lookupKey and eventLayout find every
// string of their lists, as the constant itself (validation compares addresses first), in
// few probes, and nothing else.
func TestStrTabs(t *testing.T) {
	if len(eventTab.list) != len(eventLayouts) {
		t.Fatalf("%d event types, %d layouts", len(eventTab.list), len(eventLayouts))
	}
	for name, tab := range map[string]*strTab{"intern": internTab, "keys": keyTab, "events": eventTab} {
		worst := 0
		for i, s := range tab.list {
			if got := tab.find([]byte(s)); got != i && tab.list[got] != s {
				t.Errorf("%s: %q found at %d, want %d", name, s, got, i)
			}
			probes := 1
			for h := strHash([]byte(s)); tab.list[tab.slot[h%strTabSize]-1] != s; h++ {
				probes++
			}
			worst = max(worst, probes)
		}
		if worst > 2 {
			t.Errorf("%s: a string takes %d probes; change strHash", name, worst)
		}
		for _, s := range []string{"", "x", "tex", "texts", "Text", "partial_text_", "model_ms", "budget_limite"} {
			if i := tab.find([]byte(s)); i >= 0 {
				t.Errorf("%s: %q found as %q", name, s, tab.list[i])
			}
		}
	}
	for _, s := range internTab.list {
		if got := intern([]byte(s)); unsafe.StringData(got) != unsafe.StringData(s) {
			t.Errorf("intern(%q) is not the constant", s)
		}
	}
}
