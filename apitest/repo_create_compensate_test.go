package apitest_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// doomedStore fails the insert of a repository row whose name starts with
// "doomed", once per name, and notes what git held at that moment.
type doomedStore struct {
	store.Store
	git gitstore.Repos

	mu     sync.Mutex
	failed map[string]bool
	// branches are the branches each doomed repository had in git when
	// its row was inserted.
	branches map[string][]string
}

func (s *doomedStore) Repos() store.RepoStore { return doomedRepos{s.Store.Repos(), s} }

type doomedRepos struct {
	store.RepoStore
	s *doomedStore
}

func (r doomedRepos) Create(ctx context.Context, row *store.Repository) error {
	if !strings.HasPrefix(row.Name, "doomed") {
		return r.RepoStore.Create(ctx, row)
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.failed[row.Name] {
		return r.RepoStore.Create(ctx, row)
	}
	r.s.failed[row.Name] = true
	var names []string
	if g, err := r.s.git.OpenGit(row.Owner.Name, row.Name); err == nil {
		if bs, err := g.BranchAndTagRefs(); err == nil {
			for _, b := range bs {
				names = append(names, b.Name().Short())
			}
		}
	}
	r.s.branches[row.Name] = names
	return errors.New("injected failure of the repository insert")
}

// TestRepoCreateCompensates: creation and forking do their git work, the
// first refs included, before the transaction that inserts the row; when
// that transaction fails, the directory they made is removed again, so
// nothing is left on disk, the parent counts no fork, and the same name
// can be created afterwards.
func TestRepoCreateCompensates(t *testing.T) {
	t.Parallel()
	var ds *doomedStore
	e := apitest.NewWithDeps(t, func(d *app.Deps) {
		ds = &doomedStore{Store: d.Store, git: d.Git, failed: map[string]bool{}, branches: map[string][]string{}}
		d.Store = ds
	})
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	gone := func(owner, name string) {
		t.Helper()
		dir, err := e.Deps.Git.Path(owner, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s/%s: directory %s left behind (%v)", owner, name, dir, err)
		}
		e.Do("GET", "repos/"+owner+"/"+name, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
	}
	seen := func(name string, want ...string) {
		t.Helper()
		ds.mu.Lock()
		defer ds.mu.Unlock()
		if got := strings.Join(ds.branches[name], ","); got != strings.Join(want, ",") {
			t.Fatalf("%s: git held refs %q when the row was inserted, want %q", name, got, strings.Join(want, ","))
		}
	}

	// A new repository with a first commit.
	e.Do("POST", "user/repos", map[string]any{"name": "doomed-init", "auto_init": true}, ac).Expect(t, http.StatusInternalServerError)
	seen("doomed-init", "main")
	gone("alice", "doomed-init")
	var r models.Repository
	e.Do("POST", "user/repos", map[string]any{"name": "doomed-init", "auto_init": true}, ac).Expect(t, http.StatusCreated).JSON(t, &r)
	if r.Empty || r.DefaultBranch != "main" {
		t.Fatalf("created after the failure: %+v", r)
	}
	e.Do("GET", "repos/alice/doomed-init/branches/main", nil, ac).Expect(t, http.StatusOK)

	// A fork with a branch and a tag.
	roCreateRepo(t, e, ac, map[string]any{"name": "src", "auto_init": true})
	e.Do("POST", "repos/alice/src/tags", map[string]any{"tag_name": "v1", "target": "main"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/src/forks", map[string]any{"name": "doomed-fork"}, bc).Expect(t, http.StatusInternalServerError)
	seen("doomed-fork", "main", "v1")
	gone("bob", "doomed-fork")
	e.Do("GET", "repos/alice/src", nil, ac).Expect(t, http.StatusOK).JSON(t, &r)
	if r.Forks != 0 {
		t.Fatalf("failed fork counted: %d forks", r.Forks)
	}
	e.Do("POST", "repos/alice/src/forks", map[string]any{"name": "doomed-fork"}, bc).Expect(t, http.StatusAccepted).JSON(t, &r)
	if !r.Fork || r.Empty {
		t.Fatalf("fork after the failure: %+v", r)
	}
	e.Do("GET", "repos/bob/doomed-fork/branches/main", nil, bc).Expect(t, http.StatusOK)
	e.Do("GET", "repos/bob/doomed-fork/tags/v1", nil, bc).Expect(t, http.StatusOK)

	// An empty repository has no refs to seed.
	e.Do("POST", "user/repos", map[string]any{"name": "doomed-empty"}, ac).Expect(t, http.StatusInternalServerError)
	seen("doomed-empty")
	gone("alice", "doomed-empty")
}
