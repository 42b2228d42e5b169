package host

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// IDRule is what a session id chosen by a client may be. Ids in the
// reference format (session-YYYY-MM-DD-HH-MM-SS-xxxxxxxx) follow it.
const IDRule = "a session id is 1 to 200 bytes of UTF-8 with no whitespace, control characters, \"/\" or \"\\\", not starting with \".\""

// checkNewID refuses an id a new session may not take: the Trace's rule
// (trace.ValidateID), and no whitespace or control character anywhere,
// since the id names files and shows in URLs and lists. Sessions already
// stored under such an id stay reachable (Get applies the Trace's rule
// only).
func checkNewID(id string) error {
	if err := trace.ValidateID(id); err != nil {
		return badRequest("id: " + strings.TrimPrefix(err.Error(), trace.ErrInvalid.Error()+": ") + "; " + IDRule)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return badRequest("id: session id " + trace.QuoteID(id) + " contains " + strconv.QuoteRune(r) + "; " + IDRule)
		}
	}
	return nil
}

// imageProblem says why u is not an image reference of PROTOCOL.md §3
// (image_url: a web URL or a data: URL), or "".
func imageProblem(u string) string {
	const want = " is not a web URL (http or https) or a data: URL"
	if scheme, rest, ok := strings.Cut(u, ":"); ok && strings.EqualFold(scheme, "data") {
		if !strings.Contains(rest, ",") {
			return short(u) + " is a data: URL without a comma before its data"
		}
		return ""
	}
	if strings.IndexFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return short(u) + want
	}
	p, err := url.Parse(u)
	if err != nil || (!strings.EqualFold(p.Scheme, "http") && !strings.EqualFold(p.Scheme, "https")) || p.Host == "" {
		return short(u) + want
	}
	return ""
}

// checkImages refuses input messages whose image_url is not an image
// reference; path names the input ("input").
func checkImages(path string, msgs []omni.Message) error {
	for i := range msgs {
		if m := &msgs[i]; m.IsModel(omni.ImageURL) {
			if why := imageProblem(m.Payload.ImageURL()); why != "" {
				return badRequest(path + "[" + strconv.Itoa(i) + "].payload.image_url: " + why)
			}
		}
	}
	return nil
}

// short quotes s, cut after 64 bytes.
func short(s string) string {
	if len(s) <= 64 {
		return quote(s)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return quote(s[:cut]) + "…"
}
