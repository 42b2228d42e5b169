package provider

// CallID returns a tool call id as a server takes one of at most max
// bytes: id itself when it fits, else its first bytes, "_" and 11
// letters and digits of a hash of the whole id. A history from another
// provider holds ids of its making (vLLM's "chatcmpl-tool-" and 32 hex
// digits, 46 bytes), which OpenAI's Chat API refuses above 40 bytes and
// its Responses API above 64. The same id always gives the same result,
// so a call and its output still pair. Under 12 bytes it is max letters
// and digits of the hash; under 1, "".
//
//go:noinline
func CallID(id string, max int) string {
	if len(id) <= max {
		return id
	}
	n := max - 12
	if n < 0 {
		return hashID(id, max)
	}
	for n > 0 && id[n]&0xc0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return id[:n] + "_" + hashID(id, 11)
}

// AlnumID returns a tool call id as a server takes one of exactly n ASCII
// letters and digits (Mistral's API: 9): id itself when it is one, else n
// letters and digits of a hash of id, the same for the same id.
//
//go:noinline
func AlnumID(id string, n int) string {
	ok := len(id) == n
	for i := 0; ok && i < n; i++ {
		c := id[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	if ok {
		return id
	}
	return hashID(id, n)
}

// hashID returns n letters and digits of the 64-bit FNV-1a hash of s (11
// hold all of it); past 11, those of s and a NUL follow. n < 1 gives "".
func hashID(s string, n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	var b [11]byte
	for i := range b {
		b[i] = digits[h%62]
		h /= 62
	}
	if n > 11 {
		return string(b[:]) + hashID(s+"\x00", n-11)
	}
	return string(b[:max(n, 0)])
}
