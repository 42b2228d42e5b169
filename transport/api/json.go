package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/floehq/floe/transport/host"
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

// decode reads a JSON object body into dst: at most MaxBody bytes, no
// unknown fields, nothing after the object. An empty body is allowed when
// optional is set. It writes the 4xx answer and returns false on failure.
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
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type: want application/json, got "+ct)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		writeError(w, http.StatusBadRequest, "bad_json", "request body: "+strings.TrimPrefix(err.Error(), "json: "))
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "bad_json", "request body: data after the JSON object")
		return false
	}
	if bytes.TrimSpace(body)[0] != '{' {
		writeError(w, http.StatusBadRequest, "bad_json", "request body: want a JSON object")
		return false
	}
	return true
}
