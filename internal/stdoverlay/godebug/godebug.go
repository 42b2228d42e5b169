// Package godebug stands in for the standard library's internal/godebug in
// the browser build, floe.wasm (scripts/build.sh passes it to go build as
// an -overlay of that package's one file). It has the same API, and every
// Setting has the value "", its default in a module whose go line is 1.23
// or later and that sets no godebug (this one: api_test.go checks).
//
// The standard package registers each setting with the runtime and keeps
// a counter of non-default behaviour for runtime/metrics; linked in (the
// time package imports it), its init makes the runtime's whole metrics
// table reachable, with internal/bisect: 178 kB of floe.wasm raw, 28.6
// kB after brotli. A page has no GODEBUG to read: the module's environment
// is the shim's, and no Floe API sets it. The only setting the build
// reaches, time's asynctimerchan, then has its default behaviour, which
// is also what an unset GODEBUG gives. The runtime reads its own GODEBUG
// variables (gctrace and the like) itself and still does.
//
// api_test.go checks this API against the standard package of the Go
// that runs it, and go.mod's go line.
package godebug

// A Setting is one GODEBUG setting, by name.
type Setting struct {
	name string
}

// New returns the setting name. A leading '#' marks an undocumented
// setting and is not part of its name.
func New(name string) *Setting { return &Setting{name: name} }

// Name returns the setting's name, without a leading '#'.
func (s *Setting) Name() string {
	if s.Undocumented() {
		return s.name[1:]
	}
	return s.name
}

// Undocumented reports whether the name given to New began with '#'.
func (s *Setting) Undocumented() bool { return len(s.name) > 0 && s.name[0] == '#' }

// String returns name=value.
func (s *Setting) String() string { return s.Name() + "=" + s.Value() }

// IncNonDefault counts nothing: there are no metrics to report it.
func (s *Setting) IncNonDefault() {}

// Value returns "", every setting's default.
func (s *Setting) Value() string { return "" }
