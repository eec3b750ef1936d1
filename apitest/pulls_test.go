package apitest_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// prEnv is alice's repository "proj" cloned by the git CLI, the starting
// point of the pull request tests.
type prEnv struct {
	clonedRepo
	e *apitest.Env
}

func newPREnv(t *testing.T, opts map[string]any) *prEnv {
	t.Helper()
	e := apitest.New(t)
	return &prEnv{clonedRepo: newClonedRepo(t, e, "proj", opts), e: e}
}

// branch makes branch from base in the clone with one commit writing file
// and pushes it; it returns the commit.
func (p *prEnv) branch(t *testing.T, name, from, file, content string) string {
	t.Helper()
	p.git.must(p.clone, "checkout", "-q", "-B", name, "origin/"+from)
	sha := p.git.commitFile(p.clone, file, content, "change "+file+" on "+name)
	p.git.must(p.clone, "push", "-q", "origin", name)
	return sha
}

// push commits file on branch (checked out from origin) and pushes.
func (p *prEnv) push(t *testing.T, branch, file, content string) string {
	t.Helper()
	p.git.must(p.clone, "fetch", "-q", "origin")
	p.git.must(p.clone, "checkout", "-q", "-B", branch, "origin/"+branch)
	sha := p.git.commitFile(p.clone, file, content, "change "+file+" on "+branch)
	p.git.must(p.clone, "push", "-q", "origin", branch)
	return sha
}

func (p *prEnv) openPR(t *testing.T, cred apitest.Cred, head, base, title string) *models.PullRequest {
	t.Helper()
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": head, "base": base, "title": title}, cred).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	return &pr
}

func (p *prEnv) getPR(t *testing.T, index int64) *models.PullRequest {
	t.Helper()
	var pr models.PullRequest
	p.e.Do("GET", fmt.Sprintf("repos/alice/proj/pulls/%d", index), nil, p.cred).Expect(t, http.StatusOK).JSON(t, &pr)
	return &pr
}

// originMain is main on the server, fetched.
func (p *prEnv) originMain(t *testing.T) string {
	t.Helper()
	p.git.must(p.clone, "fetch", "-q", "origin")
	return strings.TrimSpace(p.git.must(p.clone, "rev-parse", "origin/main"))
}

func TestPullCreateRules(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	t.Log("server", p.e.Server.URL)
	head := p.branch(t, "feature", "main", "f.txt", "feature\n")
	pr := p.openPR(t, p.cred, "feature", "main", "Add f")
	if pr.Index != 1 || pr.State != "open" || !pr.Mergeable || pr.Head.Sha != head || pr.Head.Ref != "feature" ||
		pr.Base.Ref != "main" || pr.HasMerged || pr.ChangedFiles != 1 || pr.Additions != 1 {
		t.Fatalf("new pull request %+v head %+v", pr, pr.Head)
	}
	// The same head and base again: 409; equal head and base, or nothing
	// to merge: 422; missing branches: 404.
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "feature", "base": "main", "title": "again"}, p.cred).Expect(t, http.StatusConflict)
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "main", "base": "main", "title": "same"}, p.cred).Expect(t, http.StatusUnprocessableEntity)
	p.git.must(p.clone, "push", "-q", "origin", "origin/main:refs/heads/even")
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "even", "base": "main", "title": "nothing"}, p.cred).Expect(t, http.StatusUnprocessableEntity)
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "nope", "base": "main", "title": "x"}, p.cred).Expect(t, http.StatusNotFound)

	// The pull request shares the issue counter and is an issue.
	var is models.Issue
	p.e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "an issue"}, apitest.Basic(p.alice)).Expect(t, http.StatusCreated).JSON(t, &is)
	if is.Index != 2 {
		t.Fatalf("issue after pull request has number %d, want 2", is.Index)
	}
	var asIssue models.Issue
	p.e.Do("GET", "repos/alice/proj/issues/1", nil, apitest.Basic(p.alice)).Expect(t, http.StatusOK).JSON(t, &asIssue)
	if asIssue.PullRequest == nil || asIssue.PullRequest.HasMerged {
		t.Fatalf("issue 1 pull_request %+v", asIssue.PullRequest)
	}

	// git fetch origin pull/1/head gets the head.
	p.git.must(p.clone, "fetch", "-q", "origin", "pull/1/head")
	if got := strings.TrimSpace(p.git.must(p.clone, "rev-parse", "FETCH_HEAD")); got != head {
		t.Fatalf("pull/1/head is %s, want %s", got, head)
	}
	// A push to the head moves the ref and the stored state.
	next := p.push(t, "feature", "g.txt", "more\n")
	p.git.must(p.clone, "fetch", "-q", "origin", "pull/1/head")
	if got := strings.TrimSpace(p.git.must(p.clone, "rev-parse", "FETCH_HEAD")); got != next {
		t.Fatalf("pull/1/head after push is %s, want %s", got, next)
	}
	if got := p.getPR(t, 1); got.Head.Sha != next || got.ChangedFiles != 2 {
		t.Fatalf("pull request after push: head %s files %d", got.Head.Sha, got.ChangedFiles)
	}

	// Diff, patch, commits and files.
	diff := p.e.Do("GET", "repos/alice/proj/pulls/1.diff", nil, p.cred).Expect(t, http.StatusOK)
	if !strings.Contains(string(diff.Body), "+++ b/g.txt") {
		t.Fatalf("diff %s", diff.Body)
	}
	patch := p.e.Do("GET", "repos/alice/proj/pulls/1.patch", nil, p.cred).Expect(t, http.StatusOK)
	if strings.Count(string(patch.Body), "\nSubject: ") != 2 {
		t.Fatalf("patch %s", patch.Body)
	}
	var commits []*models.Commit
	p.e.Do("GET", "repos/alice/proj/pulls/1/commits", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &commits)
	if len(commits) != 2 || commits[0].SHA != head || commits[1].SHA != next {
		t.Fatalf("commits %d", len(commits))
	}
	var files []*models.ChangedFile
	p.e.Do("GET", "repos/alice/proj/pulls/1/files", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &files)
	if len(files) != 2 || files[0].Filename != "f.txt" || files[0].Status != "added" || files[0].Additions != 1 {
		t.Fatalf("files %+v", files)
	}
	p.e.Do("GET", "repos/alice/proj/pulls/1/merge", nil, p.cred).Expect(t, http.StatusNotFound)
	p.e.Do("GET", "repos/alice/proj/pulls/2", nil, p.cred).Expect(t, http.StatusNotFound)
}

func TestPullMergeStyles(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	styles := []string{"merge", "squash", "rebase", "rebase-merge", "fast-forward-only"}
	for i, style := range styles {
		branch := "b-" + style
		// Each branch starts at main as it is now and main moves on
		// afterwards (except for fast-forward-only), so merges are real.
		p.git.must(p.clone, "fetch", "-q", "origin")
		p.git.must(p.clone, "checkout", "-q", "-B", branch, "origin/main")
		p.git.commitFile(p.clone, style+"-1.txt", "one\n", style+" one")
		p.git.must(p.clone, "-c", "user.name=Carol", "-c", "user.email=carol@example.com", "commit", "-q", "--allow-empty",
			"--author=Carol <carol@example.com>", "-m", style+" by carol")
		p.git.must(p.clone, "push", "-q", "origin", branch)
		if style != "fast-forward-only" {
			p.push(t, "main", fmt.Sprintf("main-%d.txt", i), "main\n")
		}
		pr := p.openPR(t, p.cred, branch, "main", "Style "+style)
		before := p.originMain(t)
		p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": style}, p.cred).Expect(t, http.StatusOK)
		after := p.originMain(t)
		got := p.getPR(t, pr.Index)
		if !got.HasMerged || got.State != "closed" || got.MergedCommitID == nil || *got.MergedCommitID != after || got.MergedBy == nil || got.MergedBy.UserName != "alice" {
			t.Fatalf("%s: merged pull request %+v", style, got)
		}
		p.e.Do("GET", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), nil, p.cred).Expect(t, http.StatusNoContent)
		parents := strings.Fields(p.git.must(p.clone, "log", "-1", "--format=%P", after))
		log := p.git.must(p.clone, "log", "--format=%an|%s", before+".."+after)
		lines := strings.Split(strings.TrimSpace(log), "\n")
		switch style {
		case "merge":
			if len(parents) != 2 || parents[0] != before || parents[1] != pr.Head.Sha || len(lines) != 3 {
				t.Fatalf("merge: parents %v log %q", parents, log)
			}
		case "squash":
			msg := p.git.must(p.clone, "log", "-1", "--format=%B", after)
			if len(parents) != 1 || parents[0] != before || len(lines) != 1 || !strings.Contains(msg, "Co-authored-by: Carol <carol@example.com>") ||
				!strings.HasPrefix(lines[0], "alice|Style squash (#") {
				t.Fatalf("squash: parents %v log %q msg %q", parents, log, msg)
			}
		case "rebase":
			if len(parents) != 1 || len(lines) != 2 || lines[0] != "Carol|rebase by carol" || lines[1] != "Tester|rebase one" {
				t.Fatalf("rebase: parents %v log %q", parents, log)
			}
		case "rebase-merge":
			if len(parents) != 2 || parents[0] != before || len(lines) != 3 || lines[1] != "Carol|rebase-merge by carol" {
				t.Fatalf("rebase-merge: parents %v log %q", parents, log)
			}
		case "fast-forward-only":
			if after != pr.Head.Sha || len(lines) != 2 {
				t.Fatalf("fast-forward-only: main %s, head %s", after, pr.Head.Sha)
			}
		}
		// The tree holds both sides.
		files := p.git.must(p.clone, "ls-tree", "--name-only", after)
		if !strings.Contains(files, style+"-1.txt") {
			t.Fatalf("%s: tree after merge %q", style, files)
		}
		// Merging again: 405.
		p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": style}, p.cred).Expect(t, http.StatusMethodNotAllowed)
	}
	var open []*models.PullRequest
	p.e.Do("GET", "repos/alice/proj/pulls?state=closed&sort=oldest", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &open)
	if len(open) != len(styles) || open[0].Title != "Style merge" {
		t.Fatalf("closed list %d", len(open))
	}
	_ = filepath.Join
}
