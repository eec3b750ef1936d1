package contents

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/names"
	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
)

// Service is the only place the contents API writes: each write is one
// commit, published through impl/refs like a push of it (which records
// RefsChanged). Handlers check access, decode the request into a
// FileWrite and call it.
type Service struct{ *app.Deps }

func (h Handlers) svc() Service { return Service{Deps: h.Deps} }

// Identity is a name and address a commit names.
type Identity struct{ Name, Email string }

// FileWrite is one contents write (create, update or delete) as asked for.
type FileWrite struct {
	Op gitstore.FileOp
	// RawPath is the file's path as given (checked by Commit); FromPath
	// the path an update moves the file from ("" for none).
	RawPath, FromPath string
	// Branch is the branch written ("" for the default one); NewBranch,
	// when set, is made from it with the commit, replacing an existing
	// one only with Force.
	Branch, NewBranch string
	Force             bool
	// Message "" means DefaultVerb and the path; Signoff adds a
	// Signed-off-by line of the committer.
	Message, DefaultVerb string
	Signoff              bool
	// Author and Committer, when given (nil: not), name the commit's
	// people: each defaults to the other, then to the caller.
	Author, Committer *Identity
	// AuthorDate and CommitterDate, when not zero, date the commit; the
	// clock's now otherwise.
	AuthorDate, CommitterDate time.Time
	// SHA is the blob an update or delete expects to find.
	SHA     string
	Content []byte
}

// identity is who a commit names: the given identity when it has an
// email, else fallback.
func identity(id *Identity, fallback *object.Signature) *object.Signature {
	if id == nil || id.Email == "" {
		return fallback
	}
	name := id.Name
	if name == "" {
		name, _, _ = strings.Cut(id.Email, "@")
	}
	return &object.Signature{Name: name, Email: id.Email}
}

func dateOr(d, now time.Time) time.Time {
	// Clients built on the reference's SDK send the zero time for "unset".
	if d.IsZero() || d.Year() <= 1 {
		return now
	}
	return d
}

// Commit makes the one commit of a contents write on behalf of p, after
// the checks that need neither git nor the database, and moves its branch
// through impl/refs (which records RefsChanged, as a push of it would).
func (s Service) Commit(ctx context.Context, p *auth.Principal, r *store.Repository, w FileWrite) (*gitstore.GitRepo, *gitstore.ChangeResult, error) {
	path, err := treePath(w.RawPath)
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return nil, nil, apierr.Validation("[Filepath]: a file path is required")
	}
	if w.FromPath != "" {
		if w.FromPath, err = treePath(w.FromPath); err != nil {
			return nil, nil, apierr.Validation("[FromPath]: invalid path")
		}
	}
	if w.Branch != "" {
		if err := names.CheckBranch("Branch", w.Branch); err != nil {
			return nil, nil, err
		}
	}
	if w.NewBranch != "" {
		// A branch to create: the one rule for new branch names.
		if err := names.CheckNewBranch("NewBranch", w.NewBranch); err != nil {
			return nil, nil, err
		}
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return nil, nil, err
	}
	base := w.Branch
	if base == "" {
		base = r.DefaultBranch
	}
	now := s.Clock.Now()
	doer := app.Signature(p.User, s.Clock.Now())
	author := *identity(w.Author, identity(w.Committer, &doer))
	committer := *identity(w.Committer, &author)
	author.When = dateOr(w.AuthorDate, now)
	committer.When = dateOr(w.CommitterDate, now)
	msg := w.Message
	if strings.TrimSpace(msg) == "" {
		msg = w.DefaultVerb + " " + path
	}
	if w.Signoff {
		msg = strings.TrimRight(msg, "\n") + "\n\nSigned-off-by: " + committer.Name + " <" + committer.Email + ">"
	}
	// Writers to one branch queue here rather than race: each builds on
	// the tip the previous one left. Anything else that moves the branch
	// meanwhile (a push, another process) is met by the retry below.
	target := base
	if w.NewBranch != "" {
		target = w.NewBranch
	}
	unlock, err := s.BranchLocks.Lock(ctx, strconv.FormatInt(r.ID, 10)+"\x00"+target)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	fc := gitstore.FileChange{
		Op: w.Op, Branch: base, NewBranch: w.NewBranch, Force: w.Force,
		Path: path, FromPath: w.FromPath, Content: w.Content, SHA: w.SHA,
		Author: author, Committer: committer, Message: msg, Signer: s.CommitSigner(),
	}
	for attempt := 1; ; attempt++ {
		res, err := g.ChangeFile(fc)
		if err != nil {
			if attempt > 1 && noLongerApplies(err) {
				// It applied to the tip it was first built on; a
				// concurrent change of the branch took that away.
				return nil, nil, apierr.Conflict("branch %s moved meanwhile and the change no longer applies: %v", target, err)
			}
			return nil, nil, err
		}
		// The commit is published like a push of it: the one push policy
		// (a new_branch with force_push that rewrites a branch is a force
		// push), a compare-and-swap from the tip the commit was built on,
		// and the repository row and event that go with a ref change.
		_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
			Updates: []*gitstore.RefUpdate{res.Update()}})
		if err == nil {
			return g, res, nil
		}
		if attempt < maxCommitAttempts && lostRace(g, res, err) {
			// Another writer moved the branch between reading its tip and
			// the compare-and-swap: build the same change again on the new
			// tip, as a rebase would, as long as it still applies there.
			if err := backoff(ctx, attempt); err != nil {
				return nil, nil, err
			}
			continue
		}
		var refused *access.Refusal
		switch {
		case errors.As(err, &refused) && refused.Reason == access.PushNotAllowed:
			return nil, nil, apierr.Forbidden("user cannot commit to protected branch %q", res.Branch)
		case errors.Is(err, gitstore.ErrBranchExists) && res.Branch == base:
			// Another writer made the repository's first commit meanwhile.
			return nil, nil, fmt.Errorf("branch %s: %w", base, store.ErrConflict)
		}
		return nil, nil, err
	}
}

// maxCommitAttempts bounds how often one contents write is rebuilt on a
// branch that keeps moving under it before it answers 409.
const maxCommitAttempts = 10

// lostRace tells whether publishing res failed only because its branch no
// longer points where the commit was built (a compare-and-swap lost to a
// concurrent writer, or a first commit beaten by another), as opposed to a
// refusal that would stand on any tip.
func lostRace(g *gitstore.GitRepo, res *gitstore.ChangeResult, err error) bool {
	if !errors.Is(err, store.ErrConflict) && !errors.Is(err, gitstore.ErrBranchExists) {
		return false
	}
	cur, herr := g.BranchHash(res.Branch)
	return herr == nil && cur != res.Old
}

// noLongerApplies tells the errors of a change that does not apply to a
// branch's tip: the file changed, appeared or went away.
func noLongerApplies(err error) bool {
	return errors.Is(err, gitstore.ErrSHAMismatch) || errors.Is(err, gitstore.ErrFileExists) ||
		errors.Is(err, gitstore.ErrPathConflict) || errors.Is(err, gitstore.ErrBranchExists) ||
		errors.Is(err, store.ErrNotFound)
}

// backoff waits a random while before the next attempt, up to twice as
// long after each (5 ms, 10 ms, … at most 320 ms), so writers that collided
// spread out instead of colliding again in step.
func backoff(ctx context.Context, attempt int) error {
	limit := 5 * time.Millisecond << min(attempt-1, 6)
	d := limit/2 + time.Duration(rand.Int64N(int64(limit/2)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
