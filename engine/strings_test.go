package engine

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// The hand-written matchers agree with the §18 regular expressions.
var (
	reUnwrap = []*regexp.Regexp{
		regexp.MustCompile(`^\[turn_aborted\]\n?([\s\S]*?)\n?\[/turn_aborted\]\s*$`),
		regexp.MustCompile(`^\[turn_retried\]\n?([\s\S]*?)\n?\[/turn_retried\]\s*$`),
		regexp.MustCompile(`^<turn_aborted>\n?([\s\S]*?)\n?</turn_aborted>\s*$`),
		regexp.MustCompile(`^<turn_retried>\n?([\s\S]*?)\n?</turn_retried>\s*$`),
	}
	reSquare = regexp.MustCompile(`\[summary\]([\s\S]*?)\[/summary\]`)
	reAngle  = regexp.MustCompile(`<summary>([\s\S]*?)</summary>`)
	reTags   = regexp.MustCompile(`\[/?summary\]|</?summary>`)
)

func regexpUnwrap(text string) (string, bool) {
	for _, re := range reUnwrap {
		if m := re.FindStringSubmatch(text); m != nil {
			return m[1], true
		}
	}
	return "", false
}

func regexpExtract(raw string) string {
	for _, re := range []*regexp.Regexp{reSquare, reAngle} {
		for _, m := range re.FindAllStringSubmatch(raw, -1) {
			if s := jsTrim(reTags.ReplaceAllString(m[1], "")); s != "" {
				return s
			}
		}
	}
	rest := reSquare.ReplaceAllString(raw, "")
	rest = reAngle.ReplaceAllString(rest, "")
	return jsTrim(reTags.ReplaceAllString(rest, ""))
}

var matcherSeeds = []string{
	"", "[turn_aborted]\n[/turn_aborted]", "[turn_aborted][/turn_aborted]",
	"[turn_aborted]\n  a\n  b\n[/turn_aborted]", "[turn_aborted]\n\n[/turn_aborted] \n",
	"[turn_retried]\nx\n[/turn_retried]x[/turn_retried]\t", "<turn_aborted>\nold\n</turn_aborted>",
	"[turn_aborted]a[/turn_aborted]b[/turn_aborted]", "x[turn_aborted][/turn_aborted]",
	"[summary]one[/summary]", "a [summary] [/summary] [summary]two[/summary]",
	"<summary>angle</summary>", "[summary]a[summary]b[/summary]c[/summary]",
	"plain text", "[/[summary]summary]", "pre [summary]unclosed", "<summary>[summary]x[/summary]</summary>",
	"[summary]\n\n[/summary] tail", "\u00a0[summary]\u3000[/summary]\u00a0",
}

func TestMatchersAgreeWithRegexp(t *testing.T) {
	for _, s := range matcherSeeds {
		gi, gok := unwrapBlock(s)
		wi, wok := regexpUnwrap(s)
		if gi != wi || gok != wok {
			t.Errorf("unwrap %q: got %q,%v want %q,%v", s, gi, gok, wi, wok)
		}
		if g, w := ExtractSummary(s), regexpExtract(s); g != w {
			t.Errorf("extract %q: got %q want %q", s, g, w)
		}
	}
}

func FuzzMatchers(f *testing.F) {
	for _, s := range matcherSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsAny(s, "[<") {
			s = "[turn_aborted]" + s + "[summary]" + s + "[/summary]"
		}
		gi, gok := unwrapBlock(s)
		wi, wok := regexpUnwrap(s)
		if gi != wi || gok != wok {
			t.Fatalf("unwrap %q: got %q,%v want %q,%v", s, gi, gok, wi, wok)
		}
		if g, w := ExtractSummary(s), regexpExtract(s); g != w {
			t.Fatalf("extract %q: got %q want %q", s, g, w)
		}
	})
}

// TestStamperMatchesFormat checks the stamper's shortcut (within a minute,
// only the seconds and milliseconds are rewritten) against
// omni.FormatTimestamp over steps of every size.
func TestStamperMatchesFormat(t *testing.T) {
	var st stamper
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 12, 31, 23, 58, 59, 998e6, time.UTC)
	steps := []time.Duration{0, time.Millisecond, 999 * time.Millisecond, time.Second, 59 * time.Second, time.Minute, time.Hour, 24 * time.Hour, 365 * 24 * time.Hour}
	for i := 0; i < 20000; i++ {
		now = now.Add(steps[rng.IntN(len(steps))] + time.Duration(rng.IntN(3))*time.Millisecond)
		var m omni.Message
		st.stampAt(now, &m)
		if want := omni.FormatTimestamp(now); m.Timestamp != want {
			t.Fatalf("step %d: stamped %q, want %q", i, m.Timestamp, want)
		}
	}
}

// A stamper copied from one that stamped within the same minute keeps the
// shortcut: its first stamp rewrites the seconds and milliseconds (one
// allocation, the string), where a zero stamper formats the whole time.
// The driver's stamper starts as a copy of the session's, a tool's as a
// copy of the driver's at dispatch (runAttempt, dispatch).
func TestCopiedStamperSkipsTheCalendar(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 20, 40, 1, 5e6, time.UTC)
	var last stamper
	last.stampAt(t0, &omni.Message{})
	t1 := t0.Add(1234 * time.Millisecond)
	var m omni.Message
	copied := testing.AllocsPerRun(50, func() {
		st := last
		st.stampAt(t1, &m)
	})
	if m.Timestamp != omni.FormatTimestamp(t1) {
		t.Fatalf("stamped %q, want %q", m.Timestamp, omni.FormatTimestamp(t1))
	}
	fresh := testing.AllocsPerRun(50, func() {
		var st stamper
		st.stampAt(t1, &m)
	})
	if copied != 1 || fresh <= copied {
		t.Fatalf("a copied stamper's first stamp took %v allocations, a zero one's %v: want 1 and more", copied, fresh)
	}
}
