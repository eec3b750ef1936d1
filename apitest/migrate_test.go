package apitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

// migrationTarget is a server whose migrations may reach loopback
// addresses, where the tests' source servers listen.
func migrationTarget(t *testing.T) *apitest.Env {
	return apitest.NewWithConfig(t, func(c *app.Config) { c.Migrations.AllowLocalNetworks = true })
}

func branchTips(t *testing.T, e *apitest.Env, cred apitest.Cred, owner, name string) map[string]string {
	t.Helper()
	var bs []*models.Branch
	e.Do("GET", fmt.Sprintf("repos/%s/%s/branches", owner, name), nil, cred).Expect(t, http.StatusOK).JSON(t, &bs)
	out := map[string]string{}
	for _, b := range bs {
		out[b.Name] = b.Commit.ID
	}
	return out
}

func tagTips(t *testing.T, e *apitest.Env, cred apitest.Cred, owner, name string) map[string]string {
	t.Helper()
	var ts []*models.Tag
	e.Do("GET", fmt.Sprintf("repos/%s/%s/tags", owner, name), nil, cred).Expect(t, http.StatusOK).JSON(t, &ts)
	out := map[string]string{}
	for _, tg := range ts {
		out[tg.Name] = tg.Commit.SHA
	}
	return out
}

// TestRepoMigrateGitData migrates a private repository from a second
// server over http with credentials: the repository is answered at once,
// being migrated, and then holds the source's branches, tags and default
// branch, with one push webhook-able ref event.
func TestRepoMigrateGitData(t *testing.T) {
	t.Parallel()
	src := apitest.New(t)
	c := newClonedRepo(t, src, "upstream", map[string]any{"private": true})
	c.git.must(c.clone, "checkout", "-q", "-b", "feature")
	feature := c.git.commitFile(c.clone, "f.txt", "feature\n", "feature work")
	c.git.must(c.clone, "tag", "-a", "v1.0", "-m", "first release")
	c.git.must(c.clone, "push", "-q", "origin", "feature", "v1.0")

	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	cred := apitest.TokenCred(dst.Token(bob, "write:repository"))
	var r models.Repository
	// The credentials given in the address itself are used, and kept
	// out of the address reported as the repository's origin.
	dst.Do("POST", "repos/migrate", map[string]any{
		"clone_addr": gitURL(src, "alice", c.token, "alice", "upstream"),
		"repo_name":  "copy", "service": "git", "private": true, "description": "moved in",
	}, cred).Expect(t, http.StatusCreated).JSON(t, &r)
	if r.Name != "copy" || r.Owner.UserName != "bob" || !r.Private || r.Description != "moved in" {
		t.Fatalf("answer: %+v", r)
	}
	if want := gitURL(src, "", "", "alice", "upstream"); r.OriginalURL != want {
		t.Fatalf("original_url %q, want %q", r.OriginalURL, want)
	}
	srcCred := c.cred
	want := branchTips(t, src, srcCred, "alice", "upstream")
	if len(want) != 2 || want["feature"] != feature {
		t.Fatalf("source branches %v", want)
	}
	waitFor(t, func() bool {
		got := branchTips(t, dst, cred, "bob", "copy")
		return len(got) == len(want)
	})
	if got := branchTips(t, dst, cred, "bob", "copy"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("branches %v, want %v", got, want)
	}
	if got, want := tagTips(t, dst, cred, "bob", "copy"), tagTips(t, src, srcCred, "alice", "upstream"); fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 1 {
		t.Fatalf("tags %v, want %v", got, want)
	}
	dst.Do("GET", "repos/bob/copy", nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	if r.Empty || r.DefaultBranch != "main" || r.OriginalURL != gitURL(src, "", "", "alice", "upstream") {
		t.Fatalf("after the migration: empty %v, default branch %q, original_url %q", r.Empty, r.DefaultBranch, r.OriginalURL)
	}
	// The migrated repository is an ordinary one: it takes pushes.
	g := newGitCLI(t)
	work := t.TempDir()
	btok := dst.Token(bob, "write:repository")
	g.must(work, "clone", "-q", gitURL(dst, "bob", btok, "bob", "copy"), filepath.Join(work, "copy"))
	g.commitFile(filepath.Join(work, "copy"), "after.txt", "x\n", "after the move")
	g.must(filepath.Join(work, "copy"), "push", "-q", "origin", "main")
}

// TestRepoMigrateFailureRemovesRepository: a migration whose source is
// gone fails in the background and takes its repository with it; asked
// again once the source is back, it succeeds.
func TestRepoMigrateFailureRemovesRepository(t *testing.T) {
	t.Parallel()
	src := apitest.New(t)
	c := newClonedRepo(t, src, "upstream", nil)
	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	cred := apitest.TokenCred(dst.Token(bob, "write:repository"))
	// A source that is not there (the server's own address, a path no
	// repository has) fails the clone.
	dst.Do("POST", "repos/migrate", map[string]any{
		"clone_addr": gitURL(src, "", "", "alice", "gone"), "repo_name": "copy",
	}, cred).Expect(t, http.StatusCreated)
	waitFor(t, func() bool {
		return dst.Do("GET", "repos/bob/copy", nil, cred).Status == http.StatusNotFound
	})
	// Retried with the right address.
	dst.Do("POST", "repos/migrate", map[string]any{
		"clone_addr": gitURL(src, "", "", "alice", "upstream"), "repo_name": "copy",
	}, cred).Expect(t, http.StatusCreated)
	want := branchTips(t, src, c.cred, "alice", "upstream")
	waitFor(t, func() bool {
		return fmt.Sprint(branchTips(t, dst, cred, "bob", "copy")) == fmt.Sprint(want)
	})
	// A source server that stopped: the same.
	stopped := apitest.New(t)
	stoppedURL := gitURL(stopped, "", "", "x", "y")
	stopped.Server.Close()
	dst.Do("POST", "repos/migrate", map[string]any{"clone_addr": stoppedURL, "repo_name": "other"}, cred).
		Expect(t, http.StatusCreated)
	waitFor(t, func() bool {
		return dst.Do("GET", "repos/bob/other", nil, cred).Status == http.StatusNotFound
	})
}

// TestRepoMigrateGuard: local paths, file:// and other transports are
// refused, and so are loopback and private addresses unless the server
// allows local networks.
func TestRepoMigrateGuard(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	bob := e.CreateUser("bob", false)
	cred := apitest.TokenCred(e.Token(bob, "write:repository"))
	for addr, msg := range map[string]string{
		"/srv/git/x.git":                     "local repositories",
		"file:///etc":                        "local repositories",
		"ssh://git@example.com/x.git":        "Invalid URL",
		"http://127.0.0.1:1/x.git":           "disallowed hosts",
		"http://localhost/x.git":             "disallowed hosts",
		"http://10.0.0.1/x.git":              "disallowed hosts",
		"http://169.254.169.254/latest/meta": "disallowed hosts",
	} {
		resp := e.Do("POST", "repos/migrate", map[string]any{"clone_addr": addr, "repo_name": "x"}, cred).
			Expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(string(resp.Body), msg) {
			t.Errorf("%s: %s, want %q", addr, resp.Body, msg)
		}
	}
	e.Do("GET", "repos/bob/x", nil, cred).Expect(t, http.StatusNotFound)
	// Items beyond the git data are refused, not dropped.
	e.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x", "service": "gitea", "issues": true}, cred).
		Expect(t, http.StatusUnprocessableEntity)
	// Someone else's account is not the caller's to fill.
	e.CreateUser("carol", false)
	e.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x", "repo_owner": "carol"}, cred).
		Expect(t, http.StatusForbidden)
}

// TestRepoMigrateSettings: the repository settings say migrations are on
// (and mirrors too); turned off, migrations answer the
// reference's 403 and the settings say so.
func TestRepoMigrateSettings(t *testing.T) {
	t.Parallel()
	var rs models.GeneralRepoSettings
	on := apitest.New(t)
	on.Do("GET", "settings/repository", nil, nil).Expect(t, http.StatusOK).JSON(t, &rs)
	if rs.MigrationsDisabled || rs.MirrorsDisabled {
		t.Fatalf("settings %+v", rs)
	}
	off := apitest.NewWithConfig(t, func(c *app.Config) { c.Migrations.Disabled = true })
	off.Do("GET", "settings/repository", nil, nil).Expect(t, http.StatusOK).JSON(t, &rs)
	if !rs.MigrationsDisabled {
		t.Fatalf("settings %+v", rs)
	}
	bob := off.CreateUser("bob", false)
	resp := off.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x"},
		apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	if !strings.Contains(string(resp.Body), "MigrationsGlobalDisabled") {
		t.Fatalf("answer %s", resp.Body)
	}
}

// TestRepoMigratePushWaits: while a migration runs (its source hangs),
// the repository exists, empty, and refuses pushes; when the source gives
// up, the migration fails and the repository goes.
func TestRepoMigratePushWaits(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		http.Error(w, "gone", http.StatusInternalServerError)
	}))
	defer hanging.Close()
	var once sync.Once
	stop := func() { once.Do(func() { close(release) }) }
	defer stop()
	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	tok := dst.Token(bob, "write:repository")
	cred := apitest.TokenCred(tok)
	var r models.Repository
	dst.Do("POST", "repos/migrate", map[string]any{"clone_addr": hanging.URL + "/x.git", "repo_name": "copy"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &r)
	if !r.Empty {
		t.Fatalf("a repository being migrated is not empty: %+v", r)
	}
	g := newGitCLI(t)
	work := filepath.Join(t.TempDir(), "w")
	g.must("", "init", "-q", work)
	g.commitFile(work, "a.txt", "a\n", "first")
	out := g.refuse(work, "push", gitURL(dst, "bob", tok, "bob", "copy"), "HEAD:refs/heads/main")
	if !strings.Contains(out, "being migrated") {
		t.Fatalf("push output: %s", out)
	}
	stop()
	waitFor(t, func() bool { return dst.Do("GET", "repos/bob/copy", nil, cred).Status == http.StatusNotFound })
}

// TestRepoMigrateWaits makes the calls of the SDK's
// TestRepoMigrateAndLanguages (which mirrors a repository from the
// internet) against a source on 127.0.0.1, through the SDK, which reads
// the repository back at once: a server that waits for the migration
// answers with the mirror filled, as the reference does. A migration that
// fails is answered as failed, leaves no repository, and can be asked
// for again.
func TestRepoMigrateWaits(t *testing.T) {
	t.Parallel()
	src := apitest.New(t)
	c := newClonedRepo(t, src, "upstream", nil)
	c.git.commitFile(c.clone, "main.go", "package main\n\nfunc main() {}\n", "code")
	c.git.commitFile(c.clone, "Makefile", "all:\n\tgo build\n", "build")
	c.git.must(c.clone, "push", "-q", "origin", "main")
	dst := apitest.NewWithConfig(t, func(cfg *app.Config) {
		cfg.Migrations.AllowLocalNetworks = true
		cfg.Migrations.Wait = time.Minute
	})
	bob := dst.CreateUser("bob", false)
	btok := dst.Token(bob)
	dc := sdkClient(t, dst, gitea.SetToken(btok))
	repoM := call(dc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: gitURL(src, "", "", "alice", "upstream"), RepoName: "sdk-mirror",
		RepoOwner: "bob", Mirror: true, Description: "mirror sdk"})).ok(t)
	repoG := call(dc.GetRepo(repoM.Owner.UserName, repoM.Name)).ok(t)
	if repoG.ID != repoM.ID || repoG.DefaultBranch != "main" || !repoG.Mirror || repoG.Empty || repoM.Empty ||
		repoG.Watchers != 1 || repoG.MirrorUpdated.IsZero() || repoG.OriginalURL != gitURL(src, "", "", "alice", "upstream") {
		t.Fatalf("answer %+v\nthen %+v", repoM, repoG)
	}
	waitFor(t, func() bool {
		lang, _, err := dc.GetRepoLanguages("bob", "sdk-mirror")
		return err == nil && len(lang) == 2 && lang["Go"] > 0 && lang["Makefile"] > 0
	})

	// A source that is not there: 422, no repository; then from one that
	// is, under the same name.
	_, resp, err := dc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: gitURL(src, "", "", "alice", "gone"), RepoName: "copy", Service: gitea.GitServicePlain})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("failed migration answered %v, %v", resp, err)
	}
	if _, resp, _ := dc.GetRepo("bob", "copy"); resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a failed migration left its repository: %v", resp)
	}
	copyR := call(dc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: gitURL(src, "", "", "alice", "upstream"), RepoName: "copy",
		Service: gitea.GitServicePlain})).ok(t)
	if copyR.Empty || copyR.Mirror || copyR.DefaultBranch != "main" {
		t.Fatalf("retried migration answered %+v", copyR)
	}
}
