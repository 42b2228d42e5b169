package provider

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// shot is a tool output holding images of the given lengths of base64
// (each a data: URL of 22 more bytes).
func shot(id string, sizes ...int) omni.Message {
	m := omni.ToolOutput(id, "shot "+id, omni.StatusCompleted)
	imgs := make([]string, len(sizes))
	for i, n := range sizes {
		imgs[i] = "data:image/png;base64," + unique(n)
	}
	m.Payload.Edit().Images = imgs
	return m
}

// inline is a user's inline_data image of n bytes of base64 (its data:
// URL 22 bytes more).
func inline(n int) omni.Message {
	m := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: omni.RoleUser, StopReason: omni.StatusCompleted}}
	r := m.Payload.Edit()
	r.MimeType, r.Data = "image/png", unique(n)
	return m
}

var serial int

// unique returns n bytes of base64, of another image each time for n of
// 8 and more.
func unique(n int) string {
	serial++
	s := strings.Repeat("A", n)
	if n >= 8 {
		s = strconv.Itoa(10_000_000+serial) + s[8:]
	}
	return s
}

// kept lists, message by message of msgs holding images, whether Apply
// sent them (got): an image message as it was, a tool output with its
// images.
func kept(t *testing.T, msgs, got []omni.Message) []bool {
	t.Helper()
	var out []bool
	for i := range got {
		p, q := &got[i].Payload, &msgs[i].Payload
		switch {
		case ImageOf(q) == "" && len(q.Images()) == 0:
		case p.Type == omni.Text && strings.Contains(p.Text, " omitted: "):
			out = append(out, false)
		case ImageOf(p) != "" || len(p.Images()) == len(q.Images()) && p.Output == q.Output:
			out = append(out, true)
		case len(p.Images()) == 0 && strings.HasPrefix(p.Output, q.Output) && strings.Contains(p.Output, " omitted: "):
			out = append(out, false)
		default:
			t.Fatalf("message %d: %+v", i, p)
		}
	}
	return out
}

const older = " KB, older than those sent, left out to keep the request within the API's limits]"

// Under the limit, and without images, Apply returns the messages
// themselves: the request is the one sent before the limit.
func TestImageLimitUnder(t *testing.T) {
	l := ImageLimit{Bytes: 1000, Count: 3}
	for _, msgs := range [][]omni.Message{
		nil,
		{omni.UserText("Hi.")},
		{omni.UserText("Look."), shot("a", 100, 200), inline(300)},
		{shot("a", 978)}, // 1000 with its prefix
	} {
		if got := l.Apply(msgs); len(msgs) > 0 && &got[0] != &msgs[0] {
			t.Errorf("%d messages under the limit: copied", len(msgs))
		}
	}
}

// Past the byte limit, the oldest images are text, until those kept take
// half of it; the newest are kept; the history is not changed.
func TestImageLimitBytes(t *testing.T) {
	l := ImageLimit{Bytes: 1000}
	msgs := []omni.Message{omni.UserText("Look."), inline(278), shot("a", 178, 178), omni.AssistantText("Seen.", omni.StatusCompleted), shot("b", 278)}
	// 300 + 200 + 200 + 300 = 1000: all kept.
	if got := l.Apply(msgs); &got[0] != &msgs[0] {
		t.Fatalf("at the limit: copied")
	}
	msgs = append(msgs, shot("c", 78)) // 1100: down to 500 or less
	got := l.Apply(msgs)
	if k := kept(t, msgs, got); !equal(k, []bool{false, false, true, true}) {
		t.Fatalf("kept %v", k)
	}
	if p := got[1].Payload; p.Type != omni.Text || p.Role != omni.RoleUser || p.Text != "[image omitted: 1"+older || p.Rest != nil {
		t.Errorf("the inline image: %+v", p)
	}
	if o := got[2].Payload; o.Output != "shot a\n[2 images omitted: 1"+older || len(o.Images()) != 0 || o.ToolCallID != "a" {
		t.Errorf("the tool output: %q %v", o.Output, o.Images())
	}
	if got[4].Payload.Output != "shot b" || got[4].Payload.Images()[0] != msgs[4].Payload.Images()[0] {
		t.Errorf("a kept output changed: %q", got[4].Payload.Output)
	}
	if msgs[1].Payload.Type != omni.InlineData || len(msgs[2].Payload.Images()) != 2 || msgs[2].Payload.Output != "shot a" {
		t.Errorf("the history changed")
	}
	// A tool output without text gets the note alone.
	out := shot("d", 878)
	out.Payload.Output = ""
	if got := l.Apply(append(msgs, out, inline(578))); got[6].Payload.Output != "[image omitted: 1"+older {
		t.Errorf("got %q", got[6].Payload.Output)
	}
}

// Past the count, the oldest are left out down to half of it.
func TestImageLimitCount(t *testing.T) {
	l := ImageLimit{Count: 4}
	var msgs []omni.Message
	for i := 0; i < 5; i++ {
		msgs = append(msgs, inline(10))
	}
	if k := kept(t, msgs, l.Apply(msgs)); !equal(k, []bool{false, false, false, true, true}) {
		t.Fatalf("kept %v", k)
	}
	// One more: 3 kept, within the count: the same start.
	msgs = append(msgs, inline(10))
	if k := kept(t, msgs, l.Apply(msgs)); !equal(k, []bool{false, false, false, true, true, true}) {
		t.Fatalf("kept %v", k)
	}
	// A count of 1 keeps the newest.
	if k := kept(t, msgs, ImageLimit{Count: 1}.Apply(msgs)); !equal(k, []bool{false, false, false, false, false, true}) {
		t.Fatalf("count 1: kept %v", k)
	}
	// A tool output of more images than the count is left out whole.
	msgs = []omni.Message{inline(10), shot("a", 10, 10, 10, 10, 10)}
	if got := l.Apply(msgs); got[1].Payload.Output != "shot a\n[5 images omitted: 1 KB, more than a request's images may take]" || got[0].Payload.Type != omni.InlineData {
		t.Fatalf("got %+v", got)
	}
}

// Images larger than the byte limit alone are left out, the newest too,
// and the others stay: sent, they failed their request and every later
// one.
func TestImageLimitTooLarge(t *testing.T) {
	l := ImageLimit{Bytes: 1000, Count: 10}
	msgs := []omni.Message{inline(278), omni.UserText("And this one?"), inline(1_200_000)}
	got := l.Apply(msgs)
	if k := kept(t, msgs, got); !equal(k, []bool{true, false}) {
		t.Fatalf("kept %v", k)
	}
	if want := "[image omitted: 1201 KB, more than a request's images may take]"; got[2].Payload.Text != want {
		t.Errorf("got %q\nwant %q", got[2].Payload.Text, want)
	}
}

// A document (a PDF) counts toward the bytes, which the API's limit on a
// request's size bounds, not toward the images: past the bytes it is left
// out as the oldest image is, and alone past them too; within the count
// it is never left out.
func TestImageLimitDocuments(t *testing.T) {
	doc := func(n int) omni.Message { // its data: URL 28 bytes more
		m := inline(n)
		m.Payload.Edit().MimeType = "application/pdf"
		return m
	}
	msgs := []omni.Message{omni.UserText("Read it."), doc(572), shot("a", 478)}
	got := ImageLimit{Bytes: 1000}.Apply(msgs)
	if p := got[1].Payload; p.Type != omni.Text || p.Role != omni.RoleUser || p.Text != "[document omitted: 1"+older || p.Rest != nil {
		t.Errorf("the document: %+v", p)
	}
	if len(got[2].Payload.Images()) != 1 || msgs[1].Payload.Type != omni.InlineData {
		t.Errorf("the image or the history changed: %+v", got)
	}
	if got := (ImageLimit{Bytes: 1000}).Apply(msgs[:2]); &got[0] != &msgs[0] {
		t.Errorf("600 bytes of a document under 1000: copied")
	}
	if got := (ImageLimit{Bytes: 500}).Apply(msgs[:2]); got[1].Payload.Text != "[document omitted: 1 KB, more than a request's images may take]" {
		t.Errorf("a document past the limit alone: %+v", got[1].Payload)
	}
	msgs = []omni.Message{doc(5000), inline(10), inline(10), inline(10)}
	for _, l := range []ImageLimit{{Count: 2}, {Bytes: 1 << 20, Count: 2}} { // past the count alone, with a bound on the bytes or none
		if got := l.Apply(msgs); got[0].Payload.Type != omni.InlineData || got[1].Payload.Type != omni.Text || got[3].Payload.Type != omni.InlineData {
			t.Errorf("%+v, past the count alone: %+v", l, got)
		}
	}
}

// Below 0, no limit.
func TestImageLimitNone(t *testing.T) {
	msgs := []omni.Message{shot("a", 5000, 5000), inline(9000)}
	if got := Limit(-1, -1, ImageLimit{1000, 1}).Apply(msgs); &got[0] != &msgs[0] {
		t.Errorf("no limit: copied")
	}
	if got, want := Limit(0, 0, ImageLimit{1000, 1}), (ImageLimit{1000, 1}); got != want {
		t.Errorf("defaults: %v", got)
	}
	if got, want := Limit(7, -1, ImageLimit{1000, 1}), (ImageLimit{7, -1}); got != want {
		t.Errorf("given: %v", got)
	}
}

// A message once left out stays left out as the history grows, and the
// messages kept change only when the limit is passed again: request after
// request of random images, the ones left out of a request are left out
// of the next; those kept are the newest of the messages within the
// limit alone, within the limit, and after a cut within half of it (or
// the newest alone).
func TestImageLimitStable(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		l := ImageLimit{Bytes: 500 + r.Intn(3000), Count: r.Intn(8)}
		if r.Intn(4) == 0 {
			l.Bytes = -1
		}
		var msgs []omni.Message
		var sizes, counts []int // of each message of images
		var before []bool
		for req := 0; req < 30; req++ {
			switch r.Intn(4) {
			case 0:
				msgs = append(msgs, omni.UserText("more"))
			case 1:
				n := r.Intn(1200)
				msgs = append(msgs, inline(n))
				sizes, counts = append(sizes, n+22), append(counts, 1)
			default:
				s := make([]int, r.Intn(3))
				sum := 0
				for i := range s {
					s[i] = r.Intn(1500)
					sum += s[i] + 22
				}
				msgs = append(msgs, shot("c", s...))
				if len(s) > 0 {
					sizes, counts = append(sizes, sum), append(counts, len(s))
				}
			}
			now := kept(t, msgs, l.Apply(msgs))
			if len(now) != len(sizes) {
				t.Fatalf("%d messages of images, %d sizes", len(now), len(sizes))
			}
			cut := false
			for i, k := range before {
				if k && !now[i] {
					cut = true
				} else if !k && now[i] {
					t.Fatalf("round %d, request %d: message %d left out before, sent now", round, req, i)
				}
			}
			sum, n, newest, gap := 0, 0, -1, false
			for i := len(now) - 1; i >= 0; i-- {
				fits := l.fits(sizes[i], counts[i])
				switch {
				case now[i] && gap:
					t.Fatalf("round %d, request %d: message %d sent after an older one left out", round, req, i)
				case now[i]:
					sum += sizes[i]
					n += counts[i]
				case fits:
					gap = true
				}
				if fits && newest < 0 {
					newest = i
				}
			}
			if newest >= 0 && !now[newest] {
				t.Fatalf("round %d, request %d: the newest message %d left out", round, req, newest)
			}
			half := ImageLimit{l.Bytes / 2, l.Count / 2}
			if !l.fits(sum, n) || cut && len(sizes) > len(before) && newest == len(sizes)-1 && sum > sizes[newest] && !half.fits(sum, n) {
				t.Fatalf("round %d, request %d: %d images of %d bytes kept, limit %v, cut %v", round, req, n, sum, l, cut)
			}
			before = now
		}
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkImageLimit: a request's check of a long session of screenshots
// (a text and a tool output of a 2 KB image each, 400 messages), within
// the limit (no copy) and past it (half of them left out).
func BenchmarkImageLimit(b *testing.B) {
	var msgs []omni.Message
	for i := 0; i < 200; i++ {
		msgs = append(msgs, omni.UserText("next"), shot("c", 2000))
	}
	for _, c := range []struct {
		name string
		l    ImageLimit
	}{{"within", ImageLimit{Bytes: 1 << 30, Count: 500}}, {"past", ImageLimit{Bytes: 1 << 30, Count: 150}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.l.Apply(msgs)
			}
		})
	}
}

// A file the model made (an assistant's inline_data) is sent as a note,
// never as an image or a document (FileNote): it takes none of the limit,
// which left a user's image out for it.
func TestImageLimitAssistantFiles(t *testing.T) {
	made := inline(5000)
	made.Payload.Role = omni.RoleAssistant
	msgs := []omni.Message{inline(400), made, omni.UserText("Bluer.")}
	for _, l := range []ImageLimit{{Bytes: 1000}, {Count: 1}} {
		if got := l.Apply(msgs); &got[0] != &msgs[0] {
			t.Errorf("%+v: %+v", l, got)
		}
	}
	if n := ImageCount(msgs); n != 1 {
		t.Errorf("ImageCount = %d, want 1", n)
	}
}
