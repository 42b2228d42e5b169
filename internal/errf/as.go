package errf

// As is errors.As for a target type T: the first error in err's tree (err,
// then what Unwrap returns, depth first) that is a T, or whose As method
// sets a T, is returned. errors.As finds the same one, but it links the
// reflection it needs for any target: about 5 kB of the WebAssembly
// build (brotli).
func As[T error](err error) (T, bool) {
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var t T
			if x.As(&t) {
				return t, true
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if t, ok := As[T](e); ok {
					return t, true
				}
			}
			return *new(T), false
		default:
			return *new(T), false
		}
	}
	return *new(T), false
}
