package githttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/names"
	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
)

// This file is the part of serving git that does not depend on the
// transport: who may fetch from or push to which repository, and how a
// push is applied. Smart HTTP (githttp.go) and SSH (impl/gitssh) both go
// through it, so the two cannot disagree.

// Caller is who asks for a repository, however the transport
// authenticated them: a user (Principal, nil when anonymous) or a deploy
// key (Deploy: the rows of every repository the presented key serves).
type Caller struct {
	Principal *auth.Principal
	Deploy    []*store.DeployKey
}

// Refusal is why a caller may not use a repository: an HTTP status (the
// SSH transport only shows the message) and the text git prints.
type Refusal struct {
	Status  int
	Message string
}

func (r *Refusal) Error() string { return r.Message }

func refusal(status int, msg string) *Refusal { return &Refusal{Status: status, Message: msg} }

// Transport is the transport-independent service of git requests.
type Transport struct {
	d *app.Deps
}

// NewTransport returns the shared git service over d.
func NewTransport(d *app.Deps) *Transport { return &Transport{d: d} }

// Authorize loads owner/name ({repo} may end in ".git") for c, to fetch
// or (write) to push. It answers a *Refusal when c may not; any other
// error is a server failure. A repository c may not see answers like a
// missing one: 401 to anonymous callers (so git asks for credentials),
// 404 to others. Names are checked before anything is looked up.
func (t *Transport) Authorize(ctx context.Context, c Caller, owner, name string, write bool) (*store.Repository, error) {
	p := c.Principal
	if p != nil && p.Token != nil {
		level := "read"
		if write {
			level = "write"
		}
		if !p.Scopes.Allows("repository", level) {
			return nil, refusal(http.StatusForbidden, fmt.Sprintf("token does not have the %s:repository scope", level))
		}
	}
	name = strings.TrimSuffix(name, ".git")
	notFound := refusal(http.StatusNotFound, "repository not found")
	if p == nil && len(c.Deploy) == 0 {
		notFound = refusal(http.StatusUnauthorized, "authentication required")
	}
	if names.CheckUser("Owner", owner) != nil || names.CheckRepo("Repo", name) != nil {
		return nil, notFound
	}
	if len(c.Deploy) > 0 {
		return t.authorizeDeployKey(ctx, c.Deploy, owner, name, write, notFound)
	}
	rp, perm, err := t.d.Repo(ctx, p, owner, name)
	if app.IsNotFound(err) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if !perm.CanRead(access.UnitCode) && !perm.IsAdmin() {
		if p == nil {
			return nil, refusal(http.StatusUnauthorized, "authentication required")
		}
		return nil, refusal(http.StatusForbidden, "you do not have read access to this repository's code")
	}
	if write {
		switch {
		case p == nil:
			return nil, refusal(http.StatusUnauthorized, "authentication required")
		case !perm.CanWrite(access.UnitCode):
			return nil, refusal(http.StatusForbidden, "you do not have write access to this repository")
		case rp.IsArchived:
			return nil, archived
		case rp.Status == store.RepoStatusBeingMigrated:
			return nil, migrating
		case rp.IsMirror:
			return nil, mirror
		}
	}
	return rp, nil
}

var migrating = refusal(http.StatusForbidden, "this repository is being migrated: it cannot be pushed to until the migration ends")

// mirror is the reference's refusal of a push to a pull mirror: its refs
// come from its remote only.
var mirror = refusal(http.StatusForbidden, "mirror repository is read-only")

var archived = refusal(http.StatusForbidden, "this repository is archived: it can be cloned but not pushed to")

// authorizeDeployKey lets a deploy key reach its own repository only:
// fetching always, pushing unless it is read-only.
func (t *Transport) authorizeDeployKey(ctx context.Context, keys []*store.DeployKey, owner, name string, write bool, notFound *Refusal) (*store.Repository, error) {
	rp, err := t.d.Store.Repos().FindByOwnerAndName(ctx, owner, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	var key *store.DeployKey
	for _, k := range keys {
		if k.RepoID == rp.ID {
			key = k
		}
	}
	switch {
	case key == nil:
		return nil, notFound
	case write && key.ReadOnly:
		return nil, refusal(http.StatusForbidden, "this deploy key is read-only: it can fetch but not push")
	case write && rp.IsArchived:
		return nil, archived
	case write && rp.Status == store.RepoStatusBeingMigrated:
		return nil, migrating
	case write && rp.IsMirror:
		return nil, mirror
	}
	return rp, nil
}

// ErrCutShort: the push's input ended early (past a bound); nothing of it
// was applied.
var ErrCutShort = errors.New("the push was cut short")

// Doer is the principal a push by c acts as: nil for a deploy key, which
// stands for no user (branch rules let it through by their deploy-key
// allowances, never by their user lists).
func (c Caller) Doer() *auth.Principal { return c.Principal }

// ReceivePack reads a push from in into g (repo's repository) and applies
// its ref updates through impl/refs (the one push policy,
// compare-and-swap, one event for the push). Refused updates carry their
// refusal, which the returned push reports to the client ("ng"). An error
// wrapping gitstore.ErrProtocol is the client's fault. cutShort, when
// not nil, is asked once the push is read: when it says the input was cut
// short, nothing is applied and ErrCutShort is returned.
func (t *Transport) ReceivePack(ctx context.Context, c Caller, repo *store.Repository, g *gitstore.GitRepo, in io.Reader, cutShort func() bool) (*gitstore.Push, error) {
	// From the first object stored to the last ref moved, no maintenance
	// of the repository (refs.Service.Hold).
	release, err := refs.New(t.d).Hold(ctx, repo)
	if err != nil {
		return nil, err
	}
	defer release()
	push, err := g.ReadPush(ctx, in)
	t.d.Metrics.GitOperation("receive-pack", err)
	if push != nil {
		// The objects of a push none of whose updates is made stay out
		// of the repository.
		defer push.Close()
	}
	if cutShort != nil && cutShort() {
		return nil, ErrCutShort
	}
	if err != nil {
		return nil, err
	}
	if len(push.Updates) > 0 {
		// The client may hang up while its refs move; the change and its
		// records still have to happen together.
		ctx = context.WithoutCancel(ctx)
		_, err = refs.New(t.d).Apply(ctx, refs.Change{Repo: repo, Doer: c.Doer(), DeployKey: len(c.Deploy) > 0,
			Git: push.Repo(), Updates: push.Updates, Atomic: push.Atomic, PushOptions: push.Options})
		if slices.ContainsFunc(push.Updates, func(u *gitstore.RefUpdate) bool { return u.Err == err }) {
			// An atomic push refused as a whole: the report says why.
			err = nil
		}
		if err != nil {
			// Every update carries its refusal; the report tells the client.
			t.d.Log.ErrorContext(ctx, "git: apply push", "repo", repo.FullName(), "err", err)
		}
	}
	return push, nil
}
