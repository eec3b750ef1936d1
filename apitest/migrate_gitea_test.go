package apitest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/repo"
	"repohost/models"
)

// giteaSource is a repository of a second server seeded through its API
// with what a migration from a Gitea brings.
type giteaSource struct {
	env   *apitest.Env
	c     *gitea.Client
	token string
	asset []byte
}

// sdkCall is an SDK call's answer, checked by ok.
type sdkCall[T any] struct {
	v   T
	err error
}

func call[T any](v T, _ *gitea.Response, err error) sdkCall[T] { return sdkCall[T]{v, err} }

func (c sdkCall[T]) ok(t *testing.T) T {
	t.Helper()
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.v
}

// seedGiteaSource makes alice/upstream on e: labels, milestones (one
// closed), issues with labels, milestones, assignees, reactions and
// comments (one closed, one comment with reactions), a release with an
// asset, an open pull request (assigned, with reactions and two reviews
// by carol, one with a line comment) and a merged one.
func seedGiteaSource(t *testing.T, e *apitest.Env) giteaSource {
	t.Helper()
	c := newClonedRepo(t, e, "upstream", nil)
	c.git.must(c.clone, "checkout", "-q", "-b", "feature")
	c.git.commitFile(c.clone, "feature.txt", "feature\n", "feature work")
	c.git.must(c.clone, "checkout", "-q", "main")
	c.git.must(c.clone, "checkout", "-q", "-b", "fix")
	c.git.commitFile(c.clone, "fix.txt", "fix\n", "a fix")
	c.git.must(c.clone, "push", "-q", "origin", "feature", "fix")
	token := e.Token(c.alice)
	api := sdkClient(t, e, gitea.SetToken(token))
	carol := e.CreateUser("carol", false)
	capi := sdkClient(t, e, gitea.SetToken(e.Token(carol)))
	const o, r = "alice", "upstream"
	bug := call(api.CreateLabel(o, r, gitea.CreateLabelOption{Name: "bug", Color: "#ee0701", Description: "something is wrong"})).ok(t)
	call(api.CreateLabel(o, r, gitea.CreateLabelOption{Name: "kind/feature", Color: "#00aabb", Exclusive: true})).ok(t)
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	v1 := call(api.CreateMilestone(o, r, gitea.CreateMilestoneOption{Title: "v1", Description: "first", Deadline: &due})).ok(t)
	call(api.CreateMilestone(o, r, gitea.CreateMilestoneOption{Title: "v0", State: gitea.StateClosed})).ok(t)
	i1 := call(api.CreateIssue(o, r, gitea.CreateIssueOption{Title: "first bug", Body: "it breaks", Labels: []int64{bug.ID},
		Milestone: v1.ID, Assignees: []string{"alice"}})).ok(t)
	metoo := call(capi.CreateIssueComment(o, r, i1.Index, gitea.CreateIssueCommentOption{Body: "me too"})).ok(t)
	call(api.PostIssueReaction(o, r, i1.Index, "+1")).ok(t)
	call(capi.PostIssueReaction(o, r, i1.Index, "+1")).ok(t)
	call(capi.PostIssueReaction(o, r, i1.Index, "heart")).ok(t)
	call(api.PostIssueCommentReaction(o, r, metoo.ID, "laugh")).ok(t)
	call(api.CreateIssueComment(o, r, i1.Index, gitea.CreateIssueCommentOption{Body: "looking"})).ok(t)
	i2 := call(capi.CreateIssue(o, r, gitea.CreateIssueOption{Title: "done already", Body: "closed one", Milestone: v1.ID})).ok(t)
	closed := gitea.StateClosed
	call(api.EditIssue(o, r, i2.Index, gitea.EditIssueOption{State: &closed})).ok(t)
	rel := call(api.CreateRelease(o, r, gitea.CreateReleaseOption{TagName: "v1.0", Target: "main", Title: "One", Note: "notes"})).ok(t)
	asset := []byte("the asset's bytes\x00\x01\x02")
	call(api.CreateReleaseAttachment(o, r, rel.ID, bytes.NewReader(asset), "tool.bin")).ok(t)
	pr := call(api.CreatePullRequest(o, r, gitea.CreatePullRequestOption{Head: "feature", Base: "main", Title: "add a feature",
		Body: "please", Labels: []int64{bug.ID}, Milestone: v1.ID, Assignees: []string{"alice"}})).ok(t)
	call(capi.CreateIssueComment(o, r, pr.Index, gitea.CreateIssueCommentOption{Body: "looks good"})).ok(t)
	call(capi.PostIssueReaction(o, r, pr.Index, "rocket")).ok(t)
	call(capi.CreatePullReview(o, r, pr.Index, gitea.CreatePullReviewOptions{State: gitea.ReviewStateComment, Body: "a first look",
		Comments: []gitea.CreatePullReviewComment{{Path: "feature.txt", Body: "why this line?", NewLineNum: 1}}})).ok(t)
	call(capi.CreatePullReview(o, r, pr.Index, gitea.CreatePullReviewOptions{State: gitea.ReviewStateApproved, Body: "fine now"})).ok(t)
	fix := call(api.CreatePullRequest(o, r, gitea.CreatePullRequestOption{Head: "fix", Base: "main", Title: "a fix"})).ok(t)
	if ok := call(api.MergePullRequest(o, r, fix.Index, gitea.MergePullRequestOption{Style: gitea.MergeStyleMerge})).ok(t); !ok {
		t.Fatal("merge refused")
	}
	// An issue after the pull requests, so that numbers interleave.
	call(api.CreateIssue(o, r, gitea.CreateIssueOption{Title: "last", Body: "after the pulls"})).ok(t)
	return giteaSource{env: e, c: api, token: token, asset: asset}
}

func sameInstant(a, b time.Time) bool { return a.Equal(b) }

func sameInstantPtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// byIndex sorts issues or pull requests by number: both servers list
// those created within the same second in an order of their own.
func byIndex[T interface {
	*gitea.Issue | *gitea.PullRequest
}](xs []T) {
	sort.Slice(xs, func(i, j int) bool { return indexOf(xs[i]) < indexOf(xs[j]) })
}

func indexOf(x any) int64 {
	switch v := x.(type) {
	case *gitea.Issue:
		return v.Index
	case *gitea.PullRequest:
		return v.Index
	}
	return 0
}

func labelNames(ls []*gitea.Label) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return strings.Join(out, ",")
}

func milestoneTitle(m *gitea.Milestone) string {
	if m == nil {
		return ""
	}
	return m.Title
}

func download(t *testing.T, rawURL, token string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", rawURL, nil)
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("download %s: %d %s", rawURL, resp.StatusCode, b)
	}
	return b
}

// compareMigrated compares bob/copy on dst with alice/upstream field by
// field.
func compareMigrated(t *testing.T, src giteaSource, dst *gitea.Client, dstToken string, srcAliceID int64, bobName string) {
	t.Helper()
	sc := src.c
	const so, sr = "alice", "upstream"
	do, dr := bobName, "copy"
	// Labels.
	sl := call(sc.ListRepoLabels(so, sr, gitea.ListLabelsOptions{})).ok(t)
	dl := call(dst.ListRepoLabels(do, dr, gitea.ListLabelsOptions{})).ok(t)
	if len(sl) != 2 || len(dl) != len(sl) {
		t.Fatalf("labels: %d here, %d on the source", len(dl), len(sl))
	}
	for i := range sl {
		if sl[i].Name != dl[i].Name || sl[i].Color != dl[i].Color || sl[i].Description != dl[i].Description || sl[i].Exclusive != dl[i].Exclusive {
			t.Errorf("label %d: %+v, want %+v", i, dl[i], sl[i])
		}
	}
	// Milestones.
	sm := call(sc.ListRepoMilestones(so, sr, gitea.ListMilestoneOption{State: gitea.StateAll})).ok(t)
	dm := call(dst.ListRepoMilestones(do, dr, gitea.ListMilestoneOption{State: gitea.StateAll})).ok(t)
	if len(sm) != 2 || len(dm) != len(sm) {
		t.Fatalf("milestones: %d here, %d on the source", len(dm), len(sm))
	}
	for i := range sm {
		a, b := sm[i], dm[i]
		if a.Title != b.Title || a.Description != b.Description || a.State != b.State || a.OpenIssues != b.OpenIssues ||
			a.ClosedIssues != b.ClosedIssues || !sameInstantPtr(a.Deadline, b.Deadline) || !sameInstant(a.Created, b.Created) ||
			!sameInstantPtr(a.Closed, b.Closed) {
			t.Errorf("milestone %q: %+v, want %+v", a.Title, b, a)
		}
	}
	// Issues and their comments.
	si := call(sc.ListRepoIssues(so, sr, gitea.ListIssueOption{State: gitea.StateAll, Type: gitea.IssueTypeIssue})).ok(t)
	di := call(dst.ListRepoIssues(do, dr, gitea.ListIssueOption{State: gitea.StateAll, Type: gitea.IssueTypeIssue})).ok(t)
	byIndex(si)
	byIndex(di)
	if len(si) != 3 || len(di) != len(si) {
		t.Fatalf("issues: %d here, %d on the source", len(di), len(si))
	}
	for i := range si {
		a, b := si[i], di[i]
		if a.Index != b.Index || a.Title != b.Title || a.Body != b.Body || a.State != b.State || a.Comments != b.Comments ||
			labelNames(a.Labels) != labelNames(b.Labels) || milestoneTitle(a.Milestone) != milestoneTitle(b.Milestone) ||
			!sameInstant(a.Created, b.Created) || !sameInstant(a.Updated, b.Updated) || !sameInstantPtr(a.Closed, b.Closed) {
			t.Errorf("issue #%d: %+v\nwant %+v", a.Index, b, a)
		}
		if b.OriginalAuthor != a.Poster.UserName || b.OriginalAuthorID != a.Poster.ID || b.Poster.UserName != bobName {
			t.Errorf("issue #%d: poster %s, original author %q (%d); want %s, %q (%d)", a.Index, b.Poster.UserName,
				b.OriginalAuthor, b.OriginalAuthorID, bobName, a.Poster.UserName, a.Poster.ID)
		}
	}
	if si[len(si)-1].OriginalAuthorID != 0 || di[len(di)-1].OriginalAuthorID != srcAliceID {
		t.Errorf("alice's source id: %d", di[len(di)-1].OriginalAuthorID)
	}
	// Pull requests.
	sp := call(sc.ListRepoPullRequests(so, sr, gitea.ListPullRequestsOptions{State: gitea.StateAll})).ok(t)
	dp := call(dst.ListRepoPullRequests(do, dr, gitea.ListPullRequestsOptions{State: gitea.StateAll})).ok(t)
	byIndex(sp)
	byIndex(dp)
	if len(sp) != 2 || len(dp) != len(sp) {
		t.Fatalf("pull requests: %d here, %d on the source", len(dp), len(sp))
	}
	for i := range sp {
		a, b := sp[i], dp[i]
		if a.Index != b.Index || a.Title != b.Title || a.Body != b.Body || a.State != b.State || a.HasMerged != b.HasMerged ||
			a.Comments != b.Comments || labelNames(a.Labels) != labelNames(b.Labels) || milestoneTitle(a.Milestone) != milestoneTitle(b.Milestone) ||
			a.Head.Ref != b.Head.Ref || a.Head.Sha != b.Head.Sha || a.Base.Ref != b.Base.Ref ||
			!sameInstantPtr(a.Created, b.Created) || !sameInstantPtr(a.Merged, b.Merged) || !sameInstantPtr(a.Closed, b.Closed) ||
			fmt.Sprint(a.MergedCommitID) != fmt.Sprint(b.MergedCommitID) && (a.MergedCommitID == nil || b.MergedCommitID == nil || *a.MergedCommitID != *b.MergedCommitID) {
			t.Errorf("pull #%d: %+v\nwant %+v", a.Index, b, a)
		}
		if a.State == gitea.StateOpen && a.Mergeable != b.Mergeable {
			t.Errorf("pull #%d: mergeable %v, want %v", a.Index, b.Mergeable, a.Mergeable)
		}
	}
	// Comments, of issues and pull requests.
	numbers := []int64{}
	for _, is := range si {
		numbers = append(numbers, is.Index)
	}
	for _, pr := range sp {
		numbers = append(numbers, pr.Index)
	}
	for _, n := range numbers {
		sc := call(sc.ListIssueComments(so, sr, n, gitea.ListIssueCommentOptions{})).ok(t)
		dc := call(dst.ListIssueComments(do, dr, n, gitea.ListIssueCommentOptions{})).ok(t)
		if len(dc) != len(sc) {
			t.Fatalf("#%d: %d comments, want %d", n, len(dc), len(sc))
		}
		for i := range sc {
			a, b := sc[i], dc[i]
			if a.Body != b.Body || !sameInstant(a.Created, b.Created) || !sameInstant(a.Updated, b.Updated) ||
				b.OriginalAuthor != a.Poster.UserName || b.OriginalAuthorID != a.Poster.ID || b.Poster.UserName != bobName {
				t.Errorf("#%d comment %d: %+v\nwant %+v", n, i, b, a)
			}
		}
	}
	compareExtras(t, sc, dst, numbers, sp, bobName, false)
	// Releases and their files.
	sr2 := call(sc.ListReleases(so, sr, gitea.ListReleasesOptions{})).ok(t)
	dr2 := call(dst.ListReleases(do, dr, gitea.ListReleasesOptions{})).ok(t)
	if len(sr2) != 1 || len(dr2) != 1 {
		t.Fatalf("releases: %d here, %d on the source", len(dr2), len(sr2))
	}
	a, b := sr2[0], dr2[0]
	if a.TagName != b.TagName || a.Title != b.Title || a.Note != b.Note || a.Target != b.Target || a.IsDraft != b.IsDraft ||
		a.IsPrerelease != b.IsPrerelease || !sameInstant(a.CreatedAt, b.CreatedAt) || !sameInstant(a.PublishedAt, b.PublishedAt) ||
		len(b.Attachments) != 1 || b.Attachments[0].Name != a.Attachments[0].Name || b.Attachments[0].Size != a.Attachments[0].Size {
		t.Errorf("release: %+v\nwant %+v", b, a)
	}
	if got := download(t, b.Attachments[0].DownloadURL, dstToken); !bytes.Equal(got, src.asset) {
		t.Errorf("asset bytes %q, want %q", got, src.asset)
	}
}

// migratedAs is the name the copy shows for the source's user name: the
// same user when the source is this server (local), else the migrating
// user (poster) with the name kept as original author, or for a
// reaction "name(gitea)".
func migratedAs(name, poster string, local, reaction bool) string {
	switch {
	case local:
		return name
	case reaction:
		return name + "(gitea)"
	}
	return poster
}

func sdkUserNames(us []*gitea.User) string {
	var out []string
	for _, u := range us {
		out = append(out, u.UserName)
	}
	return strings.Join(out, ",")
}

func sameReactions(t *testing.T, what string, a, b []*gitea.Reaction, local bool) {
	t.Helper()
	if len(a) == 0 || len(b) != len(a) {
		t.Errorf("%s: %d reactions, want %d (and some)", what, len(b), len(a))
		return
	}
	key := func(r *gitea.Reaction, name string) string { return r.Reaction + " by " + name }
	var want, got []string
	for i := range a {
		want = append(want, key(a[i], migratedAs(a[i].User.UserName, "", local, true))+" at "+a[i].Created.UTC().String())
		got = append(got, key(b[i], b[i].User.UserName)+" at "+b[i].Created.UTC().String())
	}
	sort.Strings(want)
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: reactions %v, want %v", what, got, want)
	}
}

// compareExtras compares the reactions (of issues, pull requests and
// comments), assignees and pull-request reviews with their line
// comments of the issues and pull requests numbered.
func compareExtras(t *testing.T, sc, dst *gitea.Client, numbers []int64, pulls []*gitea.PullRequest, bobName string, local bool) {
	t.Helper()
	const so, sr = "alice", "upstream"
	do, dr := bobName, "copy"
	reacted, commentReacted, assigned, reviewed := 0, 0, 0, 0
	for _, n := range numbers {
		a := call(sc.GetIssue(so, sr, n)).ok(t)
		b := call(dst.GetIssue(do, dr, n)).ok(t)
		// Assignees: those with an account here (only when the source is
		// this server); the reference keeps none.
		want := ""
		if local {
			want = sdkUserNames(a.Assignees)
		}
		if got := sdkUserNames(b.Assignees); got != want {
			t.Errorf("#%d: assignees %q, want %q", n, got, want)
		}
		if len(a.Assignees) > 0 {
			assigned++
		}
		sra := call(sc.ListIssueReactions(so, sr, n, gitea.ListIssueReactionsOptions{})).ok(t)
		if len(sra) > 0 {
			reacted++
			sameReactions(t, fmt.Sprintf("#%d", n), sra, call(dst.ListIssueReactions(do, dr, n, gitea.ListIssueReactionsOptions{})).ok(t), local)
		}
		scs := call(sc.ListIssueComments(so, sr, n, gitea.ListIssueCommentOptions{})).ok(t)
		dcs := call(dst.ListIssueComments(do, dr, n, gitea.ListIssueCommentOptions{})).ok(t)
		for i := range scs {
			src := call(sc.GetIssueCommentReactions(so, sr, scs[i].ID)).ok(t)
			if len(src) > 0 {
				commentReacted++
				sameReactions(t, fmt.Sprintf("#%d comment %d", n, i), src, call(dst.GetIssueCommentReactions(do, dr, dcs[i].ID)).ok(t), local)
			}
		}
	}
	for _, pr := range pulls {
		srv := call(sc.ListPullReviews(so, sr, pr.Index, gitea.ListPullReviewsOptions{})).ok(t)
		drv := call(dst.ListPullReviews(do, dr, pr.Index, gitea.ListPullReviewsOptions{})).ok(t)
		if len(drv) != len(srv) {
			t.Fatalf("pull #%d: %d reviews, want %d", pr.Index, len(drv), len(srv))
		}
		for i := range srv {
			a, b := srv[i], drv[i]
			reviewed++
			if a.State != b.State || a.Body != b.Body || a.CommitID != b.CommitID || a.Official != b.Official ||
				a.Dismissed != b.Dismissed || a.Stale != b.Stale || a.CodeCommentsCount != b.CodeCommentsCount ||
				!sameInstant(a.Submitted, b.Submitted) || b.Reviewer.UserName != migratedAs(a.Reviewer.UserName, bobName, local, false) {
				t.Errorf("pull #%d review %d: %+v\nwant %+v", pr.Index, i, b, a)
			}
			sc := call(sc.ListPullReviewComments(so, sr, pr.Index, a.ID)).ok(t)
			dc := call(dst.ListPullReviewComments(do, dr, pr.Index, b.ID)).ok(t)
			if len(dc) != len(sc) {
				t.Fatalf("pull #%d review %d: %d line comments, want %d", pr.Index, i, len(dc), len(sc))
			}
			for j := range sc {
				x, y := sc[j], dc[j]
				if x.Body != y.Body || x.Path != y.Path || x.LineNum != y.LineNum || x.OldLineNum != y.OldLineNum ||
					x.CommitID != y.CommitID || x.OrigCommitID != y.OrigCommitID || x.DiffHunk != y.DiffHunk ||
					!sameInstant(x.Created, y.Created) || !sameInstant(x.Updated, y.Updated) || y.ReviewID != b.ID ||
					y.Reviewer.UserName != migratedAs(x.Reviewer.UserName, bobName, local, false) {
					t.Errorf("pull #%d review %d line comment %d: %+v\nwant %+v", pr.Index, i, j, y, x)
				}
			}
		}
	}
	if reacted < 2 || commentReacted < 1 || assigned < 2 || reviewed < 2 {
		t.Errorf("the source has %d reacted issues, %d reacted comments, %d assigned, %d reviews: the seed changed", reacted, commentReacted, assigned, reviewed)
	}
}

// TestRepoMigrateGitea migrates a repository from a second server (this
// server, seeded through its API) with service gitea, through the SDK's
// MigrateRepo as the SDK's own migration test calls it, and compares both
// sides field by field; the repository's counters are exact and new
// issues continue the numbers; a second run of the migration's job
// changes nothing.
func TestRepoMigrateGitea(t *testing.T) {
	t.Parallel()
	srcEnv := apitest.New(t)
	src := seedGiteaSource(t, srcEnv)
	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	btok := dst.Token(bob)
	dc := sdkClient(t, dst, gitea.SetToken(btok))
	r := call(dc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: gitURL(srcEnv, "", "", "alice", "upstream"), RepoName: "copy",
		Service: gitea.GitServiceGitea, AuthToken: src.token, Issues: true, Labels: true, Milestones: true, Releases: true,
		PullRequests: true, Description: "moved in"})).ok(t)
	if r.Name != "copy" || r.Owner.UserName != "bob" {
		t.Fatalf("answer: %+v", r)
	}
	cred := apitest.TokenCred(btok)
	// Requests wait for the consumers (the migration's job) to settle.
	var got models.Repository
	dst.Do("GET", "repos/bob/copy", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	alice := call(src.c.GetMyUserInfo()).ok(t)
	compareMigrated(t, src, dc, btok, alice.ID, "bob")
	// Branches, tags and the pull requests' refs.
	if g, w := branchTips(t, dst, cred, "bob", "copy"), branchTips(t, srcEnv, apitest.TokenCred(src.token), "alice", "upstream"); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("branches %v, want %v", g, w)
	}
	sr := call(src.c.GetRepo("alice", "upstream")).ok(t)
	dr := call(dc.GetRepo("bob", "copy")).ok(t)
	if sr.OpenIssues != dr.OpenIssues || sr.OpenPulls != dr.OpenPulls || dr.OpenIssues != 2 || dr.OpenPulls != 1 {
		t.Fatalf("counters: %d open issues, %d open pulls; source %d, %d", dr.OpenIssues, dr.OpenPulls, sr.OpenIssues, sr.OpenPulls)
	}
	if dr.Empty || dr.DefaultBranch != "main" {
		t.Fatalf("repository %+v", dr)
	}
	// Every stored counter agrees with the rows it counts.
	bad, err := dst.DB.Issues().CheckCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range bad {
		if n != 0 {
			t.Errorf("counter %s: %d rows disagree", name, n)
		}
	}
	// New issues follow the highest number brought in.
	next := call(dc.CreateIssue("bob", "copy", gitea.CreateIssueOption{Title: "new here"})).ok(t)
	if next.Index != 6 || next.OriginalAuthor != "" {
		t.Fatalf("new issue #%d (original author %q), want #6", next.Index, next.OriginalAuthor)
	}
	// The migration's job delivered again finds nothing to do.
	h := repo.Service{Deps: dst.Deps}.MigrateConsumer().Handle
	if err := h(context.Background(), events.Event{Kind: events.RepoMigrateRequested, RepoID: dr.ID}); err != nil {
		t.Fatal(err)
	}
	di := call(dc.ListRepoIssues("bob", "copy", gitea.ListIssueOption{State: gitea.StateAll})).ok(t)
	if len(di) != 6 {
		t.Fatalf("%d issues and pulls after a second run, want 6", len(di))
	}
	// Nothing was delivered per item: the target had no webhooks, and no
	// notification reached anyone for the imported issues.
	var ns []*models.NotificationThread
	dst.Do("GET", "notifications?all=true", nil, cred).Expect(t, http.StatusOK).JSON(t, &ns)
	if len(ns) != 0 {
		t.Fatalf("%d notifications after the migration", len(ns))
	}
}

// TestRepoMigrateGiteaFailure: a source that answers 500 on the reviews
// of its pull requests (the last items read, after every issue, comment
// and reaction) fails the migration in the background; it leaves no repository and no
// file behind, and asked again from a healthy source it succeeds. Asking
// for the wiki is refused; plain git ignores the items, as the reference
// does.
func TestRepoMigrateGiteaFailure(t *testing.T) {
	t.Parallel()
	srcEnv := apitest.New(t)
	src := seedGiteaSource(t, srcEnv)
	target, _ := url.Parse(srcEnv.Server.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/repos/alice/upstream/pulls/") && strings.HasSuffix(r.URL.Path, "/reviews") {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer broken.Close()
	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	btok := dst.Token(bob)
	cred := apitest.TokenCred(btok)
	body := func(addr string) map[string]any {
		return map[string]any{"clone_addr": addr, "repo_name": "copy", "service": "gitea", "auth_token": src.token,
			"issues": true, "labels": true, "milestones": true, "releases": true, "pull_requests": true}
	}
	dst.Do("POST", "repos/migrate", body(broken.URL+"/alice/upstream.git"), cred).Expect(t, http.StatusCreated)
	waitFor(t, func() bool { return dst.Do("GET", "repos/bob/copy", nil, cred).Status == http.StatusNotFound })
	// Its release files went with it.
	if files := apitest.Keys(t, dst.Deps.Objects.Attachments, ""); len(files) != 0 {
		t.Fatalf("attachment files left: %v", files)
	}
	// Retried from the source itself.
	dst.Do("POST", "repos/migrate", body(gitURL(srcEnv, "", "", "alice", "upstream")), cred).Expect(t, http.StatusCreated)
	dst.Do("GET", "repos/bob/copy", nil, cred).Expect(t, http.StatusOK)
	alice := call(src.c.GetMyUserInfo()).ok(t)
	compareMigrated(t, src, sdkClient(t, dst, gitea.SetToken(btok)), btok, alice.ID, "bob")

	// A wiki is refused; plain git brings the git data only.
	w := body(gitURL(srcEnv, "", "", "alice", "upstream"))
	w["repo_name"], w["wiki"] = "wiki", true
	dst.Do("POST", "repos/migrate", w, cred).Expect(t, http.StatusUnprocessableEntity)
	g := body(gitURL(srcEnv, "", "", "alice", "upstream"))
	g["repo_name"], g["service"] = "plain", "git"
	dst.Do("POST", "repos/migrate", g, cred).Expect(t, http.StatusCreated)
	var issues []*models.Issue
	dst.Do("GET", "repos/bob/plain/issues?state=all", nil, cred).Expect(t, http.StatusOK).JSON(t, &issues)
	if len(issues) != 0 || len(branchTips(t, dst, cred, "bob", "plain")) != 3 {
		t.Fatalf("plain git: %d issues", len(issues))
	}
	o := body(gitURL(srcEnv, "", "", "alice", "upstream"))
	o["repo_name"], o["service"] = "other", "github"
	dst.Do("POST", "repos/migrate", o, cred).Expect(t, http.StatusUnprocessableEntity)
}

// TestRepoMigrateGiteaAfterCrash: a migration's job that finds the refs
// of an earlier run already in the repository (moved before a crash
// kept that run from recording them and the rows) records them with the
// rows once, and two runs of the job at once write it once: nothing is
// duplicated, the repository is complete.
func TestRepoMigrateGiteaAfterCrash(t *testing.T) {
	t.Parallel()
	srcEnv := apitest.New(t)
	src := seedGiteaSource(t, srcEnv)
	target, _ := url.Parse(srcEnv.Server.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	reached, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	held := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/repos/alice/upstream/labels") {
			once.Do(func() { close(reached) })
			<-resume
		}
		r.Header.Del("Accept-Encoding")
		proxy.ServeHTTP(w, r)
	}))
	// The source's answers name the proxy, as a server behind it would.
	heldURL := "http://" + held.Listener.Addr().String() + "/"
	proxy.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body.Close()
		b = bytes.ReplaceAll(b, []byte(srcEnv.URL), []byte(heldURL))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", fmt.Sprint(len(b)))
		return nil
	}
	held.Start()
	defer held.Close()
	dst := migrationTarget(t)
	bob := dst.CreateUser("bob", false)
	btok := dst.Token(bob)
	cred := apitest.TokenCred(btok)
	var made models.Repository
	dst.Do("POST", "repos/migrate", map[string]any{"clone_addr": held.URL + "/alice/upstream.git", "repo_name": "copy",
		"service": "gitea", "auth_token": src.token, "issues": true, "labels": true, "milestones": true, "releases": true,
		"pull_requests": true}, cred).Expect(t, http.StatusCreated).JSON(t, &made)
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the migration did not start")
	}
	// A second run of the same job at once, as a worker that took over a
	// lost lease would run it: one of the two records the migration.
	second := make(chan error, 1)
	go func() {
		h := repo.Service{Deps: dst.Deps}.MigrateConsumer().Handle
		second <- h(context.Background(), events.Event{Kind: events.RepoMigrateRequested, RepoID: made.ID})
	}()
	// What an earlier run left: every ref moved, nothing recorded.
	dir, err := dst.Deps.Git.Path("bob", "copy")
	if err != nil {
		t.Fatal(err)
	}
	g := newGitCLI(t)
	g.must(dir, "--git-dir="+dir, "fetch", "-q", gitURL(srcEnv, "", "", "alice", "upstream"),
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+refs/pull/*:refs/pull/*")
	close(resume)
	if err := <-second; err != nil {
		t.Fatalf("second run: %v", err)
	}
	dst.Do("GET", "repos/bob/copy", nil, cred).Expect(t, http.StatusOK)
	alice := call(src.c.GetMyUserInfo()).ok(t)
	dc := sdkClient(t, dst, gitea.SetToken(btok))
	compareMigrated(t, src, dc, btok, alice.ID, "bob")
	dr := call(dc.GetRepo("bob", "copy")).ok(t)
	if dr.Empty || dr.DefaultBranch != "main" || dr.OpenIssues != 2 || dr.OpenPulls != 1 {
		t.Fatalf("repository after the second run: %+v", dr)
	}
	if g, w := branchTips(t, dst, cred, "bob", "copy"), branchTips(t, srcEnv, apitest.TokenCred(src.token), "alice", "upstream"); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("branches %v, want %v", g, w)
	}
}

// TestRepoMigrateGiteaGuard: the SDK's calls are dialled through the
// migrations' connect guard: a source whose API redirects to a blocked
// address fails the migration (and leaves no repository), where a target
// that does not block that address follows the same redirect and
// succeeds.
func TestRepoMigrateGiteaGuard(t *testing.T) {
	t.Parallel()
	srcEnv := apitest.New(t)
	src := seedGiteaSource(t, srcEnv)
	target, _ := url.Parse(srcEnv.Server.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	// The source's API, also at 127.0.0.2.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	other := httptest.NewUnstartedServer(proxy)
	other.Listener.Close()
	other.Listener = ln
	other.Start()
	defer other.Close()
	// The address migrated from serves git itself and sends API calls to
	// 127.0.0.2.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	body := map[string]any{"clone_addr": front.URL + "/alice/upstream.git", "repo_name": "copy", "service": "gitea",
		"auth_token": src.token, "issues": true, "labels": true}
	blocking := apitest.NewWithConfig(t, func(c *app.Config) {
		c.Migrations.AllowLocalNetworks = true
		c.Migrations.BlockedDomains = "127.0.0.2/32"
	})
	bob := blocking.CreateUser("bob", false)
	cred := apitest.TokenCred(blocking.Token(bob))
	blocking.Do("POST", "repos/migrate", body, cred).Expect(t, http.StatusCreated)
	waitFor(t, func() bool { return blocking.Do("GET", "repos/bob/copy", nil, cred).Status == http.StatusNotFound })

	open := migrationTarget(t)
	bob = open.CreateUser("bob", false)
	cred = apitest.TokenCred(open.Token(bob))
	open.Do("POST", "repos/migrate", body, cred).Expect(t, http.StatusCreated)
	var issues []*models.Issue
	open.Do("GET", "repos/bob/copy/issues?state=all&type=issues", nil, cred).Expect(t, http.StatusOK).JSON(t, &issues)
	if len(issues) != 3 {
		t.Fatalf("%d issues through the redirect, want 3", len(issues))
	}
}

// TestRepoMigrateGiteaSameServer: migrated from this very server, the
// authors are the local users whose id and name match, as the reference
// maps them, with no original author recorded.
func TestRepoMigrateGiteaSameServer(t *testing.T) {
	t.Parallel()
	e := migrationTarget(t)
	src := seedGiteaSource(t, e)
	bob := e.CreateUser("bob", false)
	btok := e.Token(bob)
	dc := sdkClient(t, e, gitea.SetToken(btok))
	call(dc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: gitURL(e, "", "", "alice", "upstream"), RepoName: "copy",
		Service: gitea.GitServiceGitea, AuthToken: src.token, Issues: true, PullRequests: true})).ok(t)
	e.Do("GET", "repos/bob/copy", nil, apitest.TokenCred(btok)).Expect(t, http.StatusOK)
	si := call(src.c.ListRepoIssues("alice", "upstream", gitea.ListIssueOption{State: gitea.StateAll})).ok(t)
	di := call(dc.ListRepoIssues("bob", "copy", gitea.ListIssueOption{State: gitea.StateAll})).ok(t)
	byIndex(si)
	byIndex(di)
	if len(si) != 5 || len(di) != len(si) {
		t.Fatalf("%d issues and pulls, want %d", len(di), len(si))
	}
	for i := range si {
		if di[i].Index != si[i].Index || di[i].Poster.UserName != si[i].Poster.UserName || di[i].OriginalAuthor != "" ||
			di[i].OriginalAuthorID != 0 {
			t.Errorf("#%d: poster %s, original author %q; want %s and none", si[i].Index, di[i].Poster.UserName,
				di[i].OriginalAuthor, si[i].Poster.UserName)
		}
	}
	cs := call(dc.ListIssueComments("bob", "copy", 1, gitea.ListIssueCommentOptions{})).ok(t)
	if len(cs) != 2 || cs[0].Poster.UserName != "carol" || cs[0].OriginalAuthor != "" {
		t.Fatalf("comments %+v", cs)
	}
	// Reactions, assignees and reviews are the same users'.
	var numbers []int64
	for _, is := range si {
		numbers = append(numbers, is.Index)
	}
	sp := call(src.c.ListRepoPullRequests("alice", "upstream", gitea.ListPullRequestsOptions{State: gitea.StateAll})).ok(t)
	compareExtras(t, src.c, dc, numbers, sp, "bob", true)
}
