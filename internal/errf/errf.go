// Package errf formats error messages with a small subset of fmt's verbs
// (%s %q %d %v %w %%) without reflection. The engine's packages use it
// instead of fmt because fmt and the reflect package it needs add about
// 145 KB (brotli) to the WebAssembly build.
//
// Supported argument types: string, error, int, int64, uint64, bool,
// []byte, and anything with a String() string method. Others print as
// "%!v(unsupported)". Errorf wraps every %w argument: errors.Is and
// errors.As see them as with fmt.Errorf.
package errf

import (
	"strconv"
)

// Sprintf formats like fmt.Sprintf for the supported verbs and types.
func Sprintf(format string, args ...any) string {
	s, _ := format1(format, args)
	return s
}

// Errorf formats like fmt.Errorf for the supported verbs and types.
func Errorf(format string, args ...any) error {
	s, wrapped := format1(format, args)
	return &wrapError{msg: s, errs: wrapped}
}

type wrapError struct {
	msg  string
	errs []error
}

func (e *wrapError) Error() string { return e.msg }

// Unwrap returns the %w operands.
func (e *wrapError) Unwrap() []error { return e.errs }

func format1(format string, args []any) (string, []error) {
	b := make([]byte, 0, len(format)+16*len(args))
	var wrapped []error
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b = append(b, c)
			continue
		}
		i++
		verb := format[i]
		if verb == '%' {
			b = append(b, '%')
			continue
		}
		if n >= len(args) {
			b = append(b, "%!"...)
			b = append(b, verb)
			b = append(b, "(MISSING)"...)
			continue
		}
		a := args[n]
		n++
		switch verb {
		case 'q':
			b = AppendQuote(b, text(a))
		case 'w':
			if err, ok := a.(error); ok && err != nil {
				wrapped = append(wrapped, err)
			}
			b = append(b, text(a)...)
		default: // s, d, v
			b = append(b, text(a)...)
		}
	}
	return string(b), wrapped
}

func text(a any) string {
	switch v := a.(type) {
	case nil:
		return "<nil>"
	case string:
		return v
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case []byte:
		return string(v)
	}
	return "%!v(unsupported)"
}
