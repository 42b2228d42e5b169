package omni

import (
	"errors"
	"strconv"
)

// MaxMessageBytes caps the size of one encoded message the decoder accepts.
const MaxMessageBytes = 64 << 20

// DecodeError reports why a message could not be decoded. Field is the JSON
// path of the offending value ("payload.text", "origin[1]", and in
// [DecodeArray] "[3].payload.text"), or "" for the whole input.
type DecodeError struct {
	Field string
	Msg   string

	err error // wrapped sentinel, if any (ErrTooLarge)
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return "omni: " + e.Msg
	}
	return "omni: " + e.Field + ": " + e.Msg
}

// Unwrap returns the sentinel the error stands for, if any.
func (e *DecodeError) Unwrap() error { return e.err }

// ErrTooLarge is returned for input over MaxMessageBytes.
var ErrTooLarge = errors.New("omni: message exceeds size limit")

// Decode parses one envelope. It checks JSON syntax and types (a string
// field holding a number is an error naming the field); it does not check
// the protocol's rules beyond that (see [Validate]). Unknown payload keys
// are kept in Extra; unknown envelope keys are ignored; duplicate keys are
// an error.
func Decode(data []byte) (Message, error) {
	var m Message
	err := m.UnmarshalJSON(data)
	return m, err
}

// UnmarshalJSON implements json.Unmarshaler with the rules of Decode.
func (m *Message) UnmarshalJSON(data []byte) error {
	if len(data) > MaxMessageBytes {
		return ErrTooLarge
	}
	*m = Message{}
	s := scanner{data: data}
	if err := s.message(m); err != nil {
		return err
	}
	return s.end()
}

// DecodeArray parses a JSON array of envelopes in one pass. Errors name the
// element: "[3].payload.text: want string, got number". An element over
// MaxMessageBytes is an error that wraps [ErrTooLarge]. An empty array
// gives an empty, non-nil slice.
func DecodeArray(data []byte) ([]Message, error) {
	s := scanner{data: data}
	if s.peek() != '[' {
		return nil, s.typeErr("", "array")
	}
	out := make([]Message, 0, min(countElements(data), len(data)/len(minEnvelope)))
	more, err := s.open("", ']')
	for more && err == nil {
		s.ws()
		start := s.i
		out = append(out, Message{})
		if err = s.message(&out[len(out)-1]); err != nil {
			return nil, indexErr(err, len(out)-1)
		}
		if s.i-start > MaxMessageBytes {
			return nil, &DecodeError{Field: "[" + strconv.Itoa(len(out)-1) + "]", Msg: "message exceeds size limit", err: ErrTooLarge}
		}
		if more, err = s.next("", ']'); err != nil {
			return nil, indexErr(err, len(out)-1)
		}
	}
	if err != nil {
		return nil, err
	}
	return out, s.end()
}

// minEnvelope is the shortest envelope that decodes.
const minEnvelope = `{"type":"","payload":{}}`

// countElements returns the number of elements of the JSON array in data
// up to the first one that is not an object or has a syntax error (the
// decoding pass reports it). A Message is large: sizing the result up front
// saves copying it around, and counting only objects keeps the allocation
// proportional to what could really be decoded.
func countElements(data []byte) int {
	s := scanner{data: data}
	s.peek()
	n := 0
	more, err := s.open("", ']')
	for more && err == nil && s.peek() == '{' {
		if err = s.skip(""); err == nil {
			n++
			more, err = s.next("", ']')
		}
	}
	return n
}

// indexErr prefixes the path of a decode error with the array index i.
func indexErr(err error, i int) error {
	de, ok := err.(*DecodeError)
	if !ok {
		return err
	}
	idx := "[" + strconv.Itoa(i) + "]"
	if de.Field == "" {
		de.Field = idx
	} else {
		de.Field = idx + "." + de.Field
	}
	return de
}

// end checks that nothing but white space follows the value.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.data) {
		return &DecodeError{Msg: "invalid JSON: trailing data at offset " + strconv.Itoa(s.i)}
	}
	return nil
}

// Envelope keys, for duplicate detection.
const (
	eTimestamp = 1 << iota
	eType
	ePayload
	eOrigin
)

// message decodes one envelope object at s.i into m, which must be zero.
func (s *scanner) message(m *Message) error {
	switch c := s.peek(); {
	case c == '{':
	case kindOf(c) != "":
		return &DecodeError{Msg: "message is not a JSON object (got " + kindOf(c) + ")"}
	default:
		return s.syntaxErr("")
	}
	var seen int
	var unknown []string
	more, err := s.open("", '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(""); err != nil {
			return err
		}
		var bit int
		switch string(k) {
		case "timestamp":
			bit = eTimestamp
		case "type":
			bit = eType
		case "payload":
			bit = ePayload
		case "origin":
			bit = eOrigin
		default:
			name := string(k)
			for _, u := range unknown {
				if u == name {
					return &DecodeError{Field: name, Msg: "duplicate key"}
				}
			}
			unknown = append(unknown, name)
			if err = s.skip(name); err != nil {
				return err
			}
		}
		if bit != 0 {
			if seen&bit != 0 {
				return &DecodeError{Field: string(k), Msg: "duplicate key"}
			}
			seen |= bit
			if err = s.envelopeValue(m, bit); err != nil {
				return err
			}
		}
		more, err = s.next("", '}')
	}
	if err != nil {
		return err
	}
	if seen&ePayload == 0 {
		return &DecodeError{Field: "payload", Msg: "missing"}
	}
	if seen&eType == 0 {
		return &DecodeError{Field: "type", Msg: "missing"}
	}
	return nil
}

func (s *scanner) envelopeValue(m *Message, bit int) (err error) {
	switch bit {
	case eTimestamp:
		m.Timestamp, err = s.str("timestamp")
	case eType:
		m.Type, err = s.enum("type")
	case ePayload:
		err = s.payload(&m.Payload, "payload")
	case eOrigin:
		if !s.null() {
			m.Origin, err = s.strs("origin")
		}
	}
	return err
}

// UnmarshalJSON decodes a payload object with the rules of [Decode].
func (p *Payload) UnmarshalJSON(data []byte) error {
	if len(data) > MaxMessageBytes {
		return ErrTooLarge
	}
	s := scanner{data: data}
	if err := s.payload(p, "payload"); err != nil {
		return err
	}
	return s.end()
}

// payload decodes a payload object at s.i into p.
func (s *scanner) payload(p *Payload, path string) error {
	*p = Payload{}
	s.extraSeen, s.pair = nil, nil
	if s.peek() != '{' {
		return s.typeErr(path, "object")
	}
	p.has = kDecoded
	more, err := s.open(path, '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(path); err != nil {
			return err
		}
		if bit := lookupKey(k); bit != 0 {
			if p.has&bit != 0 {
				return &DecodeError{Field: payloadPath(bit), Msg: "duplicate key"}
			}
			p.has |= bit
			err = s.payloadValue(p, bit)
		} else {
			err = s.extra(p, string(k))
		}
		if err == nil {
			more, err = s.next(path, '}')
		}
	}
	return err
}

// extra keeps the value of the unknown key name raw in p.Extra.
func (s *scanner) extra(p *Payload, name string) error {
	path := "payload." + name
	if len(p.Extra()) < 16 {
		for _, f := range p.Extra() {
			if f.Key == name {
				return &DecodeError{Field: path, Msg: "duplicate key"}
			}
		}
	} else if s.extraDup(p, name) {
		return &DecodeError{Field: path, Msg: "duplicate key"}
	}
	v, err := s.raw(path)
	if err != nil {
		return err
	}
	p.rest().Extra = append(p.Extra(), RawField{Key: name, Value: v})
	return nil
}

// extraDup reports whether name is already in p.Extra, for payloads with
// many unknown keys (linear search would make hostile input quadratic).
func (s *scanner) extraDup(p *Payload, name string) bool {
	if s.extraSeen == nil {
		s.extraSeen = make(map[string]struct{}, 2*len(p.Extra()))
		for _, f := range p.Extra() {
			s.extraSeen[f.Key] = struct{}{}
		}
	}
	if _, dup := s.extraSeen[name]; dup {
		return true
	}
	s.extraSeen[name] = struct{}{}
	return false
}
