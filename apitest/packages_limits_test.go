package apitest_test

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
)

// npmDoc is a publish document for name@version with tarball, as npm
// sends it.
func npmDoc(name, version string, tarball []byte) map[string]any {
	sum := sha512.Sum512(tarball)
	return map[string]any{
		"name":      name,
		"dist-tags": map[string]string{"latest": version},
		"versions": map[string]any{version: map[string]any{
			"name": name, "version": version,
			"dist": map[string]string{"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])},
		}},
		"_attachments": map[string]any{name + "-" + version + ".tgz": map[string]any{
			"content_type": "application/octet-stream", "data": base64.StdEncoding.EncodeToString(tarball), "length": len(tarball)}},
	}
}

// TestNpmPublishBounds: the publish document is walked as it arrives,
// its tarball streamed to disk; what it may hold is bounded.
func TestNpmPublishBounds(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.PackageTypeLimits = map[string]int64{"npm": 64 << 10, "generic": 32 << 10}
		c.MaxBodyBytes = 256 << 10
	})
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	publish := func(name string, doc any) *apitest.Response {
		return e.Do("PUT", "/api/packages/alice/npm/"+strings.ReplaceAll(name, "/", "%2F"), doc, cred)
	}

	// An ordinary document, keys in any order, with unknown fields.
	doc := npmDoc("ok", "1.0.0", []byte("tarball bytes"))
	doc["readme"] = map[string]any{"nested": []any{1, "two", nil, true, 3.5e2, map[string]any{"}": "]"}}}
	doc["access"] = nil
	publish("ok", doc).Expect(t, http.StatusCreated)
	got := e.Do("GET", "/api/packages/alice/npm/ok/-/ok-1.0.0.tgz", nil, cred).Expect(t, http.StatusOK)
	if string(got.Body) != "tarball bytes" {
		t.Fatalf("tarball %q", got.Body)
	}

	bad := map[string]func() any{
		"a null attachment": func() any {
			d := npmDoc("n", "1.0.0", []byte("x"))
			d["_attachments"] = map[string]any{"n-1.0.0.tgz": nil}
			return d
		},
		"an attachment without data": func() any {
			d := npmDoc("n", "1.0.0", []byte("x"))
			d["_attachments"] = map[string]any{"n-1.0.0.tgz": map[string]any{"length": 1}}
			return d
		},
		"an empty tarball": func() any { return npmDoc("n", "1.0.0", nil) },
		"data not base64": func() any {
			return strings.Replace(docJSON(t, npmDoc("n", "1.0.0", []byte("xyz"))), `"eHl6"`, `"!!!!"`, 1)
		},
		"two attachments": func() any {
			d := npmDoc("n", "1.0.0", []byte("x"))
			d["_attachments"].(map[string]any)["b.tgz"] = map[string]any{"data": "eA=="}
			return d
		},
		"a 1 MB version":     func() any { return npmDoc("n", "1.0.0-"+strings.Repeat("a", 1<<20), []byte("x")) },
		"a 257-byte version": func() any { return npmDoc("n", "1.0.0-"+strings.Repeat("a", 251), []byte("x")) },
		"truncated JSON":     func() any { s := docJSON(t, npmDoc("n", "1.0.0", []byte("x"))); return s[:len(s)-3] },
	}
	for what, mk := range bad {
		r := publish("n", mk())
		if r.Status != http.StatusBadRequest && !(what == "a 1 MB version" && r.Status == http.StatusRequestEntityTooLarge) {
			t.Errorf("publish with %s: %d, want 400: %s", what, r.Status, r.Body)
		}
	}
	e.Do("GET", "/api/packages/alice/npm/n", nil, cred).Expect(t, http.StatusNotFound)
	long := strings.Repeat("p", 215)
	publish(long, npmDoc(long, "1.0.0", []byte("x"))).Expect(t, http.StatusBadRequest)
	name214 := strings.Repeat("p", 214)
	publish(name214, npmDoc(name214, "1.0.0-"+strings.Repeat("a", 250), []byte("x"))).Expect(t, http.StatusCreated)

	// The npm limit: a tarball past it is refused (413), from its
	// declared length before anything is read, or as it is decoded.
	publish("big", npmDoc("big", "1.0.0", make([]byte, 65<<10))).Expect(t, http.StatusRequestEntityTooLarge)
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, `{"name":"big","_attachments":{"big.tgz":{"data":"`)
		chunk := strings.Repeat("A", 4096)
		for i := 0; i < 100; i++ {
			if _, err := io.WriteString(pw, chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("PUT", e.URL+"api/packages/alice/npm/big", pr)
	req.SetBasicAuth(alice.User.Name, alice.Password)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	pr.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a streamed tarball past the limit: %d, want 413", res.StatusCode)
	}
	// Metadata past the JSON body limit is refused too.
	d := npmDoc("meta", "1.0.0", []byte("x"))
	d["readme"] = strings.Repeat("r", 300<<10)
	publish("meta", d).Expect(t, http.StatusRequestEntityTooLarge)

	// Generic packages: names and versions capped with 400, the per-type
	// size limit with 413.
	pkUpload(t, e, cred, "alice", strings.Repeat("g", 5000), "1.0", "f.bin", []byte("x")).Expect(t, http.StatusBadRequest)
	pkUpload(t, e, cred, "alice", "g", strings.Repeat("1", 257), "f.bin", []byte("x")).Expect(t, http.StatusBadRequest)
	pkUpload(t, e, cred, "alice", "g", "1.0", "f.bin", make([]byte, 33<<10)).Expect(t, http.StatusRequestEntityTooLarge)
	pkUpload(t, e, cred, "alice", strings.Repeat("g", 214), strings.Repeat("1", 256), "f.bin", make([]byte, 32<<10)).Expect(t, http.StatusCreated)
}

func docJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
