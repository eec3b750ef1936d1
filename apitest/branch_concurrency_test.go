package apitest_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"repohost/apitest"
)

// TestBranchCreateConcurrent: branches created in parallel from the
// default branch (some with the same name) are each created once; the
// others lose with 409. None sees the repository as empty or missing its
// default branch while the others write their refs.
func TestBranchCreateConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.TokenCred(e.Token(alice, "write:repository"))
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	const n = 40
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		status := make([]*apitest.Response, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every fourth name is shared by two requests.
				name := fmt.Sprintf("r%d-b%d", round, i)
				if i%4 == 1 {
					name = fmt.Sprintf("r%d-b%d", round, i-1)
				}
				status[i] = e.DoFor(t, "POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": name}, cred)
			}()
		}
		wg.Wait()
		created := 0
		for i, r := range status {
			switch r.Status {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				if i%4 != 1 && i%4 != 0 {
					t.Errorf("round %d, create %d: 409 for a name nobody else takes: %s", round, i, r.Body)
				}
			default:
				t.Errorf("round %d, create %d: %d %s", round, i, r.Status, r.Body)
			}
		}
		if want := n - n/4; created != want {
			t.Errorf("round %d: %d branches created, want %d", round, created, want)
		}
	}
	var list []map[string]any
	e.Do("GET", "repos/alice/proj/branches?limit=50&page=3", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
}
