package playground

import (
	"fmt"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// The composer takes images (a file chosen, pasted or dropped): each goes
// with the prompt as an image_url user message holding a data: URL
// (PROTOCOL.md), after the prompt's text.

// AttachTypes are the image types the composer takes: those the providers
// read.
var AttachTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// MaxAttachBytes bounds one attached image file; its data: URL is a third
// larger, still under [MaxImageBytes], so the page draws it.
const MaxAttachBytes = 5 << 20

// MaxAttachImages bounds the images attached to one prompt.
const MaxAttachImages = 8

// CheckAttach says why the file name of type mime and size bytes cannot be
// attached when have images are already; nil when it can.
func CheckAttach(name, mime string, size int64, have int) error {
	ok := false
	for _, t := range AttachTypes {
		ok = ok || mime == t
	}
	switch {
	case !ok:
		what := mime
		if what == "" {
			what = "of an unknown type"
		}
		return fmt.Errorf("%s not attached: it is %s; the composer takes PNG, JPEG, GIF and WebP images", name, what)
	case size > MaxAttachBytes:
		return fmt.Errorf("%s not attached: it is %.1f MB, over the %d MB an image may have", name, float64(size)/(1<<20), MaxAttachBytes>>20)
	case have >= MaxAttachImages:
		return fmt.Errorf("%s not attached: a prompt takes at most %d images", name, MaxAttachImages)
	}
	return nil
}

// PromptInput is a run's input for a prompt: its text (when not blank),
// then one image_url message per image, each stamped now.
func PromptInput(text string, images []string) []omni.Message {
	now := time.Now().UTC().Format(omni.TimestampLayout)
	var in []omni.Message
	if strings.TrimSpace(text) != "" {
		in = append(in, omni.UserText(text))
	}
	for _, u := range images {
		in = append(in, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}})
	}
	for i := range in {
		in[i].Timestamp = now
	}
	return in
}
