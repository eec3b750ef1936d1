package impl

import "testing"

func TestIsCleanPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/api/v1/repos/o/r":                   true,
		"/api/v1/repos/o/r/":                  true,
		"/api/v1/repos/o/r/contents/a%2F..":   true,
		"/api/v1/repos/o/r/branches/%2E%2E":   true,
		"/api/v1/repos/o/r/branches/a..b":     true,
		"/api/v1/repos/o/r/branches/..":       false,
		"/api/v1/repos/o/r/branches/.":        false,
		"/api/v1/repos/o/r/contents/a/../b":   false,
		"/api/v1/repos//r":                    false,
		"/api/v1/repos/o/r/contents/./README": false,
	} {
		if got := isCleanPath(p); got != want {
			t.Errorf("isCleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}
