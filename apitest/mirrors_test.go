package apitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/models"
)

// mirrorEnv is a server whose mirrors may reach loopback addresses (the
// tests' other servers), with a one-second minimum interval and webhooks
// that may deliver to loopback receivers.
func mirrorEnv(t *testing.T, tune ...func(*app.Config)) *apitest.Env {
	t.Helper()
	return apitest.NewWithConfig(t, func(c *app.Config) {
		c.Migrations.AllowLocalNetworks = true
		c.Mirrors.MinInterval = time.Second
		c.Webhooks.AllowedHosts = "loopback"
		c.Webhooks.PollInterval = 100 * time.Millisecond
		c.Webhooks.Timeout = 20 * time.Second
		for _, f := range tune {
			f(c)
		}
	})
}

// TestPullMirror: a mirror of a repository on a second server is filled,
// follows pushes to its source after mirror-sync (with a push webhook)
// and after its interval (update_mirrors), prunes deleted branches, and
// refuses every other change of its refs.
func TestPullMirror(t *testing.T) {
	t.Parallel()
	src := apitest.New(t)
	c := newClonedRepo(t, src, "upstream", map[string]any{"private": true})
	c.git.must(c.clone, "checkout", "-q", "-b", "feature")
	c.git.commitFile(c.clone, "f.txt", "feature\n", "feature work")
	c.git.must(c.clone, "tag", "-a", "v1.0", "-m", "first release")
	c.git.must(c.clone, "push", "-q", "origin", "feature", "v1.0")
	c.git.must(c.clone, "checkout", "-q", "main")

	dst := mirrorEnv(t)
	bob := dst.CreateUser("bob", false)
	btok := dst.Token(bob, "write:repository")
	cred := apitest.TokenCred(btok)
	var r models.Repository
	dst.Do("POST", "repos/migrate", map[string]any{
		"clone_addr": gitURL(src, "", "", "alice", "upstream"), "auth_username": "alice", "auth_password": c.token,
		"repo_name": "mirror", "mirror": true, "mirror_interval": "1h",
	}, cred).Expect(t, http.StatusCreated).JSON(t, &r)
	// Its origin is reported without the credentials.
	if want := gitURL(src, "", "", "alice", "upstream"); r.OriginalURL != want {
		t.Fatalf("original_url %q, want %q", r.OriginalURL, want)
	}
	if !r.Mirror || r.MirrorInterval != "1h0m0s" || r.MirrorUpdated != nil {
		t.Fatalf("answer: mirror %v, interval %q, updated %v", r.Mirror, r.MirrorInterval, r.MirrorUpdated)
	}
	srcTips := func() map[string]string { return branchTips(t, src, c.cred, "alice", "upstream") }
	dstTips := func() map[string]string { return branchTips(t, dst, cred, "bob", "mirror") }
	waitFor(t, func() bool { return fmt.Sprint(dstTips()) == fmt.Sprint(srcTips()) })
	if got, want := tagTips(t, dst, cred, "bob", "mirror"), tagTips(t, src, c.cred, "alice", "upstream"); fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 1 {
		t.Fatalf("tags %v, want %v", got, want)
	}
	waitFor(t, func() bool {
		dst.Do("GET", "repos/bob/mirror", nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
		return r.MirrorUpdated != nil
	})
	if r.Empty || r.DefaultBranch != "main" || !r.Mirror {
		t.Fatalf("after the first sync: %+v", r)
	}

	// A push to the source shows after mirror-sync, with a push webhook
	// on the mirror.
	rc := newReceiver(t)
	mkHook(t, dst, cred, "repos/bob/mirror/hooks", map[string]any{"type": "gitea", "active": true,
		"events": []string{"push"}, "config": map[string]any{"url": rc.URL, "content_type": "json"}})
	next := c.git.commitFile(c.clone, "b.txt", "b\n", "second")
	c.git.must(c.clone, "push", "-q", "origin", "main")
	dst.Do("POST", "repos/bob/mirror/mirror-sync", nil, cred).Expect(t, http.StatusOK)
	waitFor(t, func() bool { return dstTips()["main"] == next })
	calls := rc.waitFor(t, 1, 20*time.Second)
	if calls[0].typ() != "push" {
		t.Fatalf("delivery %s", calls[0].typ())
	}
	if p := calls[0].payload(t); p["ref"] != "refs/heads/main" || p["after"] != next {
		t.Fatalf("push payload ref %v after %v", p["ref"], p["after"])
	}

	// A branch deleted at the source goes from the mirror.
	c.git.must(c.clone, "push", "-q", "origin", ":feature")
	dst.Do("POST", "repos/bob/mirror/mirror-sync", nil, cred).Expect(t, http.StatusOK)
	waitFor(t, func() bool { _, ok := dstTips()["feature"]; return !ok })

	// At the interval: not before it is due, then once it is.
	third := c.git.commitFile(c.clone, "c.txt", "c\n", "third")
	c.git.must(c.clone, "push", "-q", "origin", "main")
	runCron(t, dst, "update_mirrors")
	time.Sleep(time.Second)
	if dstTips()["main"] == third {
		t.Fatal("update_mirrors synced a mirror that was not due")
	}
	dst.Do("PATCH", "repos/bob/mirror", map[string]any{"mirror_interval": "1s"}, cred).Expect(t, http.StatusOK).JSON(t, &r)
	if r.MirrorInterval != "1s" {
		t.Fatalf("interval after the edit %q", r.MirrorInterval)
	}
	time.Sleep(1100 * time.Millisecond)
	runCron(t, dst, "update_mirrors")
	waitFor(t, func() bool { return dstTips()["main"] == third })
	for _, bad := range []string{"soon", "500ms", "-1h"} {
		dst.Do("PATCH", "repos/bob/mirror", map[string]any{"mirror_interval": bad}, cred).Expect(t, http.StatusUnprocessableEntity)
	}

	// Nothing else moves a mirror's refs.
	g := newGitCLI(t)
	work := t.TempDir()
	clone := filepath.Join(work, "mirror")
	g.must(work, "clone", "-q", gitURL(dst, "bob", btok, "bob", "mirror"), clone)
	g.commitFile(clone, "x.txt", "x\n", "not here")
	if out := g.refuse(clone, "push", "origin", "main"); !strings.Contains(out, "mirror repository is read-only") {
		t.Fatalf("push output: %s", out)
	}
	if _, err := exec.LookPath("ssh"); err == nil {
		addr := startSSH(t, dst)
		key := newSSHClientKey(t)
		dst.Do("POST", "user/keys", map[string]any{"title": "k", "key": key.line}, apitest.Basic(bob)).Expect(t, http.StatusCreated)
		if out := refuseSSHGit(t, key, clone, "push", "ssh://git@"+addr+"/bob/mirror.git", "main"); !strings.Contains(out, "mirror repository is read-only") {
			t.Fatalf("ssh push output: %s", out)
		}
	}
	dst.Do("POST", "repos/bob/mirror/contents/new.txt", map[string]any{"content": "eA=="}, cred).Expect(t, http.StatusForbidden)
	dst.Do("POST", "repos/bob/mirror/branches", map[string]any{"new_branch_name": "other"}, cred).Expect(t, http.StatusForbidden)
	dst.Do("POST", "repos/bob/mirror/tags", map[string]any{"tag_name": "v2", "target": "main"}, cred).Expect(t, http.StatusForbidden)
	dst.Do("DELETE", "repos/bob/mirror/tags/v1.0", nil, cred).Expect(t, http.StatusForbidden)
	if got := dstTips(); got["main"] != third || len(got) != 1 {
		t.Fatalf("mirror branches changed: %v", got)
	}

	// mirror-sync is for mirrors, and for writers.
	roCreateRepo(t, dst, cred, map[string]any{"name": "plain"})
	dst.Do("POST", "repos/bob/plain/mirror-sync", nil, cred).Expect(t, http.StatusBadRequest)
	dst.Do("PATCH", "repos/bob/plain", map[string]any{"mirror_interval": "1h"}, cred).Expect(t, http.StatusUnprocessableEntity)
	reader := dst.CreateUser("reader", false)
	dst.Do("POST", "repos/bob/mirror/mirror-sync", nil, apitest.Basic(reader)).Expect(t, http.StatusForbidden)
}

// TestPullMirrorGuard: a mirror of a loopback or private address is
// refused unless local networks are allowed, and so is a mirror where
// new pull mirrors are off.
func TestPullMirrorGuard(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	bob := e.CreateUser("bob", false)
	cred := apitest.TokenCred(e.Token(bob, "write:repository"))
	for _, addr := range []string{"http://127.0.0.1:1/x.git", "http://localhost/x.git", "http://10.0.0.1/x.git", "http://[::1]/x.git"} {
		resp := e.Do("POST", "repos/migrate", map[string]any{"clone_addr": addr, "repo_name": "x", "mirror": true}, cred).
			Expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(string(resp.Body), "disallowed hosts") {
			t.Errorf("%s: %s", addr, resp.Body)
		}
	}
	e.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x", "mirror": true, "mirror_interval": "1m"}, cred).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/bob/x", nil, cred).Expect(t, http.StatusNotFound)

	off := apitest.NewWithConfig(t, func(c *app.Config) { c.Mirrors.DisableNewPull = true })
	carol := off.CreateUser("carol", false)
	resp := off.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x", "mirror": true},
		apitest.Basic(carol)).Expect(t, http.StatusForbidden)
	if !strings.Contains(string(resp.Body), "MirrorsGlobalDisabled") {
		t.Fatalf("answer %s", resp.Body)
	}
}

// TestPushMirror: a push mirror receives the repository at once and every
// push after it; its last update and error are reported; admins only.
func TestPushMirror(t *testing.T) {
	t.Parallel()
	target := apitest.New(t)
	carol := target.CreateUser("carol", false)
	ctok := target.Token(carol, "write:repository")
	ccred := apitest.TokenCred(ctok)
	roCreateRepo(t, target, ccred, map[string]any{"name": "copy"})

	src := mirrorEnv(t)
	c := newClonedRepo(t, src, "proj", nil)
	c.git.must(c.clone, "checkout", "-q", "-b", "feature")
	c.git.commitFile(c.clone, "f.txt", "feature\n", "feature work")
	c.git.must(c.clone, "push", "-q", "origin", "feature")
	var pm models.PushMirror
	src.Do("POST", "repos/alice/proj/push_mirrors", map[string]any{
		"remote_address": gitURL(target, "", "", "carol", "copy"), "remote_username": "carol", "remote_password": ctok,
		"interval": "0", "sync_on_commit": true,
	}, c.cred).Expect(t, http.StatusOK).JSON(t, &pm)
	if !strings.HasPrefix(pm.RemoteName, "remote_mirror_") || pm.RepoName != "proj" || pm.Interval != "0s" || !pm.SyncOnCommit ||
		strings.Contains(pm.RemoteAddress, ctok) || pm.LastUpdateUnix != nil {
		t.Fatalf("push mirror %+v", pm)
	}
	srcTips := func() map[string]string { return branchTips(t, src, c.cred, "alice", "proj") }
	dstTips := func() map[string]string { return branchTips(t, target, ccred, "carol", "copy") }
	waitFor(t, func() bool { return fmt.Sprint(dstTips()) == fmt.Sprint(srcTips()) })

	// Every push after it follows, deletions included.
	next := c.git.commitFile(c.clone, "g.txt", "g\n", "more")
	c.git.must(c.clone, "push", "-q", "origin", "feature")
	waitFor(t, func() bool { return dstTips()["feature"] == next })
	c.git.must(c.clone, "push", "-q", "origin", ":feature")
	waitFor(t, func() bool { _, ok := dstTips()["feature"]; return !ok })
	waitFor(t, func() bool {
		src.Do("GET", "repos/alice/proj/push_mirrors/"+pm.RemoteName, nil, c.cred).Expect(t, http.StatusOK).JSON(t, &pm)
		return pm.LastUpdateUnix != nil
	})
	if pm.LastError != "" {
		t.Fatalf("last error %q", pm.LastError)
	}

	// One whose credentials are wrong reports why.
	var bad models.PushMirror
	src.Do("POST", "repos/alice/proj/push_mirrors", map[string]any{
		"remote_address": gitURL(target, "", "", "carol", "copy"), "remote_username": "carol", "remote_password": "wrong",
		"interval": "8h0m0s",
	}, c.cred).Expect(t, http.StatusOK).JSON(t, &bad)
	waitFor(t, func() bool {
		src.Do("GET", "repos/alice/proj/push_mirrors/"+bad.RemoteName, nil, c.cred).Expect(t, http.StatusOK).JSON(t, &bad)
		return bad.LastError != ""
	})
	if strings.Contains(bad.LastError, "wrong") {
		t.Fatalf("the last error shows the password: %s", bad.LastError)
	}
	var list []*models.PushMirror
	resp := src.Do("GET", "repos/alice/proj/push_mirrors?limit=1", nil, c.cred).Expect(t, http.StatusOK)
	resp.JSON(t, &list)
	if len(list) != 1 || resp.Header.Get("X-Total-Count") != "2" || list[0].RemoteName != pm.RemoteName {
		t.Fatalf("list %d, total %s", len(list), resp.Header.Get("X-Total-Count"))
	}
	src.Do("POST", "repos/alice/proj/push_mirrors-sync", nil, c.cred).Expect(t, http.StatusOK)

	// Bad input.
	for _, body := range []map[string]any{
		{"remote_address": "https://example.com/x.git", "interval": "1ms"},
		{"remote_address": "https://example.com/x.git", "interval": "often"},
		{"remote_address": "file:///etc", "interval": "0"},
		{"remote_address": "ssh://git@example.com/x.git", "interval": "0"},
		{"remote_address": "/srv/x.git", "interval": "0"},
	} {
		src.Do("POST", "repos/alice/proj/push_mirrors", body, c.cred).Expect(t, http.StatusBadRequest)
	}

	// Admins only: a writer is refused, an outsider does not see it.
	writer := src.CreateUser("writer", false)
	src.Do("PUT", "repos/alice/proj/collaborators/writer", map[string]any{"permission": "write"}, c.cred).Expect(t, http.StatusNoContent)
	src.Do("GET", "repos/alice/proj/push_mirrors", nil, apitest.Basic(writer)).Expect(t, http.StatusForbidden)
	src.Do("POST", "repos/alice/proj/push_mirrors-sync", nil, apitest.Basic(writer)).Expect(t, http.StatusForbidden)
	outsider := src.CreateUser("outsider", false)
	src.Do("GET", "repos/alice/proj/push_mirrors", nil, apitest.Basic(outsider)).Expect(t, http.StatusForbidden)
	src.Do("GET", "repos/alice/proj/push_mirrors", nil, nil).Expect(t, http.StatusUnauthorized)

	// Deleting one is announced, once; the other mirror still pushes,
	// the deleted one no more.
	log := src.RecordEvents()
	src.Do("DELETE", "repos/alice/proj/push_mirrors/"+pm.RemoteName, nil, c.cred).Expect(t, http.StatusNoContent)
	ev := log.ExpectKinds(t, "delete push mirror", events.PushMirrorDeleted)[0]
	if p, ok := ev.Payload.(events.PushMirrorSync); !ok || p.RemoteName != pm.RemoteName || p.Repo.Name != "proj" || ev.ActorID != c.alice.User.ID {
		t.Fatalf("event %+v by %d", ev.Payload, ev.ActorID)
	}
	src.Do("GET", "repos/alice/proj/push_mirrors/"+pm.RemoteName, nil, c.cred).Expect(t, http.StatusNotFound)
	src.Do("DELETE", "repos/alice/proj/push_mirrors/"+pm.RemoteName, nil, c.cred).Expect(t, http.StatusNotFound)
	log.ExpectKinds(t, "delete a missing push mirror")
	c.git.must(c.clone, "checkout", "-q", "main")
	after := c.git.commitFile(c.clone, "h.txt", "h\n", "after the deletion")
	c.git.must(c.clone, "push", "-q", "origin", "main")
	waitFor(t, func() bool { return branchTips(t, src, c.cred, "alice", "proj")["main"] == after })
	src.Do("GET", "repos/alice/proj/push_mirrors", nil, c.cred).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 || list[0].RemoteName != bad.RemoteName {
		t.Fatalf("push mirrors after the deletion: %+v", list)
	}
	if got := dstTips()["main"]; got == after {
		t.Fatal("the deleted push mirror was pushed to")
	}
}

// TestPushMirrorGuard: push mirrors to loopback and private addresses
// are refused unless allowed; a push is refused at connect time when a
// redirect would take it elsewhere.
func TestPushMirrorGuard(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := newClonedRepo(t, e, "proj", nil)
	for _, addr := range []string{"http://127.0.0.1:1/x.git", "http://localhost/x.git", "http://192.168.1.1/x.git", "http://169.254.169.254/x"} {
		resp := e.Do("POST", "repos/alice/proj/push_mirrors", map[string]any{"remote_address": addr, "interval": "0"}, c.cred).
			Expect(t, http.StatusBadRequest)
		if !strings.Contains(string(resp.Body), "disallowed hosts") {
			t.Errorf("%s: %s", addr, resp.Body)
		}
	}

	// Only 127.0.0.1 is allowed; a redirect from there is not followed.
	target := apitest.New(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.Server.URL+r.URL.Path+"?"+r.URL.RawQuery, http.StatusFound)
	}))
	defer redirect.Close()
	narrow := apitest.NewWithConfig(t, func(c *app.Config) { c.Migrations.AllowedDomains = "127.0.0.1/32" })
	n := newClonedRepo(t, narrow, "proj", nil)
	var pm models.PushMirror
	narrow.Do("POST", "repos/alice/proj/push_mirrors", map[string]any{"remote_address": redirect.URL + "/x/y.git", "interval": "0"}, n.cred).
		Expect(t, http.StatusOK).JSON(t, &pm)
	waitFor(t, func() bool {
		narrow.Do("GET", "repos/alice/proj/push_mirrors/"+pm.RemoteName, nil, n.cred).Expect(t, http.StatusOK).JSON(t, &pm)
		return pm.LastError != ""
	})
}

// TestMirrorSettings: the repository settings tell whether mirrors are
// on; off, the update_mirrors task is gone and push mirrors answer the
// reference's 400.
func TestMirrorSettings(t *testing.T) {
	t.Parallel()
	var rs models.GeneralRepoSettings
	on := apitest.New(t)
	on.Do("GET", "settings/repository", nil, nil).Expect(t, http.StatusOK).JSON(t, &rs)
	if rs.MirrorsDisabled {
		t.Fatalf("settings %+v", rs)
	}
	if _, ok := cronTasks(t, on)["update_mirrors"]; !ok {
		t.Fatal("no update_mirrors task")
	}
	off := apitest.NewWithConfig(t, func(c *app.Config) { c.Mirrors.Disabled = true })
	off.Do("GET", "settings/repository", nil, nil).Expect(t, http.StatusOK).JSON(t, &rs)
	if !rs.MirrorsDisabled {
		t.Fatalf("settings %+v", rs)
	}
	if _, ok := cronTasks(t, off)["update_mirrors"]; ok {
		t.Fatal("update_mirrors with mirrors off")
	}
	c := newClonedRepo(t, off, "proj", nil)
	off.Do("GET", "repos/alice/proj/push_mirrors", nil, c.cred).Expect(t, http.StatusBadRequest)
	off.Do("POST", "repos/alice/proj/push_mirrors", map[string]any{"remote_address": "https://example.com/x.git", "interval": "0"}, c.cred).
		Expect(t, http.StatusBadRequest)
	off.Do("POST", "repos/migrate", map[string]any{"clone_addr": "https://example.com/x.git", "repo_name": "x", "mirror": true}, c.cred).
		Expect(t, http.StatusForbidden)
}
