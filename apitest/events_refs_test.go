package apitest_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/apitest"
	"repohost/impl/events"
	"repohost/models"
)

var zeroID = plumbing.ZeroHash.String()

// refsEvents takes the recorded events and returns the RefsChanged ones
// (other kinds are other services' business).
func refsEvents(log *apitest.EventLog) []events.Event {
	var out []events.Event
	for _, ev := range log.Take() {
		if ev.Kind == events.RefsChanged {
			out = append(out, ev)
		}
	}
	return out
}

// expectRefs fails t unless exactly one RefsChanged was emitted since the
// last check, by actor for repoID, with exactly the changes want (in order).
func expectRefs(t *testing.T, log *apitest.EventLog, action string, repoID, actor int64, want ...events.RefChange) {
	t.Helper()
	got := refsEvents(log)
	if len(got) != 1 {
		t.Fatalf("%s: %d RefsChanged events, want 1: %+v", action, len(got), got)
	}
	ev := got[0]
	p, ok := ev.Payload.(events.Refs)
	if !ok {
		t.Fatalf("%s: payload %T", action, ev.Payload)
	}
	if ev.RepoID != repoID || p.Repo.ID != repoID || ev.ActorID != actor {
		t.Errorf("%s: repo %d/%d actor %d, want repo %d actor %d", action, ev.RepoID, p.Repo.ID, ev.ActorID, repoID, actor)
	}
	if !slices.Equal(p.Changes, want) {
		t.Errorf("%s: changes\n  %+v\nwant\n  %+v", action, p.Changes, want)
	}
}

// expectNoRefs fails t if a RefsChanged was emitted since the last check.
func expectNoRefs(t *testing.T, log *apitest.EventLog, action string) {
	t.Helper()
	if got := refsEvents(log); len(got) != 0 {
		t.Errorf("%s: %d RefsChanged events, want none: %+v", action, len(got), got)
	}
}

func heads(name string) string { return "refs/heads/" + name }
func tags(name string) string  { return "refs/tags/" + name }

// TestRefsEventsPush: one push is one event listing every update it
// applied, with their old and new ids; refused updates are not listed and
// a push with nothing applied announces nothing.
func TestRefsEventsPush(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	log := e.RecordEvents()
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	id := alice.User.ID

	r := roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	clone := filepath.Join(t.TempDir(), "proj")
	git.must(filepath.Dir(clone), "clone", "-q", gitURL(e, "alice", tok, "alice", "proj"), clone)
	first := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
	// auto_init: the first branch of the new repository.
	expectRefs(t, log, "auto_init", r.ID, id, events.RefChange{Name: heads("main"), Old: zeroID, New: first})

	second := git.commitFile(clone, "a.txt", "a\n", "a")
	git.must(clone, "push", "-q", "origin", "main")
	expectRefs(t, log, "push main", r.ID, id, events.RefChange{Name: heads("main"), Old: first, New: second})

	git.must(clone, "push", "-q", "origin", "HEAD:one", "HEAD:two")
	expectRefs(t, log, "push of two branches", r.ID, id,
		events.RefChange{Name: heads("one"), Old: zeroID, New: second},
		events.RefChange{Name: heads("two"), Old: zeroID, New: second})

	git.must(clone, "push", "-q", "origin", "--delete", "one")
	expectRefs(t, log, "delete by push", r.ID, id, events.RefChange{Name: heads("one"), Old: second, New: zeroID})

	git.must(clone, "tag", "v1")
	git.must(clone, "push", "-q", "origin", "v1")
	expectRefs(t, log, "push a tag", r.ID, id, events.RefChange{Name: tags("v1"), Old: zeroID, New: second})

	// main: nobody may push. A push refused entirely announces nothing; a
	// push with one refused update lists only the applied one.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main"}, cred).Expect(t, http.StatusCreated)
	third := git.commitFile(clone, "b.txt", "b\n", "b")
	git.refuse(clone, "push", "origin", "main")
	expectNoRefs(t, log, "refused push")
	git.refuse(clone, "push", "origin", "main", "HEAD:three")
	expectRefs(t, log, "partly refused push", r.ID, id, events.RefChange{Name: heads("three"), Old: zeroID, New: third})
	// Deleting the default branch is refused whatever the rules.
	git.refuse(clone, "push", "origin", "--delete", "main")
	expectNoRefs(t, log, "delete of the default branch")
	if e.RefWrites() == 0 {
		t.Fatal("the ref guard saw no writes")
	}
}

// TestRefsEventsAPI: each branch, tag, contents and release action that
// moves refs announces it once; refused ones announce nothing.
func TestRefsEventsAPI(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	log := e.RecordEvents()
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	id := alice.User.ID
	r := roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	main := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID
	log.Take()

	// Contents: one commit, one event.
	var fr models.FileResponse
	e.Do("POST", "repos/alice/proj/contents/a.txt", map[string]any{"content": b64("a")}, cred).
		Expect(t, http.StatusCreated).JSON(t, &fr)
	expectRefs(t, log, "contents commit", r.ID, id, events.RefChange{Name: heads("main"), Old: main, New: fr.Commit.SHA})
	tip := fr.Commit.SHA
	e.Do("POST", "repos/alice/proj/contents/b.txt", map[string]any{"content": b64("b"), "new_branch": "side"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &fr)
	expectRefs(t, log, "contents commit to a new branch", r.ID, id, events.RefChange{Name: heads("side"), Old: zeroID, New: fr.Commit.SHA})
	side := fr.Commit.SHA

	// Branches.
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "dev"}, cred).Expect(t, http.StatusCreated)
	expectRefs(t, log, "branch create", r.ID, id, events.RefChange{Name: heads("dev"), Old: zeroID, New: tip})
	e.Do("PUT", brPath("alice", "proj", "dev"), map[string]any{"new_commit_id": side, "force": true}, cred).Expect(t, http.StatusNoContent)
	expectRefs(t, log, "branch update", r.ID, id, events.RefChange{Name: heads("dev"), Old: tip, New: side})
	e.Do("PATCH", brPath("alice", "proj", "dev"), map[string]any{"name": "dev2"}, cred).Expect(t, http.StatusNoContent)
	expectRefs(t, log, "branch rename", r.ID, id,
		events.RefChange{Name: heads("dev2"), Old: zeroID, New: side},
		events.RefChange{Name: heads("dev"), Old: side, New: zeroID})
	e.Do("DELETE", brPath("alice", "proj", "dev2"), nil, cred).Expect(t, http.StatusNoContent)
	expectRefs(t, log, "branch delete", r.ID, id, events.RefChange{Name: heads("dev2"), Old: side, New: zeroID})

	// Tags: a lightweight tag names the commit, an annotated one its tag
	// object.
	var tag models.Tag
	e.Do("POST", "repos/alice/proj/tags", map[string]any{"tag_name": "v1"}, cred).Expect(t, http.StatusCreated).JSON(t, &tag)
	expectRefs(t, log, "tag create", r.ID, id, events.RefChange{Name: tags("v1"), Old: zeroID, New: tip})
	e.Do("POST", "repos/alice/proj/tags", map[string]any{"tag_name": "v2", "message": "annotated"}, cred).Expect(t, http.StatusCreated).JSON(t, &tag)
	expectRefs(t, log, "annotated tag create", r.ID, id, events.RefChange{Name: tags("v2"), Old: zeroID, New: tag.ID})
	e.Do("DELETE", "repos/alice/proj/tags/v2", nil, cred).Expect(t, http.StatusNoContent)
	expectRefs(t, log, "tag delete", r.ID, id, events.RefChange{Name: tags("v2"), Old: tag.ID, New: zeroID})

	// Releases: publishing one creates its tag (one event); one on an
	// existing tag, or a draft, moves nothing; publishing the draft does.
	e.Do("POST", "repos/alice/proj/releases", map[string]any{"tag_name": "r1"}, cred).Expect(t, http.StatusCreated)
	expectRefs(t, log, "release with a new tag", r.ID, id, events.RefChange{Name: tags("r1"), Old: zeroID, New: tip})
	e.Do("POST", "repos/alice/proj/releases", map[string]any{"tag_name": "v1"}, cred).Expect(t, http.StatusCreated)
	expectNoRefs(t, log, "release on an existing tag")
	var draft models.Release
	e.Do("POST", "repos/alice/proj/releases", map[string]any{"tag_name": "r2", "draft": true, "target_commitish": "side"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &draft)
	expectNoRefs(t, log, "draft release")
	e.Do("PATCH", "repos/alice/proj/releases/"+strconv.FormatInt(draft.ID, 10), map[string]any{"draft": false}, cred).Expect(t, http.StatusOK)
	expectRefs(t, log, "publishing a draft", r.ID, id, events.RefChange{Name: tags("r2"), Old: zeroID, New: side})

	// Refused updates announce nothing.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "side"}, cred).Expect(t, http.StatusCreated)
	log.Take()
	e.Do("DELETE", brPath("alice", "proj", "side"), nil, cred).Expect(t, http.StatusForbidden)
	e.Do("DELETE", brPath("alice", "proj", "main"), nil, cred).Expect(t, http.StatusForbidden)
	e.Do("PUT", brPath("alice", "proj", "side"), map[string]any{"new_commit_id": tip, "force": true}, cred).Expect(t, http.StatusConflict)
	e.Do("POST", "repos/alice/proj/contents/c.txt", map[string]any{"content": b64("c"), "branch": "side"}, cred).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "main"}, cred).Expect(t, http.StatusConflict)
	e.Do("POST", "repos/alice/proj/tags", map[string]any{"tag_name": "v1"}, cred).Expect(t, http.StatusConflict)
	expectNoRefs(t, log, "refused updates")
}

// TestRefsEventsGenerate: a generated repository with git content gets its
// first branch through the one path (one event); without git content it
// has no branch and no event.
func TestRefsEventsGenerate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	log := e.RecordEvents()
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "tpl", "auto_init": true, "template": true})
	// The template's rule on main is copied, yet the new repository's
	// first branch is not refused: it appears before the rules.
	e.Do("POST", "repos/alice/tpl/branch_protections", map[string]any{"rule_name": "main"}, cred).Expect(t, http.StatusCreated)
	log.Take()

	var full models.Repository
	e.Do("POST", "repos/alice/tpl/generate", map[string]any{"owner": "alice", "name": "full", "git_content": true, "protected_branch": true}, cred).
		Expect(t, http.StatusCreated).JSON(t, &full)
	head := ghBranch(t, e, cred, "alice", "full", "main").Commit.ID
	expectRefs(t, log, "generate with git content", full.ID, alice.User.ID, events.RefChange{Name: heads("main"), Old: zeroID, New: head})
	if full.Empty {
		t.Error("generated repository with content is empty")
	}

	e.Do("POST", "repos/alice/tpl/generate", map[string]any{"owner": "alice", "name": "bare", "topics": true}, cred).
		Expect(t, http.StatusCreated)
	expectNoRefs(t, log, "generate without git content")
}
