package apitest_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/gitssh"
	"repohost/models"
)

// TestRepoSSHURL: without an SSH server a repository has no ssh_url; with
// one it is the ssh:// address of the server's port (not 22), on the root
// URL's host, and the real git and ssh clone from it.
func TestRepoSSHURL(t *testing.T) {
	t.Parallel()
	plain := apitest.New(t)
	owner := plain.CreateUser("alice", false)
	var r models.Repository
	roCreateRepo(t, plain, apitest.Basic(owner), map[string]any{"name": "proj"})
	plain.Do("GET", "repos/alice/proj", nil, apitest.Basic(owner)).Expect(t, http.StatusOK).JSON(t, &r)
	if r.SSHURL != "" {
		t.Errorf("ssh_url without an SSH server: %q", r.SSHURL)
	}

	// The SSH listener exists before the server, as in `repohost serve`:
	// its port is part of the configuration.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	e := apitest.NewWithDeps(t, func(d *app.Deps) { d.Config.SSHPort = port })
	hostKey, err := gitssh.LoadHostKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := gitssh.New(e.Deps, hostKey)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	alice := e.CreateUser("alice", false)
	created := roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	want := fmt.Sprintf("ssh://git@127.0.0.1:%d/alice/proj.git", port)
	if created.SSHURL != want {
		t.Errorf("created ssh_url %q, want %q", created.SSHURL, want)
	}
	var list []models.Repository
	e.Do("GET", "user/repos", nil, apitest.Basic(alice)).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 || list[0].SSHURL != want {
		t.Errorf("listed ssh_url %+v", list)
	}

	requireTools(t, "git", "ssh")
	key := newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": key.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	work := t.TempDir()
	mustSSHGit(t, key, work, "clone", "-q", created.SSHURL, "proj")
	if _, err := os.Stat(filepath.Join(work, "proj", "README.md")); err != nil {
		t.Fatalf("clone from ssh_url: %v", err)
	}
}
