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

// SteerChip is how the composer shows a steering message queued, not yet
// delivered: "queued: ", its text, and the count of its images.
func SteerChip(text string, images int) string {
	chip := "queued: " + text
	switch {
	case images == 0:
	case text != "":
		chip += fmt.Sprintf(" + %d image(s)", images)
	default:
		chip += fmt.Sprintf("%d image(s)", images)
	}
	return chip
}

// MaxRemoteBody bounds the body of a request to a Floe server: past it
// floe-server answers 413. A remote session's task and its steering carry
// their images in theirs.
const MaxRemoteBody = 1 << 20

// RemoteTask returns the input of a remote session's task for text and
// images: as [PromptInput] makes it, in JSON (an array of OmniMessages),
// or why the server would not take it.
func RemoteTask(text string, images []string) (string, error) {
	b := []byte{'['}
	for i, m := range PromptInput(text, images) {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.AppendJSON(b)
	}
	b = append(b, ']')
	if err := checkRemoteBody(len(`{"input":}`)+len(b), len(images)); err != nil {
		return "", err
	}
	return string(b), nil
}

// CheckRemoteSteer says why steering of text and images cannot go to a
// remote session (its body is {text, images}); nil when it can.
func CheckRemoteSteer(text string, images []string) error {
	n := len(`{"text":,"images":[]}`) + jsonLen(text)
	for i, u := range images {
		n += jsonLen(u) + min(i, 1) // and a comma before it
	}
	return checkRemoteBody(n, len(images))
}

// jsonLen is the length of s as a JSON string, as JavaScript's
// JSON.stringify writes it (s in UTF-8).
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

func checkRemoteBody(n, images int) error {
	if n <= MaxRemoteBody {
		return nil
	}
	return fmt.Errorf("not sent: with its %d image(s) the request is %.1f MiB, over the 1 MiB a Floe server takes; attach fewer or smaller images", images, float64(n)/(1<<20))
}
