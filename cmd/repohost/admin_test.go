package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repohost/store"
	"repohost/store/secretbox"
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

// TestRotateSecretKey: rotate-secret-key re-seals the Actions secrets and
// webhook authorization headers under a new key and replaces the key
// file; the old key then opens nothing, the new one everything; a
// rotation under an operator's --secret-key leaves the file alone.
func TestRotateSecretKey(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	st := storage{data: data}
	db, err := st.open(ctx, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	u := &store.User{Name: "acme", LowerName: "acme"}
	if err := db.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ActionSecrets().Put(ctx, &store.ActionSecret{Scope: store.ActionScope{OwnerID: u.ID}, Name: "KEY"}, "the value"); err != nil {
		t.Fatal(err)
	}
	hook := &store.Hook{OwnerID: u.ID, Type: "gitea", URL: "http://127.0.0.1/", AuthorizationHeader: "Bearer hook-secret", Active: true}
	if err := db.Hooks().Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	db.Close()
	oldKey, err := secretbox.LoadKey(data)
	if err != nil {
		t.Fatal(err)
	}

	if err := run([]string{"admin", "rotate-secret-key", "--data", data}, quietLog()); err != nil {
		t.Fatal(err)
	}
	newKey, err := secretbox.LoadKey(data)
	if err != nil || newKey == oldKey {
		t.Fatalf("key after rotation: %v (unchanged: %v)", err, newKey == oldKey)
	}
	if _, err := os.Stat(filepath.Join(data, secretbox.PendingKeyFile)); !os.IsNotExist(err) {
		t.Fatalf("pending key left: %v", err)
	}
	read := func(key string) (map[string]string, *store.Hook) {
		t.Helper()
		db, err := (&storage{data: data, secretKey: key}).open(ctx, quietLog())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		secrets, err := db.ActionSecrets().ForRepo(ctx, u.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		h, err := db.Hooks().Find(ctx, hook.ID)
		if err != nil {
			t.Fatal(err)
		}
		return secrets, h
	}
	if secrets, h := read(newKey); secrets["KEY"] != "the value" || h.AuthorizationHeader != "Bearer hook-secret" {
		t.Fatalf("under the new key: %v, %q", secrets, h.AuthorizationHeader)
	}
	if secrets, h := read(oldKey); len(secrets) != 0 || !h.AuthorizationUnreadable {
		t.Fatalf("the old key still opens %v, %q", secrets, h.AuthorizationHeader)
	}

	// With the operator's key: the new one is given, the file stays.
	if err := run([]string{"admin", "rotate-secret-key", "--data", data, "--secret-key", newKey, "--new-key", "operator-key"}, quietLog()); err != nil {
		t.Fatal(err)
	}
	if k, _ := secretbox.LoadKey(data); k != newKey {
		t.Fatal("the key file changed under --secret-key")
	}
	if secrets, _ := read("operator-key"); secrets["KEY"] != "the value" {
		t.Fatalf("under the operator's key: %v", secrets)
	}
	// A wrong current key changes nothing.
	err = run([]string{"admin", "rotate-secret-key", "--data", data, "--secret-key", "wrong", "--new-key", "other"}, quietLog())
	if err == nil || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("rotation from a wrong key: %v", err)
	}
	if secrets, _ := read("operator-key"); secrets["KEY"] != "the value" {
		t.Fatalf("after the refused rotation: %v", secrets)
	}
}
