package apitest_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/impl/events"
)

// gitEnv runs git as g.run does, with extra environment variables, and
// returns its standard output and standard error apart.
func (g *gitCLI) runEnv(dir string, env []string, args ...string) (stdout, stderr string, err error) {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=/bin/false", "SSH_ASKPASS=/bin/false", "LANG=C", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
	}, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func (g *gitCLI) mustEnv(dir string, env []string, args ...string) (stdout, stderr string) {
	g.t.Helper()
	stdout, stderr, err := g.runEnv(dir, env, args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

// sshEnv is the environment that makes git use key over ssh.
func sshEnv(key sshClientKey) []string {
	return []string{"GIT_SSH_COMMAND=ssh -i " + key.file + " -o IdentitiesOnly=yes -o StrictHostKeyChecking=no" +
		" -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"}
}

var tracePacket = []string{"GIT_TRACE_PACKET=1"}

// protocolRepo is alice's repository with two commits on main (the first
// with a file the second changes), a tag and a second branch, reachable
// over HTTP and SSH.
type protocolRepo struct {
	clonedRepo
	e              *apitest.Env
	key            sshClientKey
	httpURL        string
	sshURL         string
	first, second  string
	firstFileValue string
}

func newProtocolRepo(t *testing.T, name string) protocolRepo {
	t.Helper()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	r := newClonedRepo(t, e, name, nil)
	p := protocolRepo{clonedRepo: r, e: e, httpURL: gitURL(e, "alice", r.token, "alice", name)}
	p.firstFileValue = strings.Repeat("first version\n", 200)
	p.first = r.git.commitFile(r.clone, "data/big.txt", p.firstFileValue, "first")
	r.git.must(r.clone, "tag", "-a", "-m", "v1", "v1")
	p.second = r.git.commitFile(r.clone, "data/big.txt", strings.Repeat("second version\n", 200), "second")
	r.git.must(r.clone, "push", "-q", "origin", "main", "main:other", "v1")
	addr := startSSH(t, e)
	p.key = newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": p.key.line}, apitest.Basic(r.alice)).Expect(t, http.StatusCreated)
	p.sshURL = "ssh://git@" + addr + "/alice/" + name + ".git"
	return p
}

// urls are the repository's URL over each transport with the environment
// git needs for it.
func (p protocolRepo) urls() map[string]struct {
	url string
	env []string
} {
	return map[string]struct {
		url string
		env []string
	}{
		"http": {p.httpURL, nil},
		"ssh":  {p.sshURL, sshEnv(p.key)},
	}
}

// Protocol version 2, as git clients speak it by default: the capability
// advertisement, ls-refs with ref-prefix and fetch, over HTTP and SSH, with
// the pack's progress on the client's standard error.
func TestGitProtocolV2(t *testing.T) {
	t.Parallel()
	p := newProtocolRepo(t, "v2")
	git := p.git
	head := p.second
	for transport, u := range p.urls() {
		env := append(slices.Clone(u.env), tracePacket...)
		dir := filepath.Join(p.work, transport)
		_, trace := git.mustEnv(p.work, env, "-c", "protocol.version=2", "clone", "--progress", u.url, dir)
		for _, want := range []string{"< version 2", "> command=ls-refs", "> command=fetch", "< ls-refs", "< fetch"} {
			if !strings.Contains(trace, want) {
				t.Fatalf("%s: v2 clone trace lacks %q:\n%s", transport, want, trace)
			}
		}
		// side-band-64k progress reaches stderr.
		if !strings.Contains(trace, "remote: Enumerating objects") && !strings.Contains(trace, "remote: Counting objects") {
			t.Fatalf("%s: no progress on stderr:\n%s", transport, trace)
		}
		if got := strings.TrimSpace(git.must(dir, "rev-parse", "HEAD")); got != head {
			t.Fatalf("%s: cloned HEAD %s, want %s", transport, got, head)
		}
		if got := strings.TrimSpace(git.must(dir, "rev-parse", "v1^{commit}")); got != p.first {
			t.Fatalf("%s: cloned tag v1 at %s, want %s", transport, got, p.first)
		}

		// ls-remote --heads asks for the branches only (ref-prefix), and
		// gets them.
		out, trace := git.mustEnv(p.work, env, "-c", "protocol.version=2", "ls-remote", "--heads", u.url)
		if !strings.Contains(trace, "> ref-prefix refs/heads/") {
			t.Fatalf("%s: ls-remote sent no ref-prefix:\n%s", transport, trace)
		}
		if want := head + "\trefs/heads/main\n" + p.second + "\trefs/heads/other\n"; out != want {
			t.Fatalf("%s: ls-remote --heads: %q, want %q", transport, out, want)
		}

		// An incremental fetch in v2.
		tip := git.commitFile(p.clone, "n-"+transport+".txt", "n\n", "new on "+transport)
		git.must(p.clone, "push", "-q", "origin", "main")
		head = tip
		_, trace = git.mustEnv(dir, env, "-c", "protocol.version=2", "fetch", "--progress", "origin")
		for _, want := range []string{"< version 2", "> command=fetch", "> thin-pack", "> ofs-delta", "> include-tag", "> have "} {
			if !strings.Contains(trace, want) {
				t.Fatalf("%s: v2 fetch trace lacks %q:\n%s", transport, want, trace)
			}
		}
		if got := strings.TrimSpace(git.must(dir, "rev-parse", "origin/main")); got != tip {
			t.Fatalf("%s: fetched origin/main %s, want %s", transport, got, tip)
		}

		// Version 0 still works when asked for.
		_, trace = git.mustEnv(p.work, env, "-c", "protocol.version=0", "ls-remote", u.url)
		if strings.Contains(trace, "version 2") {
			t.Fatalf("%s: v0 ls-remote answered in v2:\n%s", transport, trace)
		}
	}

	// The advertisement over HTTP: v2's capabilities when asked, without
	// the "# service" header; a value of another shape is not passed on.
	for header, want := range map[string]string{"version=2": "version 2", "": "# service=git-upload-pack",
		"version=2;rm -rf": "# service=git-upload-pack"} {
		req, _ := http.NewRequest("GET", p.e.Server.URL+"/alice/v2.git/info/refs?service=git-upload-pack", nil)
		req.SetBasicAuth("alice", p.token)
		if header != "" {
			req.Header.Set("Git-Protocol", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), want) {
			t.Fatalf("advertisement with Git-Protocol %q: %d %q", header, resp.StatusCode, b.String())
		}
		if header == "version=2" && (strings.Contains(b.String(), "# service") || !strings.Contains(b.String(), "fetch=") ||
			!strings.Contains(b.String(), "filter")) {
			t.Fatalf("v2 advertisement: %q", b.String())
		}
		if header == "" {
			for _, c := range []string{" side-band-64k ", " thin-pack ", " include-tag ", " ofs-delta ", " filter ", " allow-reachable-sha1-in-want "} {
				if !strings.Contains(b.String(), c) {
					t.Fatalf("v0 advertisement lacks %q: %q", c, b.String())
				}
			}
		}
	}
}

// Partial clones: --filter=blob:none, blob:limit and tree:0 over both
// transports (in protocol versions 2 and 0), and a checkout of an older commit fetching the blobs the
// clone left out.
func TestGitPartialClone(t *testing.T) {
	t.Parallel()
	p := newProtocolRepo(t, "partial")
	git := p.git
	for transport, u := range p.urls() {
		for _, c := range []struct{ filter, version string }{{"blob:none", "2"}, {"blob:limit=1k", "2"}, {"tree:0", "2"}, {"blob:none", "0"}} {
			filter, proto := c.filter, []string{"-c", "protocol.version=" + c.version}
			dir := filepath.Join(p.work, transport+"-v"+c.version+"-"+strings.ReplaceAll(filter, ":", "-"))
			git.mustEnv(p.work, u.env, append(proto, "clone", "-q", "--filter="+filter, u.url, dir)...)
			// The first commit's version of the file was left out.
			missing, _ := git.mustEnv(dir, nil, "rev-list", "--objects", "--all", "--missing=print")
			if !strings.Contains(missing, "\n?") && !strings.HasPrefix(missing, "?") {
				t.Fatalf("%s %s: nothing missing after a partial clone:\n%s", transport, filter, missing)
			}
			// Checking it out fetches what it needs, on demand.
			git.mustEnv(dir, u.env, append(proto, "checkout", "-q", p.first)...)
			got, err := os.ReadFile(filepath.Join(dir, "data", "big.txt"))
			if err != nil || string(got) != p.firstFileValue {
				t.Fatalf("%s %s: checkout of the first commit: %v %q", transport, filter, err, got)
			}
			if out, _ := git.mustEnv(dir, nil, "config", "remote.origin.promisor"); strings.TrimSpace(out) != "true" {
				t.Fatalf("%s %s: not a promisor remote", transport, filter)
			}
		}
	}
}

// countObjects is `git count-objects -v` of alice's repository name on
// the server.
func countObjects(t *testing.T, e *apitest.Env, g *gitCLI, name string) string {
	t.Helper()
	dir, err := e.Deps.Git.Path("alice", name)
	if err != nil {
		t.Fatal(err)
	}
	return g.must(dir, "--git-dir="+dir, "count-objects", "-v")
}

// Pushes as CI systems make them: atomic (one refused ref changes
// nothing), with push options (carried in the event), deleting a ref; a
// refused push leaves the server's objects as they were (quarantine).
func TestGitPushAtomicOptionsQuarantine(t *testing.T) {
	t.Parallel()
	p := newProtocolRepo(t, "ci")
	git, e, clone := p.git, p.e, p.clone
	e.Do("POST", "repos/alice/ci/branch_protections", map[string]any{"rule_name": "main"}, p.cred).Expect(t, http.StatusCreated)
	var repo struct{ ID int64 }
	e.Do("GET", "repos/alice/ci", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &repo)
	log := e.RecordEvents()

	for transport, u := range p.urls() {
		// Something new (a blob the server lacks) to push.
		tip := git.commitFile(clone, "new-"+transport+".txt", strings.Repeat(transport+"\n", 100), "new "+transport)
		before := countObjects(t, e, git, "ci")

		// Atomic with one refused ref (main is protected): nothing moves,
		// and the objects stay out of the repository.
		_, stderr, err := git.runEnv(clone, u.env, "push", "--atomic", u.url, "HEAD:main", "HEAD:refs/heads/atomic-"+transport)
		if err == nil || !strings.Contains(stderr, "not allowed to push to protected branch main") || !strings.Contains(stderr, "atomic") {
			t.Fatalf("%s: atomic push with a refused ref: %v\n%s", transport, err, stderr)
		}
		e.Do("GET", "repos/alice/ci/branches/atomic-"+transport, nil, p.cred).Expect(t, http.StatusNotFound)
		if after := countObjects(t, e, git, "ci"); after != before {
			t.Fatalf("%s: a refused push changed the objects:\n%s\n->\n%s", transport, before, after)
		}
		expectNoRefs(t, log, transport+" atomic refused push")

		// A non-atomic push refused as a whole stores nothing either.
		git.runEnv(clone, u.env, "push", u.url, "HEAD:main")
		if after := countObjects(t, e, git, "ci"); after != before {
			t.Fatalf("%s: a refused push changed the objects:\n%s\n->\n%s", transport, before, after)
		}

		// Push options reach the event.
		branch := "feature-" + transport
		git.mustEnv(clone, u.env, "push", "-q", "-o", "ci.skip", "-o", "foo=bar", u.url, "HEAD:refs/heads/"+branch)
		if got := ghBranch(t, e, p.cred, "alice", "ci", branch); got.Commit == nil || got.Commit.ID != tip {
			t.Fatalf("%s: %s after the push: %+v", transport, branch, got.Commit)
		}
		evs := refsEvents(log)
		if len(evs) != 1 {
			t.Fatalf("%s: %d RefsChanged events, want 1", transport, len(evs))
		}
		if pl := evs[0].Payload.(events.Refs); !slices.Equal(pl.PushOptions, []string{"ci.skip", "foo=bar"}) ||
			evs[0].RepoID != repo.ID || len(pl.Changes) != 1 || pl.Changes[0].Name != "refs/heads/"+branch {
			t.Fatalf("%s: event %+v", transport, pl)
		}
		if countObjects(t, e, git, "ci") == before {
			t.Fatalf("%s: an accepted push stored nothing", transport)
		}

		// An atomic push of two allowed refs makes both.
		git.mustEnv(clone, u.env, "push", "-q", "--atomic", u.url, "HEAD:refs/heads/a1-"+transport, "HEAD:refs/tags/t-"+transport)
		ghBranch(t, e, p.cred, "alice", "ci", "a1-"+transport)
		e.Do("GET", "repos/alice/ci/tags/t-"+transport, nil, p.cred).Expect(t, http.StatusOK)
		log.Take()

		// Deleting by push.
		git.mustEnv(clone, u.env, "push", "-q", u.url, "--delete", branch)
		e.Do("GET", "repos/alice/ci/branches/"+branch, nil, p.cred).Expect(t, http.StatusNotFound)
		expectRefs(t, log, transport+" delete", repo.ID, p.alice.User.ID,
			events.RefChange{Name: "refs/heads/" + branch, Old: tip, New: zeroID})
	}
	dir, _ := e.Deps.Git.Path("alice", "ci")
	git.must(dir, "--git-dir="+dir, "fsck", "--strict")
	if left, _ := filepath.Glob(filepath.Join(dir, "objects", "incoming-*")); len(left) != 0 {
		t.Fatalf("quarantines left behind: %v", left)
	}
}
