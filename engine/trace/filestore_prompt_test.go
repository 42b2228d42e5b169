//go:build !js || floenode

package trace

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

const promptRec = `{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":"PROMPT","stop_reason":"completed"}}` + "\n"

const otherRec = `{"timestamp":"2026-11-30T04:09:45.282Z","type":"event_msg","payload":{"type":"request_begin"}}` + "\n"

// A session's first prompt is read from the start of its file: listing
// read every session's first file whole (ten sessions of 14 MB: 145 MB).
// A prompt past the first chunk, or cut by its end, is found whole.
func TestFirstPromptReadsTheStartOfAFile(t *testing.T) {
	big := strings.Repeat(otherRec, (8<<20)/len(otherRec))
	for _, tc := range []struct {
		name, file, want string
		most             int // bytes read at most
	}{
		{"prompt first, 8 MB after", strings.Replace(promptRec, "PROMPT", "first", 1) + big, "first", promptChunk},
		{"prompt after 200 KB", strings.Repeat(otherRec, (200<<10)/len(otherRec)) + strings.Replace(promptRec, "PROMPT", "later", 1) + big, "later", 4 * promptChunk},
		{"prompt cut by the first chunk", strings.Repeat(" ", promptChunk-50) + "\n" + strings.Replace(promptRec, "PROMPT", "cut", 1) + big, "cut", 2 * promptChunk},
		{"no prompt", big, "", len(big) + 1},
		{"empty", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &countingReader{r: bytes.NewReader([]byte(tc.file))}
			got, _, err := firstPrompt(r)
			if err != nil || got != tc.want {
				t.Fatalf("firstPrompt = %q, %v; want %q", got, err, tc.want)
			}
			if r.n > tc.most {
				t.Errorf("read %d bytes of %d; want at most %d", r.n, len(tc.file), tc.most)
			}
		})
	}
}
