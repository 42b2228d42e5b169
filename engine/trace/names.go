package trace

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/num"
)

// FileName returns the reference file name of a session's file:
// "<session_id>_<NNN>.jsonl".
func FileName(sessionID string, index int) string {
	n := strconv.Itoa(index)
	if len(n) < 3 {
		n = "00"[:3-len(n)] + n
	}
	return sessionID + "_" + n + ".jsonl"
}

// ParseFileName splits a reference file name "<session_id>_<NNN>.jsonl"
// (NNN: the index, at least 1, in three digits or more and without a
// leading zero beyond three, as FileName writes it) into the session id and
// the file index. Any other name is no file of a session: "_000", or
// "_0001", which a store would read as file 1 beside the "_001" it writes.
func ParseFileName(name string) (sessionID string, index int, ok bool) {
	base, found := strings.CutSuffix(name, ".jsonl")
	us := strings.LastIndexByte(base, '_')
	if !found || us < 1 || len(base)-us-1 < 3 || strings.IndexByte(base[:us], '\n') >= 0 {
		return "", 0, false
	}
	digits := base[us+1:]
	index, ok = num.Digits(digits)
	if !ok || index < 1 || len(digits) > 3 && digits[0] == '0' { // files are counted from 1: "_000" names none
		return "", 0, false
	}
	return base[:us], index, true
}

// isDateDir reports whether name has the shape of a date directory,
// yyyy-mm-dd.
func isDateDir(name string) bool {
	if len(name) != 10 || name[4] != '-' || name[7] != '-' {
		return false
	}
	for i := range len(name) {
		if i != 4 && i != 7 && (name[i] < '0' || name[i] > '9') {
			return false
		}
	}
	return true
}

// StartsFile reports whether the first record of data is a session_meta,
// the record a Trace file starts with: a store that knew a file it finds
// gone makes it again only for such an append (a file without it cannot be
// resumed).
func StartsFile(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	m, err := omni.Decode(line)
	return err == nil && m.Type == omni.TypeSessionMeta
}

func firstTimestamp(data []byte) (time.Time, bool) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if len(trimJS(line)) == 0 {
			continue
		}
		head, err := omni.Decode(line)
		if err != nil {
			return time.Time{}, false
		}
		t, err := omni.ParseTimestamp(head.Timestamp)
		return t, err == nil
	}
	return time.Time{}, false
}
