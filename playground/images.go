package playground

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// The images of a message (a tool output's images, a prompt's image_url)
// are drawn from data: URLs only: the page's Content-Security-Policy says
// img-src 'self' data:, and a remote image loaded by the page would tell
// its server who reads the session and when. A remote URL is offered as a
// link the person may follow; anything else is named, not drawn.

// MaxImageBytes bounds the data: URL of an image the page draws.
const MaxImageBytes = 8 << 20

// MaxImages bounds the images drawn for one item; the rest are counted.
const MaxImages = 16

// ShownImage says how the page shows one image URL.
type ShownImage struct {
	Src  string // a data:image/ URL to draw; "" when it is not drawn
	Link string // a remote http(s) URL offered as a link, not loaded
	Why  string // why it is not drawn ("" when Src is set)
}

// ShowImage decides how the page shows the image at url.
func ShowImage(raw string) ShownImage {
	lower := strings.ToLower(raw[:min(len(raw), 16)])
	switch {
	case strings.HasPrefix(lower, "data:image/"):
		if len(raw) > MaxImageBytes {
			return ShownImage{Why: fmt.Sprintf("not drawn: its data: URL is %.1f MB, over the %d MB the page draws", float64(len(raw))/(1<<20), MaxImageBytes>>20)}
		}
		return ShownImage{Src: raw}
	case strings.HasPrefix(lower, "data:"):
		return ShownImage{Why: "not drawn: a data: URL that is not an image"}
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Host == "" {
			return ShownImage{Why: "not drawn: not a valid URL"}
		}
		return ShownImage{Link: u.String(), Why: "a remote image, not loaded: this page shows data: images only (its Content-Security-Policy), and loading it would tell its server you are reading this"}
	}
	return ShownImage{Why: "not drawn: not a data: or http(s) URL"}
}

// CountImages returns the number of images a stored session's own records
// hold: its prompts' and steering's image_url messages and its tool
// outputs' images (a subagent's, with an origin, are its own session's).
// A model that takes none gets each as a text.
func CountImages(recs []omni.Message) int {
	n := 0
	for i := range recs {
		m := &recs[i]
		if len(m.Origin) > 0 || m.Type != omni.TypeModelMsg {
			continue
		}
		switch m.Payload.Type {
		case omni.ImageURL, omni.InlineData:
			n++
		case omni.ToolCallOutput:
			n += len(m.Payload.Images())
		}
	}
	return n
}
