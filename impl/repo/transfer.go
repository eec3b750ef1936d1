package repo

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// The reference's refusal of a change only the owner may make.
const msgNeedOwner = "user should be the owner of the repo"

func (h Handlers) RepoGetByID(ctx context.Context, params repository.RepoGetByIDParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, err := h.Store.Repos().FindByID(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.Pull {
		return h.Fail(apierr.NotFound("not found"))
	}
	return repository.NewRepoGetByIDOK().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), r, perm, app.Viewer(p)))
}

// rendered renders r for p (its permission read afresh: a transfer changes
// it).
func (h Handlers) rendered(ctx context.Context, p *auth.Principal, base string, r *store.Repository) (*models.Repository, error) {
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return convert.Repo(h.Links(base), r, perm, app.Viewer(p)), nil
}

func (h Handlers) RepoTransfer(ctx context.Context, params repository.RepoTransferParams) middleware.Responder {
	p, r, perm, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.IsOwner() {
		return h.Fail(apierr.Forbidden(msgNeedOwner))
	}
	recipient, err := h.VisibleUser(ctx, p, *params.Body.NewOwner)
	if err != nil {
		return h.Fail(err)
	}
	teams, err := h.svc().TransferTeams(ctx, recipient, params.Body.TeamIDs)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	// The reference moves the repository at once when the doer may put
	// repositories in the recipient (itself, an organization it owns, or
	// anything for a site admin); another user has to accept.
	now := p.IsAdmin() || recipient.ID == p.UserID()
	if recipient.IsOrganization() {
		may, err := h.Access.CanCreateIn(ctx, p, recipient)
		if err != nil {
			return h.Fail(err)
		}
		if !may {
			return h.Fail(apierr.Forbidden("The user is not allowed to create repositories in the organization"))
		}
		now = true
	}
	if !now {
		if _, err := h.svc().OfferTransfer(ctx, p.User, r, recipient, teams); err != nil {
			return h.Fail(err)
		}
		out, err := h.rendered(ctx, p, base, r)
		if err != nil {
			return h.Fail(err)
		}
		out.RepoTransfer = &models.RepoTransfer{Doer: convert.User(base, p.User, app.Viewer(p)),
			Recipient: convert.User(base, recipient, app.Viewer(p)), Teams: []*models.Team{}}
		return repository.NewRepoTransferAccepted().WithPayload(out)
	}
	moved, err := h.svc().Transfer(ctx, p.User, r, recipient, teams)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.rendered(ctx, p, base, moved)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoTransferAccepted().WithPayload(out)
}

// pendingTransfer loads owner/name with its pending transfer for a caller
// who may accept or reject it: the recipient, an owner of a recipient
// organization, or a site admin. The recipient need not see the
// repository yet; to anyone else who cannot, it answers 404 as a missing
// one, and 403 to those who can.
func (h Handlers) pendingTransfer(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, *store.RepoTransfer, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := h.Store.Repos().FindByOwnerAndName(ctx, owner, name)
	if err != nil {
		return nil, nil, nil, err
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, nil, nil, err
	}
	hidden := func(other error) error {
		if !perm.Pull {
			return apierr.NotFound("not found")
		}
		return other
	}
	tr, err := h.Store.Access().FindTransfer(ctx, r.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, hidden(apierr.NotFound("no pending transfer"))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	recipient, err := h.Store.Users().FindByID(ctx, tr.RecipientID)
	if err != nil {
		return nil, nil, nil, err
	}
	may := p.IsAdmin() || p.UserID() == recipient.ID
	if !may && recipient.IsOrganization() {
		if may, err = h.Access.IsOrgOwner(ctx, p, recipient); err != nil {
			return nil, nil, nil, err
		}
	}
	if !may {
		return nil, nil, nil, hidden(apierr.Forbidden("user does not have enough permissions"))
	}
	return p, r, tr, nil
}

func (h Handlers) AcceptRepoTransfer(ctx context.Context, params repository.AcceptRepoTransferParams) middleware.Responder {
	p, r, tr, err := h.pendingTransfer(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	recipient, err := h.Store.Users().FindByID(ctx, tr.RecipientID)
	if err != nil {
		return h.Fail(err)
	}
	teams, err := h.svc().TransferTeams(ctx, recipient, tr.TeamIDs)
	if err != nil {
		return h.Fail(err)
	}
	moved, err := h.svc().Transfer(ctx, p.User, r, recipient, teams)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.rendered(ctx, p, app.BaseURL(params.HTTPRequest), moved)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewAcceptRepoTransferAccepted().WithPayload(out)
}

func (h Handlers) RejectRepoTransfer(ctx context.Context, params repository.RejectRepoTransferParams) middleware.Responder {
	p, r, _, err := h.pendingTransfer(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().RejectTransfer(ctx, p.User, r); err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.Pull {
		perm = access.None
	}
	return repository.NewRejectRepoTransferOK().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), r, perm, app.Viewer(p)))
}
