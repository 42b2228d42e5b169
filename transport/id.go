package transport

import "strconv"

// FormatID returns the SSE id of seq on a channel of the given epoch:
// "<epoch>-<seq>" (TRANSPORT.md T-5).
func FormatID(epoch string, seq uint64) string {
	return epoch + "-" + strconv.FormatUint(seq, 10)
}

// ParseID splits a Last-Event-ID value at its last "-" (T-8): the epoch is
// everything before it, the seq the decimal integer after it. ok is false
// when there is no "-" or the seq part is not a non-negative decimal integer
// that fits in 64 bits; a miss, never an error, for the caller.
func ParseID(id string) (epoch string, seq uint64, ok bool) {
	i := lastDash(id)
	if i < 0 {
		return "", 0, false
	}
	digits := id[i+1:]
	if digits == "" {
		return "", 0, false
	}
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], n, true
}

func lastDash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '-' {
			return i
		}
	}
	return -1
}
