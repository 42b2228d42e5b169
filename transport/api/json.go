package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages read as the stream writes them
	enc.Encode(v)
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
		} else {
			writeError(w, http.StatusBadRequest, "bad_request", "reading body: "+err.Error())
		}
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
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
