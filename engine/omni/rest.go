package omni

// Edit returns p's Rest for writing: a copy of the one p had (which other
// copies of the message may share), or a new one. Take it once for several
// fields.
func (p *Payload) Edit() *Rest {
	r := new(Rest)
	if p.Rest != nil {
		*r = *p.Rest
	}
	p.Rest = r
	return r
}

// UsageRest returns the Rest of a token_usage with the given counts: the
// Rest and both counts in one allocation.
func UsageRest(session, request TokenCounts) *Rest {
	u := newUsage()
	u.c = [2]TokenCounts{session, request}
	return &u.rest
}

// usage is a Rest and the two counts of a token_usage, allocated together.
type usage struct {
	rest Rest
	c    [2]TokenCounts
}

func newUsage() *usage {
	u := new(usage)
	u.rest.Session, u.rest.Request = &u.c[0], &u.c[1]
	return u
}

// sharedRests are the Rests of the engine's commonest events, one for
// every message that has them: an approval_decision of each standard
// decision and a request_end that completed at its first attempt (about
// five a turn of a tool-using task, each a Rest of 512 bytes before). A
// message's Rest is never written through once it is built (Edit copies
// it), so they can be shared.
var sharedRests = [...]Rest{
	restAllow:     {Decision: DecisionAllow},
	restDeny:      {Decision: DecisionDeny},
	restForbidden: {Decision: DecisionForbidden},
	restCompleted: {Status: StatusCompleted},
}

const (
	restAllow = iota
	restDeny
	restForbidden
	restCompleted
)

// CompletedEndRest returns the Rest of a request_end{completed} without an
// error or an attempt, shared by every such message.
func CompletedEndRest() *Rest { return &sharedRests[restCompleted] }

// noRest is the Rest of a payload without one, for view. Nothing writes to
// it.
var noRest Rest

// view returns p's Rest, or noRest, to read: never to write through.
func (p *Payload) view() *Rest {
	if p.Rest == nil {
		return &noRest
	}
	return p.Rest
}

// rest returns p's Rest, making one when p has none: for a payload being
// decoded or built, which no other message shares yet. Out of line: the
// decoder calls it for each of Rest's keys (inlined, 11 kB of floe.wasm
// raw).
//
//go:noinline
func (p *Payload) rest() *Rest {
	if p.Rest == nil {
		p.Rest = new(Rest)
	}
	return p.Rest
}

// The getters of Rest's fields: each returns the field of p.Rest, or its
// zero value when p has no Rest.

// ImageURL returns p.Rest.ImageURL, or "".
func (p *Payload) ImageURL() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.ImageURL
}

// Data returns p.Rest.Data, or "".
func (p *Payload) Data() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Data
}

// MimeType returns p.Rest.MimeType, or "".
func (p *Payload) MimeType() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.MimeType
}

// Images returns p.Rest.Images, or nil.
func (p *Payload) Images() []string {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Images
}

// Sender returns p.Rest.Sender, or "".
func (p *Payload) Sender() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Sender
}

// Fidelity returns p.Rest.Fidelity, or nil.
func (p *Payload) Fidelity() RawJSON {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Fidelity
}

// Status returns p.Rest.Status, or "".
func (p *Payload) Status() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Status
}

// ErrorMessage returns p.Rest.ErrorMessage, or "".
func (p *Payload) ErrorMessage() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.ErrorMessage
}

// Attempt returns p.Rest.Attempt, or 0.
func (p *Payload) Attempt() int {
	if p.Rest == nil {
		return 0
	}
	return p.Rest.Attempt
}

// RetryInMs returns p.Rest.RetryInMs, or nil.
func (p *Payload) RetryInMs() *int {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.RetryInMs
}

// Decision returns p.Rest.Decision, or "".
func (p *Payload) Decision() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Decision
}

// Session returns p.Rest.Session, or nil.
func (p *Payload) Session() *TokenCounts {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Session
}

// Request returns p.Rest.Request, or nil.
func (p *Payload) Request() *TokenCounts {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Request
}

// Reason returns p.Rest.Reason, or "".
func (p *Payload) Reason() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Reason
}

// ReasonNull returns p.Rest.ReasonNull, or false.
func (p *Payload) ReasonNull() bool {
	if p.Rest == nil {
		return false
	}
	return p.Rest.ReasonNull
}

// Mode returns p.Rest.Mode, or "".
func (p *Payload) Mode() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Mode
}

// Context returns p.Rest.Context, or 0.
func (p *Payload) Context() int64 {
	if p.Rest == nil {
		return 0
	}
	return p.Rest.Context
}

// Turns returns p.Rest.Turns, or 0.
func (p *Payload) Turns() int64 {
	if p.Rest == nil {
		return 0
	}
	return p.Rest.Turns
}

// SessionID returns p.Rest.SessionID, or "".
func (p *Payload) SessionID() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.SessionID
}

// Tools returns p.Rest.Tools, or nil.
func (p *Payload) Tools() []ToolDefinition {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Tools
}

// Servers returns p.Rest.Servers, or nil.
func (p *Payload) Servers() []string {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Servers
}

// Results returns p.Rest.Results, or nil.
func (p *Payload) Results() RawJSON {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Results
}

// Outcome returns p.Rest.Outcome, or "".
func (p *Payload) Outcome() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Outcome
}

// Rounds returns p.Rest.Rounds, or 0.
func (p *Payload) Rounds() int64 {
	if p.Rest == nil {
		return 0
	}
	return p.Rest.Rounds
}

// TokensUsed returns p.Rest.TokensUsed, or 0.
func (p *Payload) TokensUsed() int64 {
	if p.Rest == nil {
		return 0
	}
	return p.Rest.TokensUsed
}

// Provider returns p.Rest.Provider, or "".
func (p *Payload) Provider() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Provider
}

// ModelID returns p.Rest.ModelID, or "".
func (p *Payload) ModelID() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.ModelID
}

// ModelContextWindow returns p.Rest.ModelContextWindow, or nil.
func (p *Payload) ModelContextWindow() RawJSON {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.ModelContextWindow
}

// SystemPrompt returns p.Rest.SystemPrompt, or "".
func (p *Payload) SystemPrompt() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.SystemPrompt
}

// AgentState returns p.Rest.AgentState, or "".
func (p *Payload) AgentState() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.AgentState
}

// Workspace returns p.Rest.Workspace, or "".
func (p *Payload) Workspace() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Workspace
}

// Source returns p.Rest.Source, or "".
func (p *Payload) Source() string {
	if p.Rest == nil {
		return ""
	}
	return p.Rest.Source
}

// Extra returns p.Rest.Extra, or nil.
func (p *Payload) Extra() []RawField {
	if p.Rest == nil {
		return nil
	}
	return p.Rest.Extra
}
