package errf

import (
	"errors"
	"fmt"
	"testing"
)

func TestAgreesWithFmt(t *testing.T) {
	base := errors.New("base")
	cases := []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"a %s b %q c %d", []any{"x", "y\n\"", 42}},
		{"%w: %s", []any{base, "tail"}},
		{"100%% %v %v", []any{int64(-7), true}},
		{"%s", []any{base}},
	}
	for _, c := range cases {
		got, want := Sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...)
		if c.format == "%w: %s" {
			want = fmt.Errorf(c.format, c.args...).Error()
		}
		if got != want {
			t.Errorf("%q: got %q want %q", c.format, got, want)
		}
	}
	if err := Errorf("step: %w", base); !errors.Is(err, base) {
		t.Error("Errorf does not wrap %w")
	}
	if got := Sprintf("%s %d", "only"); got != "only %!d(MISSING)" {
		t.Errorf("missing arg: %q", got)
	}
}
