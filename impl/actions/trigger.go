package actions

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/apierr"
	"repohost/impl/events"
	"repohost/store"
	"repohost/store/gitstore"
)

// workflowDirs are where workflow files live; the first that has any wins,
// as in the reference.
var workflowDirs = []string{".gitea/workflows", ".github/workflows"}

// Consumer starts the workflows a committed ref change triggers: pushes
// to branches and tags, over HTTP, SSH or any other path that moves refs,
// and pull requests opened, reopened or synchronized. It also forgets the
// runs and runners of deleted repositories and owners. The runs one event
// starts are stored in one transaction with the end of its job, so an
// event retried after a crash starts each of them once.
func (s Service) Consumer() events.Consumer {
	return events.Consumer{Name: "actions", Ordered: true, Workers: 2,
		Kinds: []events.Kind{events.RefsChanged, events.PullOpened, events.PullReopened, events.PullSynchronized,
			events.RepoDeleted, events.UserDeleted, events.OrgDeleted},
		Handle: s.handleEvent}
}

// plannedRun is a run an event triggers, with its jobs, not stored yet.
type plannedRun struct {
	run  *store.ActionRun
	jobs []*store.ActionRunJob
}

func (s Service) handleEvent(ctx context.Context, e events.Event) error {
	var planned []plannedRun
	var err error
	switch e.Kind {
	case events.RefsChanged:
		if refs, ok := e.Payload.(events.Refs); ok {
			planned, err = s.onPush(ctx, e.ActorID, refs)
		}
	case events.PullOpened, events.PullReopened, events.PullSynchronized:
		if is, ok := e.Payload.(events.Issue); ok {
			planned, err = s.onPull(ctx, e.ActorID, e.RepoID, pullActivity[e.Kind], is)
		}
	case events.RepoDeleted:
		return s.Store.Actions().DeleteRepo(ctx, e.RepoID)
	case events.UserDeleted, events.OrgDeleted:
		if owner, ok := e.Payload.(events.Named); ok {
			return s.Store.Actions().DeleteOwner(ctx, owner.ID)
		}
	}
	if err != nil || len(planned) == 0 {
		return err
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		for _, p := range planned {
			if err := s.storeRun(ctx, p.run, p.jobs); err != nil {
				return err
			}
		}
		return events.Complete(ctx)
	})
}

// plan expands w into run's jobs, or logs why the workflow does not run.
func (s Service) plan(run *store.ActionRun, w *workflow) (plannedRun, bool) {
	jobs, err := s.expandRun(run, w)
	if err != nil {
		s.Log.Info("actions: workflow not run", "repo_id", run.RepoID, "file", run.WorkflowID, "err", err)
		return plannedRun{}, false
	}
	return plannedRun{run: run, jobs: jobs}, true
}

func (s Service) onPush(ctx context.Context, actorID int64, refs events.Refs) ([]plannedRun, error) {
	repo, err := s.Store.Repos().FindByID(ctx, refs.Repo.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !repo.HasActions || repo.IsArchived {
		return nil, nil
	}
	var planned []plannedRun
	var g *gitstore.GitRepo
	for _, c := range refs.Changes {
		if c.New == "" || strings.Trim(c.New, "0") == "" {
			continue // a deletion triggers nothing
		}
		if !strings.HasPrefix(c.Name, "refs/heads/") && !strings.HasPrefix(c.Name, "refs/tags/") {
			continue
		}
		if g == nil {
			if g, err = s.Git.OpenGit(repo.Owner.Name, repo.Name); err != nil {
				return nil, err
			}
		}
		runs, err := s.triggerPush(repo, g, actorID, c)
		if err != nil {
			return nil, err
		}
		planned = append(planned, runs...)
	}
	return planned, nil
}

// workflowFile is one workflow file read at a commit.
type workflowFile struct {
	name    string
	content []byte
}

// readWorkflows reads the workflow files of commit c.
func readWorkflows(g *gitstore.GitRepo, c *object.Commit) ([]workflowFile, error) {
	for _, dir := range workflowDirs {
		entries, err := g.ReadDir(c, dir)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var out []workflowFile
		for _, e := range entries {
			ext := path.Ext(e.Name)
			if e.Type != gitstore.EntryFile || (ext != ".yml" && ext != ".yaml") {
				continue
			}
			b, err := g.ReadBlob(e.Hash)
			if err != nil {
				return nil, err
			}
			out = append(out, workflowFile{name: e.Name, content: b})
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

func (s Service) triggerPush(repo *store.Repository, g *gitstore.GitRepo, actorID int64, c events.RefChange) ([]plannedRun, error) {
	commit, err := g.Peel(plumbing.NewHash(c.New))
	if err != nil {
		return nil, err
	}
	files, err := readWorkflows(g, commit)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	var planned []plannedRun
	var changed []string
	changedRead := false
	changedFiles := func() ([]string, error) {
		if !changedRead {
			u := &gitstore.RefUpdate{Name: plumbing.ReferenceName(c.Name), Old: plumbing.NewHash(c.Old), New: plumbing.NewHash(c.New)}
			if c.Old == "" {
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
	for _, f := range files {
		w, err := parseWorkflow(f.content)
		if err != nil {
			s.Log.Info("actions: workflow not run", "repo_id", repo.ID, "file", f.name, "err", err)
			continue
		}
		ok, err := w.pushTriggers(c.Name, changedFiles)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		run := &store.ActionRun{RepoID: repo.ID, OwnerID: repo.OwnerID, WorkflowID: f.name, Title: title,
			TriggerUserID: actorID, Ref: c.Name, CommitSHA: commit.Hash.String(), Event: "push"}
		if p, ok := s.plan(run, w); ok {
			planned = append(planned, p)
		}
	}
	return planned, nil
}

// CreateRun stores a run of w with its jobs: those without needs wait for
// a runner at once, the others are blocked until their needs finish.
func (s Service) CreateRun(ctx context.Context, run *store.ActionRun, w *workflow) error {
	jobs, err := s.expandRun(run, w)
	if err != nil {
		return err
	}
	return s.storeRun(ctx, run, jobs)
}

// expandRun makes the jobs of a run of w and sets the run's status and
// times.
func (s Service) expandRun(run *store.ActionRun, w *workflow) ([]*store.ActionRunJob, error) {
	expanded, err := w.expand()
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	jobs := make([]*store.ActionRunJob, len(expanded))
	for i, e := range expanded {
		status := store.ActionWaiting
		if len(e.Needs) > 0 {
			status = store.ActionBlocked
		}
		jobs[i] = &store.ActionRunJob{RepoID: run.RepoID, OwnerID: run.OwnerID, CommitSHA: run.CommitSHA, Name: e.Name,
			JobID: e.JobID, Needs: e.Needs, RunsOn: e.RunsOn, WorkflowPayload: e.Payload, Status: status, CreatedAt: now, UpdatedAt: now}
	}
	run.Status = aggregate(jobs)
	run.CreatedAt, run.UpdatedAt = now, now
	return jobs, nil
}

// storeRun stores run with its jobs and announces them.
func (s Service) storeRun(ctx context.Context, run *store.ActionRun, jobs []*store.ActionRunJob) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Actions().CreateRun(ctx, run, jobs); err != nil {
			return err
		}
		if err := s.emitRun(ctx, events.ActionsRunCreated, run); err != nil {
			return err
		}
		// Each job's first status (queued, or waiting on its needs) is
		// news too, as the reference announces it after the run's.
		for _, j := range jobs {
			if err := s.emitJob(ctx, j, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// Dispatch starts workflowID (a workflow file's name) at ref (a branch or
// tag, short or full) by hand, when the workflow has on:
// workflow_dispatch; inputs the workflow declares with a default and the
// caller left out get their default, required ones must be given.
func (s Service) Dispatch(ctx context.Context, repo *store.Repository, doer *store.User, workflowID, ref string, inputs map[string]string) (*store.ActionRun, error) {
	g, err := s.Git.OpenGit(repo.Owner.Name, repo.Name)
	if err != nil {
		return nil, err
	}
	name := ref
	for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
		name = strings.TrimPrefix(name, prefix)
	}
	resolved, err := g.Resolve(name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && resolved.Kind == gitstore.RefCommit) {
		return nil, apierr.NotFound("ref %s not found", ref)
	}
	if err != nil {
		return nil, err
	}
	fullRef := "refs/heads/" + resolved.Name
	if resolved.Kind == gitstore.RefTag || strings.HasPrefix(ref, "refs/tags/") {
		fullRef = "refs/tags/" + resolved.Name
	}
	files, err := readWorkflows(g, resolved.Commit)
	if err != nil {
		return nil, err
	}
	var w *workflow
	for _, f := range files {
		if f.name != workflowID {
			continue
		}
		if w, err = parseWorkflow(f.content); err != nil {
			return nil, apierr.Validation("workflow %s: %v", workflowID, err)
		}
	}
	if w == nil {
		return nil, apierr.NotFound("workflow %s not found", workflowID)
	}
	if !w.dispatchable() {
		return nil, apierr.Validation("workflow %s does not run on workflow_dispatch", workflowID)
	}
	given, err := w.dispatchInputs(inputs)
	if err != nil {
		return nil, err
	}
	title, _, _ := strings.Cut(strings.TrimSpace(resolved.Commit.Message), "\n")
	run := &store.ActionRun{RepoID: repo.ID, OwnerID: repo.OwnerID, WorkflowID: workflowID, Title: title,
		TriggerUserID: doer.ID, Ref: fullRef, CommitSHA: resolved.Commit.Hash.String(), Event: "workflow_dispatch", Inputs: given}
	if err := s.CreateRun(ctx, run, w); err != nil {
		return nil, err
	}
	return run, nil
}

// WorkflowFile locates run's workflow file in the run's commit: its path
// under the first workflow folder holding it, and the commit's author time
// (the reference dates a workflow by a commit, not by the file's history).
// ok is false when the commit or the file is gone.
func (s Service) WorkflowFile(repo *store.Repository, run *store.ActionRun) (filePath string, when time.Time, ok bool, err error) {
	g, err := s.Git.OpenGit(repo.Owner.Name, repo.Name)
	if err != nil {
		return "", time.Time{}, false, err
	}
	commit, err := g.Peel(plumbing.NewHash(run.CommitSHA))
	if errors.Is(err, store.ErrNotFound) {
		return "", time.Time{}, false, nil
	} else if err != nil {
		return "", time.Time{}, false, err
	}
	for _, dir := range workflowDirs {
		entries, err := g.ReadDir(commit, dir)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return "", time.Time{}, false, err
		}
		for _, e := range entries {
			if e.Name == run.WorkflowID && e.Type == gitstore.EntryFile {
				return path.Join(dir, e.Name), commit.Author.When, true, nil
			}
		}
	}
	return "", time.Time{}, false, nil
}
