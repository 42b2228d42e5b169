package engine

import "github.com/floehq/floe/engine/omni"

// SteerID names the entry one [Session.SteerWithID] call queued, for
// [Session.UnsteerID]. Ids are unique within a session (never reused, also
// across runs) and never 0.
type SteerID uint64

// SteerWithID is [Session.Steer] for callers that cannot keep the input
// slice (JavaScript, other processes): it validates input as [Session.Start]
// does (an error wrapping [ErrInvalidInput]), copies it, queues it for the
// run in flight (E-11.1) and returns an id that [Session.UnsteerID]
// withdraws it by. It returns 0 when no run is in flight. Input without
// steering content queues nothing and still gets an id (UnsteerID then
// reports false: there is nothing to withdraw).
func (s *Session) SteerWithID(input []omni.Message) (SteerID, error) {
	if err := validateInput(input); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.steerOpen {
		return 0, nil
	}
	s.steerSeq++
	id := s.steerSeq
	if hasSteeringContent(input) {
		s.steering = append(s.steering, steerEntry{input: append([]omni.Message(nil), input...), id: id})
	}
	return id, nil
}

// UnsteerID withdraws the entry SteerWithID queued under id if it has not
// been delivered yet (E-11.2), and reports whether it had not: false when it
// was delivered, dropped at the end of its run (E-3.7), withdrawn before, or
// never queued.
func (s *Session) UnsteerID(id SteerID) bool {
	if id == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.steering {
		if e.id == id {
			s.steering = append(s.steering[:i:i], s.steering[i+1:]...)
			return true
		}
	}
	return false
}
