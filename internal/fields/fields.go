// Package fields helps tests that check a function against every field of
// a struct: when a field is added, the test sets it too.
package fields

import "reflect"

// SetNonZero sets v, a settable field, to a value that is not zero; false
// for a kind it does not cover.
func SetNonZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	default:
		return false
	}
	return true
}
