package provider

import (
	"strconv"

	"github.com/floehq/floe/engine/omni"
)

// ImageLimit is how much of a request its images may take, so that a
// session whose history holds many (a screenshot tool's) stays within the
// API's limits on a request's size and its number of images: past them,
// every later request of the session, which sends the history again,
// failed. Bytes counts the length of each image's URL as sent (a data:
// URL's base64 text, a web URL's characters) and of each document's
// data: URL (a PDF's, inline data of another type than an image's: it
// takes of the request's size as much), Count the images; 0 or below for
// no limit.
type ImageLimit struct{ Bytes, Count int }

// Limit returns the limit of an adapter's options: bytes and count as
// given (0 = the adapter's default, def; below 0 = none).
func Limit(bytes, count int, def ImageLimit) ImageLimit {
	if bytes == 0 {
		bytes = def.Bytes
	}
	if count == 0 {
		count = def.Count
	}
	return ImageLimit{bytes, count}
}

// Apply returns msgs with the images a request leaves out sent as a text
// saying so (msgs itself when it keeps them all). The images of a message
// (an image, or a tool output's) go or stay together. Passing the limit,
// the oldest are left out until those kept take at most half of it (half
// the bytes and half the count), the newest message's always kept: the
// decision is made by replaying the messages oldest first, so a later
// request of the session, whose history only grows, leaves out the same
// ones, and more only when it passes the limit again. Its start, the
// prefix a provider's prompt cache holds, changes then, not at each
// request. A message whose images alone pass the limit is left out too:
// sent, its request failed, and every later one while it was the newest.
// An image or document message left out becomes a text message of its
// role; a tool output adds the text to its output. A document is left
// out only when the bytes pass the limit: it counts as no image. The history itself is
// not changed.
//
//go:noinline
func (l ImageLimit) Apply(msgs []omni.Message) []omni.Message {
	total, count := 0, 0
	for i := range msgs {
		b, n := images(&msgs[i].Payload)
		total += b
		count += n
	}
	if l.fits(total, count) {
		return msgs
	}
	half := l
	if half.Bytes > 1 {
		half.Bytes /= 2
	}
	if half.Count > 1 {
		half.Count /= 2
	}
	// The messages from start on are sent, but those over the limit
	// alone, which never join them.
	start, sum, kept := 0, 0, 0
	for i := range msgs {
		b, n := images(&msgs[i].Payload)
		if !l.fits(b, n) {
			continue
		}
		sum += b
		kept += n
		if l.fits(sum, kept) {
			continue
		}
		for ; start < i && !half.fits(sum, kept); start++ {
			if b, n := images(&msgs[start].Payload); l.fits(b, n) {
				sum -= b
				kept -= n
			}
		}
	}
	out := append([]omni.Message(nil), msgs...)
	for i := range out {
		p := &out[i].Payload
		b, n := images(p)
		big := !l.fits(b, n)
		if n == 0 && (b == 0 || total <= l.Bytes || l.Bytes <= 0) || i >= start && !big { // a document: for the bytes alone
			continue
		}
		head, tail := "[image omitted: ", " KB, older than those sent, left out to keep the request within the API's limits]"
		if n == 0 {
			head = "[document omitted: "
		} else if n > 1 {
			head = "[" + strconv.Itoa(n) + " images omitted: "
		}
		if big {
			tail = " KB, more than a request's images may take]"
		}
		t := head + strconv.Itoa((b+999)/1000) + tail
		if p.Type == omni.ToolCallOutput {
			if p.Output != "" {
				t = p.Output + "\n" + t
			}
			p.Output = t
		} else {
			p.Type, p.Text = omni.Text, t
		}
		// The Rest of an image or a tool output holds nothing else an
		// adapter sends.
		p.Rest = nil
	}
	return out
}

// fits reports whether total bytes of n images are within l.
func (l ImageLimit) fits(total, n int) bool {
	return (l.Bytes <= 0 || total <= l.Bytes) && (l.Count <= 0 || n <= l.Count)
}

// images returns the length of the URLs of p's images (a data: URL for
// inline data, not built) and their number: p's image, or a tool
// output's; for a document (inline data not an image's) its data: URL's
// length and 0.
func images(p *omni.Payload) (bytes, n int) {
	switch p.Type {
	case omni.ImageURL:
		if bytes = len(p.ImageURL()); bytes > 0 {
			n = 1
		}
		return bytes, n
	case omni.InlineData:
		if p.Role == omni.RoleAssistant {
			return 0, 0 // a file the model made: sent as a note (FileNote)
		}
		mime := p.MimeType()
		if isImage(mime) {
			n = 1
		}
		return len("data:;base64,") + len(mime) + len(p.Data()), n
	}
	for _, u := range p.Images() {
		bytes += len(u)
		n++
	}
	return bytes, n
}

// ImageCount returns the number of images of msgs, tool outputs' with
// them, as ImageLimit counts them.
func ImageCount(msgs []omni.Message) (n int) {
	for i := range msgs {
		_, k := images(&msgs[i].Payload)
		n += k
	}
	return n
}
