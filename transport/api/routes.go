package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/request"
)

type sessionInfo struct {
	ID           string `json:"id"`
	State        string `json:"state"`
	ApprovalMode string `json:"approvalMode,omitempty"`
	FirstPrompt  string `json:"firstPrompt,omitempty"`
	LastActivity string `json:"lastActivity,omitempty"`
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	infos, err := h.reg.List(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	out := make([]sessionInfo, 0, len(infos))
	for _, in := range infos {
		s := sessionInfo{ID: in.ID, State: in.State, FirstPrompt: in.FirstPrompt}
		if !in.LastActivity.IsZero() {
			s.LastActivity = in.LastActivity.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, s)
	}
	// A long list is written under the write timeout (Handler.body).
	dw := h.body(w)
	writeJSONTo(w, dw, http.StatusOK, map[string]any{"sessions": out})
	dw.arm() // what net/http still holds is written after the handler
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID           string `json:"id"`
		ApprovalMode string `json:"approvalMode"`
	}
	if !decode(w, r, &req, true) {
		return
	}
	s, err := h.reg.Create(r.Context(), req.ID, req.ApprovalMode)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, sessionInfo{ID: s.ID(), State: s.State(), ApprovalMode: s.Mode()})
}

func (h *Handler) info(w http.ResponseWriter, r *http.Request, s *host.Host) {
	writeJSON(w, http.StatusOK, sessionInfo{ID: s.ID(), State: s.State(), ApprovalMode: s.Mode()})
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request, s *host.Host) {
	var req struct {
		ApprovalMode *string `json:"approvalMode"`
	}
	if !decode(w, r, &req, false) {
		return
	}
	if req.ApprovalMode == nil {
		writeError(w, http.StatusBadRequest, "bad_request", "approvalMode: missing")
		return
	}
	if err := s.SetMode(*req.ApprovalMode); err != nil {
		writeErr(w, err)
		return
	}
	h.info(w, r, s)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, id string) {
	if err := h.reg.Delete(r.Context(), id); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) task(w http.ResponseWriter, r *http.Request, s *host.Host) {
	var req struct {
		Input         json.RawMessage `json:"input"`
		ThinkingLevel string          `json:"thinkingLevel"`
		QueueIfBusy   bool            `json:"queueIfBusy"`
	}
	if !decode(w, r, &req, false) {
		return
	}
	input, ok := parseInput(w, req.Input)
	if !ok {
		return
	}
	// Refused here rather than when the model reads it: the run would
	// start, and abort at its first request.
	if _, err := provider.ParseThinking("thinkingLevel", req.ThinkingLevel); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	taskID, err := s.Submit(host.Task{Input: input, ThinkingLevel: req.ThinkingLevel, QueueIfBusy: req.QueueIfBusy})
	if err != nil {
		writeErr(w, err)
		return
	}
	// A queued task's id is the one task_state's pendingFollowUps and a
	// task_failed name it by.
	writeJSON(w, http.StatusAccepted, struct {
		Queued bool   `json:"queued"`
		TaskID string `json:"taskId,omitempty"`
	}{taskID != "", taskID})
}

// parseInput takes an array of OmniMessages or, for convenience, one string
// (a user text message).
func parseInput(w http.ResponseWriter, raw json.RawMessage) ([]omni.Message, bool) {
	const want = "input: want an array of OmniMessages or a string"
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		writeError(w, http.StatusBadRequest, "bad_request", want+", got nothing")
		return nil, false
	}
	switch t[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil || strings.TrimSpace(text) == "" {
			writeError(w, http.StatusBadRequest, "bad_request", "input: want an array of OmniMessages or a non-empty string, got an empty string")
			return nil, false
		}
		return []omni.Message{omni.UserText(text)}, true
	case '[':
	default:
		writeError(w, http.StatusBadRequest, "bad_request", want+", got "+request.KindOf(raw))
		return nil, false
	}
	msgs, err := omni.DecodeArray(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", inputErr(err))
		return nil, false
	}
	return msgs, true
}

// inputErr words an error of omni.DecodeArray with the path from the body:
// "input[0].payload.text: want string, got number".
func inputErr(err error) string {
	var de *omni.DecodeError
	if !errors.As(err, &de) {
		return "input: " + strings.TrimPrefix(err.Error(), "omni: ")
	}
	switch {
	case de.Field == "":
		return "input: " + de.Msg
	case de.Field[0] == '[':
		return "input" + de.Field + ": " + de.Msg
	}
	return "input." + de.Field + ": " + de.Msg
}

func (h *Handler) steer(w http.ResponseWriter, r *http.Request, s *host.Host) {
	var req struct {
		Text   string   `json:"text"`
		Images []string `json:"images"`
	}
	if !decode(w, r, &req, false) {
		return
	}
	if err := s.Steer(req.Text, req.Images); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) abort(w http.ResponseWriter, r *http.Request, s *host.Host) {
	if !decode(w, r, &struct{}{}, true) {
		return
	}
	if s.Abort() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) retryNow(w http.ResponseWriter, r *http.Request, s *host.Host) {
	if !decode(w, r, &struct{}{}, true) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"skipped": s.RetryNow()})
}

func (h *Handler) compact(w http.ResponseWriter, r *http.Request, s *host.Host) {
	if !decode(w, r, &struct{}{}, true) {
		return
	}
	if err := s.Compact(); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request, s *host.Host, callID string) {
	var req struct {
		Decision string `json:"decision"`
	}
	if !decode(w, r, &req, false) {
		return
	}
	if err := s.Approve(callID, req.Decision); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// unpublished locates messages[from:from+count]: Trace records not yet
// published at the cursor, which may still arrive on the stream.
type unpublished struct {
	From  int `json:"from"`
	Count int `json:"count"`
}

type live struct {
	Cursor    string         `json:"cursor"`
	Fragments []omni.Message `json:"fragments"`
}

func (h *Handler) messages(w http.ResponseWriter, r *http.Request, s *host.Host) {
	m, err := s.Messages(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	head := struct {
		SessionID string `json:"sessionId"`
		State     string `json:"state"`
	}{s.ID(), m.State}
	tail := struct {
		Cursor           string         `json:"cursor"`
		Unpublished      unpublished    `json:"unpublished"`
		PendingApprovals []omni.Message `json:"pendingApprovals,omitempty"`
		Live             *live          `json:"live,omitempty"`
	}{Cursor: m.Cursor, Unpublished: unpublished{m.TailStart, m.Tail}, PendingApprovals: m.Pending}
	if m.Live {
		tail.Live = &live{Cursor: m.Cursor, Fragments: m.Fragments}
		if tail.Live.Fragments == nil {
			tail.Live.Fragments = []omni.Message{}
		}
	}
	dw := h.body(w)
	writeHistory(w, dw, head, m.History, tail)
	dw.arm() // what net/http still holds is written after the handler
}
