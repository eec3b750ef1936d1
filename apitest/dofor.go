package apitest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// DoFor sends a raw body like Do, but reports contract violations and
// transport errors to t instead of e.T. A fuzz target needs it: the server is
// started with the *testing.F, which must not be used inside f.Fuzz, while
// each input runs under its own *testing.T.
func (e *Env) DoFor(t testing.TB, method, path string, body []byte, cred Cred) *Response {
	t.Helper()
	if !strings.HasPrefix(path, "/") {
		path = "/api/v1/" + path
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != nil {
		cred(req)
	}
	hc := &http.Client{Transport: checkingTransport{contract: e.checker, next: http.DefaultTransport,
		fail: func(err error) { t.Errorf("contract violation: %v", err) }}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}
