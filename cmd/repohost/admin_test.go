package main

import (
	"strings"
	"testing"
)

// TestAdminCommands runs every `repohost admin` command in process: each
// does its work, and bad input is an error (a non-zero exit in main).
func TestAdminCommands(t *testing.T) {
	data := t.TempDir()
	ok := func(args ...string) {
		t.Helper()
		if err := run(append(args, "--data", data), quietLog()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	fails := func(want string, args ...string) {
		t.Helper()
		err := run(append(args, "--data", data), quietLog())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want an error with %q", args, err, want)
		}
	}
	ok("admin", "user", "create", "--username", "root", "--password", "pw-123456", "--email", "root@example.com", "--admin")
	ok("admin", "user", "create", "--username", "bob", "--password", "pw-123456", "--email", "bob@example.com")

	ok("admin", "user", "list")
	ok("admin", "user", "list", "--admin")
	fails("unexpected argument", "admin", "user", "list", "extra")

	ok("admin", "user", "change-password", "--username", "bob", "--password", "new-pw-123456", "--must-change-password=false")
	fails("--password required", "admin", "user", "change-password", "--username", "bob")
	fails(`no user "nobody"`, "admin", "user", "change-password", "--username", "nobody", "--password", "x-123456")

	ok("admin", "user", "generate-access-token", "--username", "bob", "--token-name", "ci", "--scopes", "read:repository", "--raw")
	fails("has been used already", "admin", "user", "generate-access-token", "--username", "bob", "--token-name", "ci", "--scopes", "read:repository")
	fails("unknown scope", "admin", "user", "generate-access-token", "--username", "bob", "--token-name", "ci2", "--scopes", "everything")
	fails("--username required", "admin", "user", "generate-access-token")

	ok("admin", "repo-sync-releases")
	fails(`no repository "root/none"`, "admin", "repo-sync-releases", "--repo", "root/none")
	fails("want owner/name", "admin", "repo-sync-releases", "--repo", "justone")

	ok("admin", "reindex-issues")
	ok("admin", "reindex-issues", "--check")
	fails("unexpected argument", "admin", "reindex-issues", "now")

	ok("admin", "notices")
	fails("at least 1", "admin", "notices", "--limit", "0")

	fails(`no user "nobody"`, "admin", "user", "delete", "--username", "nobody")
	ok("admin", "user", "delete", "--username", "bob")
	fails(`no user "bob"`, "admin", "user", "delete", "--username", "bob")
	fails("last admin", "admin", "user", "delete", "--username", "root")
	fails(`unknown command "admin user frobnicate"`, "admin", "user", "frobnicate")
}
