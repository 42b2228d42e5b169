package api_test

import (
	"net/http"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// The bearer scheme is case-insensitive (RFC 7235 §2.1); the token is not.
func TestBearerSchemeAnyCase(t *testing.T) {
	e := newEnv(t, server.Config{Token: "s3cret"})
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"Bearer s3cret", 200}, {"bearer s3cret", 200}, {"BEARER s3cret", 200}, {"bEaReR  s3cret", 200},
		{"bearer S3CRET", 401}, {"bearer", 401}, {"bearer ", 401}, {"bearers3cret", 401}, {"Basic s3cret", 401}, {"s3cret", 401},
	} {
		req, _ := http.NewRequest("GET", e.url+"/api/sessions", nil)
		req.Header.Set("Authorization", tc.auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.status)
		}
	}
}
