// Package statuses keeps the states CI systems report for commits: it
// records them (announcing each as events.StatusCreated, which the status
// webhook and the merges scheduled for when checks succeed react to),
// lists them, and combines them, for the API and for the merge gate of
// branch protection (RequiredState), which decide by the same rules.
package statuses

import (
	"context"
	"strings"

	"github.com/gobwas/glob"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/store"
)

// The states a status may have, as in the reference.
const (
	Pending = "pending"
	Success = "success"
	Error   = "error"
	Failure = "failure"
	Warning = "warning"
	Skipped = "skipped"
)

// Service records and reads commit statuses.
type Service struct {
	*app.Deps
}

// Input is a status to record.
type Input struct {
	State, TargetURL, Description, Context string
}

// Create records in for commit sha (a full id) of repository r, reported
// by creatorID, and announces it in the same transaction.
func (s Service) Create(ctx context.Context, r *store.Repository, creatorID int64, sha string, in Input) (*store.CommitStatus, error) {
	switch in.State {
	case Pending, Success, Error, Failure, Warning, Skipped:
	case "":
		return nil, apierr.Validation("[State]: Required")
	default:
		return nil, apierr.Validation("invalid state %q", in.State)
	}
	now := s.Clock.Now()
	// The reference trims what it stores; the context is the key that
	// later reports of the same check supersede.
	st := &store.CommitStatus{RepoID: r.ID, SHA: sha, State: in.State,
		TargetURL: strings.TrimSpace(in.TargetURL), Description: strings.TrimSpace(in.Description),
		Context: strings.TrimSpace(in.Context), CreatorID: creatorID, CreatedAt: now, UpdatedAt: now}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Statuses().Create(ctx, st); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.StatusCreated, r.ID, creatorID,
			events.Status{ID: st.ID, SHA: sha, Context: st.Context, State: st.State})
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Combine is the combined state of the newest status of each context, as
// the reference reports it: failure when any is an error, a failure or a
// warning; success when all succeeded (or were skipped); pending
// otherwise, and when there are none.
func Combine(latest []*store.CommitStatus) string {
	ok := 0
	for _, st := range latest {
		switch st.State {
		case Error, Failure, Warning:
			return Failure
		case Success, Skipped:
			ok++
		}
	}
	if ok > 0 && ok == len(latest) {
		return Success
	}
	return Pending
}

// rank orders states from worst to best, for the state of a required
// context that several statuses match.
var rank = map[string]int{Error: 0, Failure: 1, Warning: 2, Pending: 3, Success: 4, Skipped: 5}

// RequiredState is the state a merge gate sees on a commit whose newest
// statuses per context are latest, for the required context patterns
// (globs in which "*" crosses "/", as the reference compiles them): the
// worst state of the contexts the patterns match, pending while some
// pattern matches none; with no pattern (or none that matches a status),
// the combined state of every context.
func RequiredState(latest []*store.CommitStatus, required []string) string {
	matched := 0
	state := Success
	for _, pat := range required {
		g, err := glob.Compile(pat)
		if err != nil {
			continue // the reference skips a pattern it cannot compile
		}
		found := ""
		for _, st := range latest {
			if g.Match(st.Context) {
				found = st.State
				matched++
				break
			}
		}
		if found == "" {
			return Pending
		}
		if rank[found] < rank[state] {
			state = found
		}
	}
	if matched == 0 {
		return Combine(latest)
	}
	return state
}

// Latest is the newest status of each context of commit sha of repoID,
// every one of them (a commit has few contexts; the merge gate needs all).
func (s Service) Latest(ctx context.Context, repoID int64, sha string) ([]*store.CommitStatus, error) {
	const most = 1000
	list, _, err := s.Store.Statuses().Latest(ctx, repoID, sha, store.Page{Limit: most})
	return list, err
}

// ChecksPass tells whether the statuses of head, a commit of repository
// repoID, satisfy a protection rule's status check (true when the rule
// does not check statuses).
func (s Service) ChecksPass(ctx context.Context, repoID int64, head string, rule *store.ProtectedBranch) (bool, error) {
	if rule == nil || !rule.EnableStatusCheck {
		return true, nil
	}
	latest, err := s.Latest(ctx, repoID, head)
	if err != nil {
		return false, err
	}
	return RequiredState(latest, rule.StatusCheckContexts) == Success, nil
}
