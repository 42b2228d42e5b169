package api

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzApprovalRoute reads the approval route of any request path: it never
// panics; a path it takes for /api/sessions/{id}/approvals/{tool_call_id}
// is that, in its escaped form, and the session id and tool call id it
// answers are those segments unescaped; and any ids sent escaped
// (url.PathEscape, as connect() sends them) come back as they were sent.
func FuzzApprovalRoute(f *testing.F) {
	for _, s := range [][3]string{
		{"/api/sessions/s1/approvals/call_1", "s1", "call_1"},
		{"/api/sessions/s1/approvals/fs%2Fread:0%20%3F%23%25", "s1", "fs/read:0 ?#%"},
		{"/api/sessions/s1/approvals/", "s1", "a/b/"},
		{"/api/sessions/x%2Fapprovals/approvals/y", "x/approvals", "y"},
		{"/api/sessions/s1/approvals/a/b", "", "%"},
		{"/api/sessions/s1/%61pprovals/a", "s%2F1", ".."},
		{"/api/sessions//approvals/a", "", "."},
		{"/api/sessions/s1/approvals/%zz", "s1", "\x00\xff"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, path, session, call string) {
		check := func(path string) (id, call string, ok bool) {
			u, err := url.ParseRequestURI(path)
			if err != nil {
				return "", "", false
			}
			if !strings.HasPrefix(u.Path, "/api/") { // route's own test

				return "", "", false
			}
			id, call = approvalRoute(u.EscapedPath())
			if call == "" {
				return "", "", false
			}
			esc := strings.Split(u.EscapedPath(), "/")
			var seg []string
			for _, e := range esc {
				s, err := url.PathUnescape(e)
				if err != nil {
					t.Fatalf("%q (escaped %q): taken for an approval of %q in session %q: %v", path, u.EscapedPath(), call, id, err)
				}
				seg = append(seg, s)
			}
			if len(seg) != 6 || seg[0] != "" || seg[1] != "api" || seg[2] != "sessions" || seg[4] != "approvals" || seg[3] != id || seg[5] != call {
				t.Fatalf("%q (escaped %q): taken for an approval of %q in session %q", path, u.EscapedPath(), call, id)
			}
			return id, call, true
		}
		check(path)
		if session == "" || call == "" {
			return
		}
		sent := "/api/sessions/" + url.PathEscape(session) + "/approvals/" + url.PathEscape(call)
		if id, got, ok := check(sent); !ok || id != session || got != call {
			t.Fatalf("%q (session %q, call %q): %q, %q, %v", sent, session, call, id, got, ok)
		}
	})
}

// approvalRoute is what route takes for an approval: the session id and
// the tool call id of /api/sessions/{id}/approvals/{tool_call_id}, read
// from the escaped path's segments, or "".
func approvalRoute(escaped string) (id, call string) {
	parts, ok := segments(escaped)
	if !ok || len(parts) != 4 || parts[0] != "sessions" || parts[2] != "approvals" || parts[3] == "" {
		return "", ""
	}
	return parts[1], parts[3]
}
