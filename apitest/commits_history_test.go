package apitest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// gdHistory appends n commits to the clone's main with git fast-import
// (one file changed in each), by one author, and pushes them.
func gdHistory(t *testing.T, git *gitCLI, clone string, n int) {
	t.Helper()
	var in bytes.Buffer
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	parent := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
	for i := 0; i < n; i++ {
		content := fmt.Sprintf("line %d\n", i)
		msg := fmt.Sprintf("commit %d\n", i)
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter Tester <tester@example.com> %d +0000\ndata %d\n%s", at+int64(i), len(msg), msg)
		if i == 0 {
			fmt.Fprintf(&in, "from %s\n", parent)
		}
		fmt.Fprintf(&in, "M 100644 inline f%d.txt\ndata %d\n%s\n", i%7, len(content), content)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = clone, &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v: %s", err, out)
	}
	git.must(clone, "reset", "-q", "--hard", "main")
	git.must(clone, "push", "-q", "origin", "main")
}

// TestRepoCommitsPageCostsThePage: page 1 of a history of thousands of
// commits runs the same SQL statements as page 1 of twenty, and its
// headers count the whole history.
func TestRepoCommitsPageCostsThePage(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	small := brSeed(t, e, git, alice, tok, "small", false)
	gdHistory(t, git, small, 19)
	big := brSeed(t, e, git, alice, tok, "big", false)
	gdHistory(t, git, big, 3000)

	count := func(repo string) (int64, *apitest.Response) {
		before := e.Statements()
		r := e.Do("GET", "repos/alice/"+repo+"/commits?limit=10", nil, cred).Expect(t, http.StatusOK)
		return e.Statements() - before, r
	}
	ns, rs := count("small")
	nb, rb := count("big")
	if ns != nb {
		t.Errorf("statements: %d for 20 commits, %d for 3001", ns, nb)
	}
	var list []*models.Commit
	rb.JSON(t, &list)
	if len(list) != 10 || list[0].Commit.Message != "commit 2999\n" || rb.Header.Get("X-Total-Count") != "3001" ||
		rb.Header.Get("X-HasMore") != "true" || !strings.Contains(rb.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("big page 1: %d commits, headers %v", len(list), rb.Header)
	}
	sixth := list[5].SHA
	if rs.Header.Get("X-Total-Count") != "20" || rs.Header.Get("X-PageCount") != "2" {
		t.Fatalf("small: %v", rs.Header)
	}
	// The last page of the big one, and since/until/path/not narrowing it.
	e.Do("GET", "repos/alice/big/commits?limit=10&page=301", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("last page: %d", len(list))
	}
	r := e.Do("GET", "repos/alice/big/commits?limit=5&path=f3.txt&stat=false&files=false&verification=false", nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 5 || r.Header.Get("X-Total-Count") != "429" || list[0].Stats != nil || list[0].Files != nil {
		t.Fatalf("path f3.txt: %d, total %s", len(list), r.Header.Get("X-Total-Count"))
	}
	since := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(2990 * time.Second).Format(time.RFC3339)
	r = e.Do("GET", "repos/alice/big/commits?since="+since, nil, cred).Expect(t, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "10" {
		t.Fatalf("since: total %s", r.Header.Get("X-Total-Count"))
	}
	r = e.Do("GET", "repos/alice/big/commits?not="+sixth, nil, cred).Expect(t, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "5" {
		t.Fatalf("not: total %s", r.Header.Get("X-Total-Count"))
	}
}
