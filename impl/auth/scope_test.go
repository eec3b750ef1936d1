package auth

import "testing"

func TestScopeCategory(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/version":                 "",
		"/api/v1/settings/api":            "",
		"/api/v1/admin/users":             "admin",
		"/api/v1/orgs/o/repos":            "organization",
		"/api/v1/user/orgs":               "organization",
		"/api/v1/user/repos":              "repository",
		"/api/v1/user/emails":             "user",
		"/api/v1/users/u/repos":           "repository",
		"/api/v1/users/u/tokens":          "user",
		"/api/v1/repos/o/r":               "repository",
		"/api/v1/repos/o/r/branches":      "repository",
		"/api/v1/repos/o/r/issues/1":      "issue",
		"/api/v1/repos/o/r/labels":        "issue",
		"/api/v1/repos/o/r/milestones/2":  "issue",
		"/api/v1/repos/o/r/projects":      "issue",
		"/api/v1/repos/issues/search":     "issue",
		"/api/v1/repos/search":            "repository",
		"/api/v1/repos/o/r/times":         "repository",
		"/api/v1/repos/o/r/notifications": "notification",
		"/api/v1/notifications/new":       "notification",
	} {
		if got := ScopeCategory(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if !(Scopes{"write:issue": true}).Allows("issue", "read") {
		t.Error("write must imply read")
	}
	if (Scopes{"read:issue": true}).Allows("issue", "write") {
		t.Error("read must not allow write")
	}
	if !(Scopes{"all": true}).Allows("admin", "write") {
		t.Error("all must allow everything")
	}
}
