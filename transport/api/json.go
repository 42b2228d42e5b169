package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/request"
)

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

func writeErr(w http.ResponseWriter, err error) {
	var he *host.Error
	if errors.As(err, &he) {
		writeError(w, he.Status, he.Code, he.Message)
		return
	}
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}

func writeJSON(w http.ResponseWriter, status int, v any) { writeJSONTo(w, w, status, v) }

// writeJSONTo is writeJSON with the body written to body (w's, under a
// write deadline).
func writeJSONTo(w http.ResponseWriter, body io.Writer, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(body)
	enc.SetEscapeHTML(false) // messages read as the stream writes them
	enc.Encode(v)
}

// historyChunk is how much of a history writeHistory encodes before it
// writes it out.
const historyChunk = 64 << 10

// writeHistory answers 200 with the object writeJSON would write for head's
// fields, "messages": msgs, then tail's fields; but it encodes the messages
// one at a time and writes them out every historyChunk bytes. A session of
// 100,000 records (a 14 MB Trace) was encoded into one buffer grown by
// copies, about 240 MB allocated per request on top of the history. The
// body goes to body (w's, under a write deadline).
func writeHistory(w http.ResponseWriter, body io.Writer, head any, msgs []omni.Message, tail any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	buf := appendObject(nil, head)
	buf = append(buf[:len(buf)-1], `,"messages":[`...)
	for i := range msgs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = msgs[i].AppendJSON(buf)
		if len(buf) >= historyChunk {
			if _, err := body.Write(buf); err != nil {
				return
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, "],"...)
	buf = append(buf, appendObject(nil, tail)[1:]...)
	body.Write(append(buf, '\n'))
}

// appendObject appends v's JSON object as writeJSON encodes it, without
// the final newline.
func appendObject(dst []byte, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte{'\n'})...)
}

// decode reads a JSON object body into dst, a pointer to a struct whose
// fields name their keys in json tags: at most MaxBody bytes, no unknown or
// repeated keys, nothing after the object. An empty body is allowed when
// optional is set; null stands for an absent key. It writes the 4xx answer
// and returns false on failure; messages name the key and the JSON type it
// wants, never a Go type.
func decode(w http.ResponseWriter, r *http.Request, dst any, optional bool) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds 1 MiB")
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			writeError(w, http.StatusRequestTimeout, "body_timeout", "reading body: "+err.Error())
		} else {
			writeError(w, http.StatusBadRequest, "bad_request", "reading body: "+err.Error())
		}
		return false
	}
	if request.Blank(body) {
		if optional {
			return true
		}
		writeError(w, http.StatusBadRequest, "bad_json", "request body: want a JSON object, got nothing")
		return false
	}
	if msg := request.ContentType(r.Header.Get("Content-Type")); msg != "" {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", msg)
		return false
	}
	if msg := request.Decode(body, dst); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_json", msg)
		return false
	}
	return true
}
