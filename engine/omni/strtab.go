package omni

// A strTab tells which of a fixed list of strings some bytes spell,
// without allocating: the list's indexes in an open-addressed table, by a
// hash of the length and three of the bytes. On WebAssembly a switch over
// the same strings (a binary search of compares) was 6–9 KB of code for
// each of intern and lookupKey; the table is a few hundred bytes, and
// as fast natively.
type strTab struct {
	list []string
	slot [strTabSize]uint8 // 1 + an index into list; 0: empty
}

const strTabSize = 256 // a power of two, over four times the longest list

func newStrTab(list []string) *strTab {
	if len(list) >= strTabSize/4 {
		panic("omni: strTab list too long")
	}
	t := &strTab{list: list}
	for i, s := range list {
		h := strHash(s)
		for t.slot[h%strTabSize] != 0 {
			h++
		}
		t.slot[h%strTabSize] = uint8(i + 1)
	}
	return t
}

// find returns the index of b in the list, or -1.
func (t *strTab) find(b []byte) int { return find(t, b) }

// findString is find for a string.
func (t *strTab) findString(s string) int { return find(t, s) }

func find[S string | []byte](t *strTab, b S) int {
	for h := strHash(b); ; h++ {
		k := t.slot[h%strTabSize]
		if k == 0 {
			return -1
		}
		if s := t.list[k-1]; len(s) == len(b) && s == string(b) {
			return int(k) - 1
		}
	}
}

// strHash mixes b's length and its first, middle and last bytes; for
// this package's lists no string is more than a probe from its slot (a
// test checks).
func strHash[S string | []byte](b S) uint32 {
	h := uint32(len(b))
	if len(b) > 0 {
		h = h*31 + uint32(b[0])
		h = h*31 + uint32(b[len(b)/2])
		h = h*31 + uint32(b[len(b)-1])
	}
	return h * 0x9E3779B1 >> 24
}
