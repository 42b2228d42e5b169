package api

import (
	"net/http"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/host"
)

func streamHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// stream serves GET /api/sessions/{id}/stream (T-1, T-10).
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, s *host.Host) {
	last, resume := lastEventID(r)
	sub, _ := s.Subscribe(last, resume)
	serve(w, r, sub)
}

// userStream serves GET /api/events (T-2): hello, then user events.
func (h *Handler) userStream(w http.ResponseWriter, r *http.Request) {
	last, resume := lastEventID(r)
	sub, _ := h.reg.UserChannel().Subscribe(last, resume, []transport.Event{transport.Simple("hello")})
	serve(w, r, sub)
}

func lastEventID(r *http.Request) (string, bool) {
	v, ok := r.Header["Last-Event-Id"]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

func serve(w http.ResponseWriter, r *http.Request, sub *transport.Subscriber) {
	streamHeaders(w)
	rc := http.NewResponseController(w)
	rc.Flush()
	sub.Serve(r.Context(), w, rc.Flush)
}
