package fields

import (
	"reflect"
	"testing"
)

func TestSetNonZero(t *testing.T) {
	var s struct {
		S string
		I int
		J int64
		B bool
		P *int
		L []string
		M map[string]int
		F func()
	}
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		ok := SetNonZero(f)
		if name := v.Type().Field(i).Name; name == "F" {
			if ok {
				t.Error("a func field was set")
			}
		} else if !ok || f.IsZero() {
			t.Errorf("field %s: set %v, zero %v", name, ok, f.IsZero())
		}
	}
}
