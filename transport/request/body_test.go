package request

import "testing"

func TestBearer(t *testing.T) {
	for _, c := range []struct {
		v, token string
		ok       bool
	}{
		{"Bearer s3cret", "s3cret", true}, {"bearer s3cret", "s3cret", true}, {"BEARER  s3cret", "s3cret", true},
		{"Bearer", "", false}, {"Bearer ", "", false}, {"Bearers3cret", "", false}, {"Basic s3cret", "", false}, {"", "", false},
	} {
		if got, ok := Bearer(c.v); got != c.token || ok != c.ok {
			t.Errorf("Bearer(%q) = %q, %v; want %q, %v", c.v, got, ok, c.token, c.ok)
		}
	}
	if !Authorized("bearer s3cret", "s3cret") || Authorized("Bearer S3CRET", "s3cret") || Authorized("", "") {
		t.Error("Authorized")
	}
}

func TestDecode(t *testing.T) {
	type body struct {
		ID   string `json:"id"`
		Mode string `json:"approvalMode"`
	}
	for _, c := range []struct{ in, want string }{
		{`{"id":"a","approvalMode":"ask"}`, ""},
		{`{"id":null}`, ""},
		{``, "request body: want a JSON object, got nothing"},
		{`[]`, "request body: want a JSON object, got array"},
		{`{"bogus":1}`, `request body: unknown field "bogus"`},
		{`{"id":5}`, "id: want a string, got number"},
		{`{"id":"a","id":"b"}`, "id: given twice"},
		{`{"id":"a"} x`, "request body: data after the JSON object"},
		{"{\"id\":\"a\"} \v", "request body: data after the JSON object"}, // not JSON's whitespace
		{"\u00a0", "request body: invalid JSON at byte 1"},
		{"\ufeff{\"id\":\"a\"}", ""}, // a UTF-8 byte order mark is ignored
		{"\ufeff", "request body: want a JSON object, got nothing"},
		{"\xff\xfe{\x00}\x00", "request body: UTF-16 text"},
	} {
		var b body
		got := Decode([]byte(c.in), &b)
		if c.want == "" && got != "" || c.want != "" && (len(got) < len(c.want) || got[:len(c.want)] != c.want) {
			t.Errorf("Decode(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestContentType(t *testing.T) {
	for ct, ok := range map[string]bool{
		"": true, "application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"APPLICATION/JSON;charset=UTF-8": true, " application/json ": true,
		"text/plain": false, "application/json-seq": false, "application/jsonx": false,
	} {
		if got := ContentType(ct) == ""; got != ok {
			t.Errorf("ContentType(%q) accepted = %v, want %v", ct, got, ok)
		}
	}
}

func TestNoRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/api/nothing":                        "no route /api/nothing",
		"/":                                   "no route /",
		"/api/sessions/s1/":                   "no route /api/sessions/s1/ (the API's paths end without a slash)",
		"/\n":                                 `no route "/\n"`,
		"/a\x7fb\u0085/":                      `no route "/a\x7fb\u0085/" (the API's paths end without a slash)`,
		"/\xff":                               `no route "/\xff"`,
		"/é":                                  "no route /é",
		"/api/sessions/s/../../../_index/add": "no route /api/sessions/s/../../../_index/add (the API's paths have no . or .. segment)",
		"/api/sessions/./s":                   "no route /api/sessions/./s (the API's paths have no . or .. segment)",
		"/api/..":                             "no route /api/.. (the API's paths have no . or .. segment)",
		"/api/sessions/s..":                   "no route /api/sessions/s..",
	} {
		if got := NoRoute(path); got != want {
			t.Errorf("NoRoute(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestBlank(t *testing.T) {
	for in, want := range map[string]bool{"": true, " \n": true, "\ufeff": true, "\ufeff \r\n": true, "{}": false, "\ufeff{}": false, "\ufeff\ufeff": false, "\xff\xfe": false} {
		if got := Blank([]byte(in)); got != want {
			t.Errorf("Blank(%q) = %v, want %v", in, got, want)
		}
	}
}
