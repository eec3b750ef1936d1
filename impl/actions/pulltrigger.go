package actions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/events"
	"repohost/store"
	"repohost/store/gitstore"
)

// pullActivity is the activity type a pull request event stands for in a
// workflow's on.pull_request.types.
var pullActivity = map[events.Kind]string{
	events.PullOpened:       "opened",
	events.PullReopened:     "reopened",
	events.PullSynchronized: "synchronize",
}

// defaultPullTypes are the activities a pull_request trigger without types
// reacts to, as in the reference.
var defaultPullTypes = []string{"opened", "synchronize", "reopened"}

// pullRefIndex is the pull request number of a refs/pull/N/head ref.
func pullRefIndex(ref string) (int64, bool) {
	rest, ok := strings.CutPrefix(ref, "refs/pull/")
	if !ok {
		return 0, false
	}
	n, ok := strings.CutSuffix(rest, "/head")
	if !ok {
		return 0, false
	}
	index, err := strconv.ParseInt(n, 10, 64)
	return index, err == nil && index > 0
}

// onPull starts the pull_request workflows of the pull request's head
// commit, read in the base repository (refs/pull/N/head keeps the head's
// objects there, even for a fork). The run is on refs/pull/N/head at the
// head commit, as in the reference.
func (s Service) onPull(ctx context.Context, actorID, repoID int64, activity string, is events.Issue) ([]plannedRun, error) {
	repo, err := s.Store.Repos().FindByID(ctx, repoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !repo.HasActions || repo.IsArchived {
		return nil, nil
	}
	pr, err := s.Store.Pulls().FindByIssueID(ctx, is.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if pr.HasMerged {
		return nil, nil
	}
	g, err := s.Git.OpenGit(repo.Owner.Name, repo.Name)
	if err != nil {
		return nil, err
	}
	ref := fmt.Sprintf("refs/pull/%d/head", is.Index)
	// A synchronized event names the commit the head moved to: the ref
	// may have moved on again by now, and that move has its own event.
	head := plumbing.NewHash(is.HeadSHA)
	if is.HeadSHA == "" {
		if head, err = g.RefHash(plumbing.ReferenceName(ref)); err != nil {
			return nil, err
		}
	}
	if head.IsZero() {
		// The opened event commits with the pull request, and its ref is
		// written just after (no git I/O in that transaction), so the
		// event comes first. The stored head is the same commit, and its
		// objects are here already: pulls.Service.Create fetches a fork's
		// head commit into the base repository before the transaction
		// that stores the pull request and emits the event.
		head = plumbing.NewHash(pr.HeadCommitID)
	}
	commit, err := g.Peel(head)
	if errors.Is(err, store.ErrNotFound) {
		s.Log.Info("actions: pull request head not in the base repository yet", "repo_id", repo.ID, "index", is.Index)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	files, err := readWorkflows(g, commit)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	var changed []string
	changedRead := false
	changedFiles := func() ([]string, error) {
		if !changedRead {
			// The pull request's files are those changed since the
			// merge base, not since the previous head.
			u := &gitstore.RefUpdate{Name: plumbing.ReferenceName(ref), Old: plumbing.NewHash(pr.MergeBase), New: head}
			if pr.MergeBase == "" {
				u.Old = plumbing.ZeroHash
			}
			var err error
			if changed, err = g.ChangedFiles(u); err != nil {
				return nil, err
			}
			changedRead = true
		}
		return changed, nil
	}
	title, _, _ := strings.Cut(strings.TrimSpace(commit.Message), "\n")
	var planned []plannedRun
	for _, f := range files {
		w, err := parseWorkflow(f.content)
		if err != nil {
			s.Log.Info("actions: workflow not run", "repo_id", repo.ID, "file", f.name, "err", err)
			continue
		}
		ok, err := w.pullTriggers(activity, pr.BaseBranch, changedFiles)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		run := &store.ActionRun{RepoID: repo.ID, OwnerID: repo.OwnerID, WorkflowID: f.name, Title: title,
			TriggerUserID: actorID, Ref: ref, CommitSHA: head.String(), Event: "pull_request"}
		if p, ok := s.plan(run, w); ok {
			planned = append(planned, p)
		}
	}
	return planned, nil
}

// pullInfo is what a pull_request run's task carries of its pull request.
type pullInfo struct {
	payload          map[string]any
	headRef, baseRef string
	// fromFork is a pull request whose head is another repository.
	fromFork bool
}

// pullEvent is the event payload and the head and base branch names a
// pull_request run's task carries, read from the pull request as it is
// when the task is handed out. ok is false when the pull request is gone.
func (s Service) pullEvent(ctx context.Context, repo *store.Repository, run *store.ActionRun) (info pullInfo, ok bool, err error) {
	index, isPull := pullRefIndex(run.Ref)
	if !isPull {
		return pullInfo{}, false, nil
	}
	is, err := s.Store.Issues().FindByIndex(ctx, repo.ID, index)
	if errors.Is(err, store.ErrNotFound) {
		return pullInfo{}, false, nil
	}
	if err != nil {
		return pullInfo{}, false, err
	}
	pr, err := s.Store.Pulls().FindByIssueID(ctx, is.ID)
	if errors.Is(err, store.ErrNotFound) {
		return pullInfo{}, false, nil
	}
	if err != nil {
		return pullInfo{}, false, err
	}
	headRepo := repo
	if pr.HeadRepoID != repo.ID {
		if headRepo, err = s.Store.Repos().FindByID(ctx, pr.HeadRepoID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return pullInfo{}, false, err
		}
	}
	branch := func(name, sha string, r *store.Repository) map[string]any {
		b := map[string]any{"ref": name, "label": name, "sha": sha}
		if r != nil {
			b["repo_id"] = r.ID
			b["repo"] = map[string]any{"id": r.ID, "name": r.Name, "full_name": r.Owner.Name + "/" + r.Name}
			if r.ID != repo.ID {
				b["label"] = r.Owner.Name + ":" + name
			}
		}
		return b
	}
	state := "open"
	if is.IsClosed {
		state = "closed"
	}
	payload := map[string]any{
		"number": index,
		"pull_request": map[string]any{
			"id": pr.ID, "number": index, "title": is.Title, "state": state,
			"head":   branch(pr.HeadBranch, run.CommitSHA, headRepo),
			"base":   branch(pr.BaseBranch, pr.BaseCommitID, repo),
			"merged": pr.HasMerged,
		},
	}
	return pullInfo{payload: payload, headRef: pr.HeadBranch, baseRef: pr.BaseBranch, fromFork: pr.HeadRepoID != repo.ID}, true, nil
}
