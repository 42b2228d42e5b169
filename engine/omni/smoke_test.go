package omni

import "testing"

func TestSmokeRoundTrip(t *testing.T) {
	in := `{"timestamp":"2026-11-30T04:09:45.258Z","type":"model_msg","payload":{"type":"text","role":"user","text":"a\u003c\"\n\u0001 é","stop_reason":"completed","fidelity":{ "x" : [1, 2] },"zz":{"k":1}},"origin":["c1"]}`
	m, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := m.MarshalJSON()
	want := `{"timestamp":"2026-11-30T04:09:45.258Z","type":"model_msg","payload":{"type":"text","role":"user","text":"a<\"\n\u0001 é","stop_reason":"completed","fidelity":{ "x" : [1, 2] },"zz":{"k":1}},"origin":["c1"]}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}
