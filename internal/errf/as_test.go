package errf

import (
	"errors"
	"io"
	"testing"
)

type codeErr struct{ code int }

func (e *codeErr) Error() string { return "code" }

type asErr struct{}

func (asErr) Error() string { return "as" }

func (asErr) As(target any) bool {
	if p, ok := target.(**codeErr); ok {
		*p = &codeErr{code: 7}
		return true
	}
	return false
}

type multi []error

func (m multi) Error() string   { return "multi" }
func (m multi) Unwrap() []error { return m }

// TestAsMatchesErrorsAs: As finds what errors.As finds, through Unwrap
// chains, Unwrap() []error trees and As methods, first match first.
func TestAsMatchesErrorsAs(t *testing.T) {
	first, second := &codeErr{1}, &codeErr{2}
	trees := map[string]error{
		"nil":       nil,
		"plain":     io.EOF,
		"itself":    first,
		"wrapped":   Errorf("outer: %w", Errorf("mid: %w", first)),
		"joined":    errors.Join(io.EOF, first, second),
		"multi":     multi{io.EOF, multi{second}, first},
		"as method": Errorf("x: %w", asErr{}),
		"absent":    Errorf("x: %w", errors.Join(io.EOF, io.ErrUnexpectedEOF)),
	}
	for name, err := range trees {
		var want *codeErr
		wantOK := errors.As(err, &want)
		got, ok := As[*codeErr](err)
		if ok != wantOK || got != want && (got == nil || want == nil || *got != *want) {
			t.Errorf("%s: As = %v, %v; errors.As = %v, %v", name, got, ok, want, wantOK)
		}
	}
}
