package omni

import (
	"encoding/json"
	"strings"
	"testing"
)

func walk(data string) (string, error) {
	var b strings.Builder
	err := WalkJSON([]byte(data), func(path []byte, kind byte, val []byte) error {
		b.WriteString(string(path) + " " + string(kind) + " " + string(val) + "\n")
		return nil
	})
	return b.String(), err
}

func TestWalkJSON(t *testing.T) {
	got, err := walk(` {"a":1,"b":{"c":"x\u00e9","d":[true,null,{"e":-2.5}]},"":[]} `)
	if err != nil {
		t.Fatal(err)
	}
	want := `a 0 1
b.c " "x\u00e9"
b.d[] t true
b.d[] n null
b.d[].e 0 -2.5
b.d[] } {"e":-2.5}
b.d ] [true,null,{"e":-2.5}]
b } {"c":"x\u00e9","d":[true,null,{"e":-2.5}]}
 ] []
 } {"a":1,"b":{"c":"x\u00e9","d":[true,null,{"e":-2.5}]},"":[]}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1,]`, `{"a":1} x`, `"\x"`, `{"a" 1}`, strings.Repeat("[", 600) + strings.Repeat("]", 600)} {
		if _, err := walk(bad); err == nil {
			t.Errorf("WalkJSON(%q) accepted it", bad)
		}
	}
}

func TestJSONValues(t *testing.T) {
	if s := JSONString([]byte(`"a\nb\ud83c\udf38"`)); s != "a\nb🌸" {
		t.Errorf("JSONString = %q", s)
	}
	if s := JSONString([]byte(`12`)); s != "" {
		t.Errorf("JSONString(number) = %q", s)
	}
	if n := JSONInt([]byte(`123`)); n != 123 {
		t.Errorf("JSONInt = %d", n)
	}
	if n := JSONInt([]byte(`"1"`)); n != 0 {
		t.Errorf("JSONInt(string) = %d", n)
	}
	if !IsJSONObject([]byte(` {"a":[1]} `)) || IsJSONObject([]byte(`[1]`)) || IsJSONObject([]byte(`{"a":1`)) {
		t.Error("IsJSONObject")
	}
	if !ValidJSON([]byte(`[1,"x"]`)) || ValidJSON([]byte(`[1,`)) {
		t.Error("ValidJSON")
	}
	if got := string(AppendJSONString(nil, "a\"\\\n\x01\xff")); got != `"a\"\\\n\u0001\ufffd"` {
		t.Errorf("AppendJSONString = %s", got)
	}
}

// FuzzWalkJSON: the walk accepts exactly what encoding/json accepts (up to
// the nesting limit), and every container's raw bytes are valid JSON.
func FuzzWalkJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}]}`, `[true,false,null]`, `"x"`, `-0.5e3`, `{"a":`, `{"\u00e9":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := WalkJSON(data, func(path []byte, kind byte, val []byte) error {
			if (kind == '}' || kind == ']') && !json.Valid(val) {
				t.Errorf("container %q is not valid JSON", val)
			}
			return nil
		})
		if ok := json.Valid(data); ok != (err == nil) && !strings.Contains(errString(err), "nesting") {
			t.Errorf("WalkJSON error %v, encoding/json valid %v, for %q", err, ok, data)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
