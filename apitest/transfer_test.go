package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/store"
)

// TestRepoTransfer: to another user the transfer waits for the
// recipient (202 with repo_transfer), who accepts or rejects it; to an
// organization the doer owns it happens at once, with teams; the bare
// repository moves on disk with the row.
func TestRepoTransfer(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	ac, bc, cc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
	made := roCreateRepo(t, e, ac, map[string]any{"name": "proj", "private": true, "auto_init": true})
	e.Do("PUT", "repos/alice/proj/collaborators/carol", map[string]any{"permission": "admin"}, ac).Expect(t, http.StatusNoContent)

	// Only the owner transfers; unknown recipients are 404, teams need an
	// organization.
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "bob"}, cc).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "bob"}, bc).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "nobody"}, ac).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "bob", "team_ids": []int{1}}, ac).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "alice"}, ac).Expect(t, http.StatusUnprocessableEntity)

	// To bob: pending until he accepts.
	var pending models.Repository
	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "bob"}, ac).Expect(t, http.StatusAccepted).JSON(t, &pending)
	if pending.RepoTransfer == nil || pending.RepoTransfer.Recipient.UserName != "bob" || pending.RepoTransfer.Doer.UserName != "alice" ||
		pending.FullName != "alice/proj" {
		t.Fatalf("pending transfer %+v %+v", pending.FullName, pending.RepoTransfer)
	}
	// Someone else cannot decide; bob can, though he cannot see it yet.
	e.Do("POST", "repos/alice/proj/transfer/accept", nil, cc).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/proj/transfer/accept", nil, apitest.Basic(e.CreateUser("dave", false))).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/proj/transfer/reject", nil, bc).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/proj/transfer/accept", nil, bc).Expect(t, http.StatusNotFound)

	e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "bob"}, ac).Expect(t, http.StatusAccepted)
	var moved models.Repository
	e.Do("POST", "repos/alice/proj/transfer/accept", nil, bc).Expect(t, http.StatusAccepted).JSON(t, &moved)
	if moved.FullName != "bob/proj" || moved.ID != made.ID || moved.Owner.UserName != "bob" || !moved.Permissions.Admin {
		t.Fatalf("accepted %+v", moved)
	}
	e.Do("GET", "repos/alice/proj", nil, ac).Expect(t, http.StatusNotFound)
	if roGitExists(t, e, "alice", "proj") || !roGitExists(t, e, "bob", "proj") {
		t.Fatal("the bare repository did not move with the row")
	}
	if roHead(t, roGit(t, e, "bob", "proj")) == "" {
		t.Fatal("moved repository has no HEAD")
	}
	// The recipient's collaboration is gone, carol's stays.
	e.Do("GET", "repos/bob/proj/collaborators/carol", nil, bc).Expect(t, http.StatusNoContent)

	// GET /repositories/{id}: the same visibility as by name.
	e.Do("GET", fmt.Sprintf("repositories/%d", made.ID), nil, bc).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("repositories/%d", made.ID), nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repositories/%d", made.ID), nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repositories/999999", nil, bc).Expect(t, http.StatusNotFound)

	// To an organization bob owns: at once, with its team.
	roCreateOrg(t, e, bc, map[string]any{"username": "bobco"})
	team := tmTeam(t, e, bc, "bobco", map[string]any{"name": "devs", "units_map": map[string]string{"repo.code": "write"}}, "carol")
	other := tmTeam(t, e, apitest.Basic(e.Admin), "bobco", map[string]any{"name": "x"})
	roCreateOrg(t, e, ac, map[string]any{"username": "aliceco"})
	foreign := tmTeam(t, e, ac, "aliceco", map[string]any{"name": "y"})
	e.Do("POST", "repos/bob/proj/transfer", map[string]any{"new_owner": "bobco", "team_ids": []int64{foreign.ID}}, bc).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/bob/proj/transfer", map[string]any{"new_owner": "aliceco"}, bc).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/bob/proj/transfer", map[string]any{"new_owner": "bobco", "team_ids": []int64{team.ID}}, bc).
		Expect(t, http.StatusAccepted).JSON(t, &moved)
	if moved.FullName != "bobco/proj" || moved.RepoTransfer != nil {
		t.Fatalf("to the organization %+v", moved)
	}
	e.Do("GET", "repos/bobco/proj/teams/devs", nil, bc).Expect(t, http.StatusOK)
	e.Do("GET", "repos/bobco/proj/teams/x", nil, bc).Expect(t, http.StatusNotFound)
	_ = other
	// A name already taken by the recipient is refused, nothing moves.
	roCreateRepo(t, e, ac, map[string]any{"name": "proj"})
	e.Do("POST", "repos/bobco/proj/transfer", map[string]any{"new_owner": "alice"}, apitest.Basic(e.Admin)).
		Expect(t, http.StatusUnprocessableEntity)
	if !roGitExists(t, e, "bobco", "proj") {
		t.Fatal("a refused transfer moved the directory")
	}
}

// trFailingRepos makes writing a repository row fail, as a database
// outage between the move on disk and the row would.
type trFailingRepos struct{ store.RepoStore }

func (trFailingRepos) Update(context.Context, *store.Repository) error {
	return errors.New("the database went away")
}

type trFailingStore struct{ store.Store }

func (s trFailingStore) Repos() store.RepoStore { return trFailingRepos{s.Store.Repos()} }

// TestRepoTransferPutsTheDirectoryBack: when the row cannot follow the
// bare repository, the directory moves back, so the two never end apart.
func TestRepoTransferPutsTheDirectoryBack(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	ctx := context.Background()
	r, err := e.DB.Repos().FindByOwnerAndName(ctx, "alice", "proj")
	if err != nil {
		t.Fatal(err)
	}
	failing := trFailingStore{e.DB}
	svc := repo.Service{Deps: &app.Deps{Store: failing, Git: e.Deps.Git, Access: access.Checker{Store: failing},
		Log: e.Deps.Log, Clock: e.Deps.Clock, Events: e.Deps.Events, Config: e.Deps.Config}}
	if _, err := svc.Transfer(ctx, alice.User, r, bob.User, nil); err == nil {
		t.Fatal("the transfer succeeded without its row")
	}
	if !roGitExists(t, e, "alice", "proj") || roGitExists(t, e, "bob", "proj") {
		t.Fatal("the directory was not put back")
	}
	e.Do("GET", "repos/alice/proj/contents/README.md", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
}

// TestRepoTransferRace: transfers of one repository at once to different
// organizations. One wins; every loser is a 404 (the repository is no
// longer where it asked) or a 409, never a 500, and the repository ends
// in exactly one place, on disk and in the database.
func TestRepoTransferRace(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	alice := e.CreateUser("alice", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	const n = 6
	for i := 0; i < n; i++ {
		roCreateOrg(t, e, admin, map[string]any{"username": fmt.Sprintf("org%d", i)})
	}
	owner := "alice"
	for round := 0; round < 4; round++ {
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			if fmt.Sprintf("org%d", i) == owner {
				continue // not a transfer: it owns the repository
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes[i] = e.DoFor(t, "POST", "repos/"+owner+"/proj/transfer", map[string]any{"new_owner": fmt.Sprintf("org%d", i)}, admin).Status
			}(i)
		}
		wg.Wait()
		winner := ""
		for i, c := range codes {
			switch c {
			case http.StatusAccepted:
				if winner != "" {
					t.Fatalf("round %d: two transfers won: %v", round, codes)
				}
				winner = fmt.Sprintf("org%d", i)
			case http.StatusNotFound, http.StatusConflict, 0:
			default:
				t.Fatalf("round %d: a transfer answered %d: %v", round, c, codes)
			}
		}
		if winner == "" {
			t.Fatalf("round %d: no transfer won: %v", round, codes)
		}
		e.Do("GET", "repos/"+winner+"/proj", nil, admin).Expect(t, http.StatusOK)
		if !roGitExists(t, e, winner, "proj") {
			t.Fatalf("round %d: %s/proj has no repository on disk", round, winner)
		}
		for i := 0; i < n; i++ {
			if o := fmt.Sprintf("org%d", i); o != winner && roGitExists(t, e, o, "proj") {
				t.Fatalf("round %d: a loser left a directory at %s/proj", round, o)
			}
		}
		owner = winner
	}
}
