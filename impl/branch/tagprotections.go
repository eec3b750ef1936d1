package branch

import (
	"context"
	"errors"
	"strings"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/apierr"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// Tag protection rules: kept here beside the branch rules and written only
// by TagService; enforced by access.PushPolicy on every ref change
// (impl/refs), so a push, the tag API and release publishing are judged
// alike.

// TagService is the only place tag protection rules are written.
type TagService struct{ Service }

func (h Handlers) tagSvc() TagService { return TagService{h.svc()} }

// errTagRuleExists is the reference's answer for a second rule of one
// pattern.
func errTagRuleExists() error { return apierr.Forbidden("Tag protection already exist") }

// checkTagPattern refuses an empty pattern, and one that is neither a glob
// nor a /regexp/.
func checkTagPattern(pattern string) error {
	if pattern == "" {
		return apierr.BadRequest("name_pattern are empty")
	}
	if _, err := store.CompileTagPattern(pattern); err != nil {
		return apierr.Validation("invalid name_pattern %q: %v", pattern, err)
	}
	return nil
}

// resolveTagLists sets pt's allow-lists from the names; a nil list is
// absent and, when keep is set, leaves the rule's list as it is. Any
// existing user may be listed (the reference does not ask for write
// access: the rule only ever narrows who may change a tag).
func (s TagService) resolveTagLists(ctx context.Context, r *store.Repository, pt *store.ProtectedTag, users, teams []string, keep bool) error {
	w := &whitelists{ctx: ctx, d: s.Deps, repo: r, anyUser: true}
	if users != nil || !keep {
		pt.AllowlistUserIDs = w.users("WhitelistUsernames", users)
	}
	if teams != nil || !keep {
		pt.AllowlistTeamIDs = w.teams("WhitelistTeams", teams)
	}
	return w.err
}

// Create adds a rule of r protecting the tags pattern matches.
func (s TagService) Create(ctx context.Context, r *store.Repository, pattern string, users, teams []string) (*store.ProtectedTag, error) {
	pattern = strings.TrimSpace(pattern)
	if err := checkTagPattern(pattern); err != nil {
		return nil, err
	}
	pt := &store.ProtectedTag{RepoID: r.ID, NamePattern: pattern}
	if err := s.resolveTagLists(ctx, r, pt, users, teams, false); err != nil {
		return nil, err
	}
	err := s.Store.TagProtections().Create(ctx, pt)
	if errors.Is(err, store.ErrDuplicate) {
		return nil, errTagRuleExists()
	}
	return pt, err
}

// Edit changes the rule id of r; nil arguments are absent.
func (s TagService) Edit(ctx context.Context, r *store.Repository, id int64, pattern *string, users, teams []string) (*store.ProtectedTag, error) {
	pt, err := s.Store.TagProtections().Find(ctx, r.ID, id)
	if err != nil {
		return nil, err
	}
	if pattern != nil {
		p := strings.TrimSpace(*pattern)
		if err := checkTagPattern(p); err != nil {
			return nil, err
		}
		pt.NamePattern = p
	}
	if err := s.resolveTagLists(ctx, r, pt, users, teams, true); err != nil {
		return nil, err
	}
	err = s.Store.TagProtections().Update(ctx, pt)
	if errors.Is(err, store.ErrDuplicate) {
		return nil, errTagRuleExists()
	}
	if err != nil {
		return nil, err
	}
	// Read back, so the answer carries the stored times.
	return s.Store.TagProtections().Find(ctx, r.ID, id)
}

// Delete removes the rule id of r.
func (s TagService) Delete(ctx context.Context, r *store.Repository, id int64) error {
	return s.Store.TagProtections().Delete(ctx, r.ID, id)
}

// renderTagProtections converts rules, naming their users and teams in two
// statements for the whole list.
func (h Handlers) renderTagProtections(ctx context.Context, rules []*store.ProtectedTag) ([]*models.TagProtection, error) {
	var userIDs, teamIDs []int64
	for _, pt := range rules {
		userIDs = append(userIDs, pt.AllowlistUserIDs...)
		teamIDs = append(teamIDs, pt.AllowlistTeamIDs...)
	}
	users, err := h.Store.Users().FindByIDs(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	teams, err := h.Store.Teams().FindByIDs(ctx, teamIDs)
	if err != nil {
		return nil, err
	}
	out := make([]*models.TagProtection, 0, len(rules))
	for _, pt := range rules {
		tp := &models.TagProtection{ID: pt.ID, NamePattern: pt.NamePattern,
			WhitelistUsernames: []string{}, WhitelistTeams: []string{},
			Created: strfmt.DateTime(pt.CreatedAt.UTC()), Updated: strfmt.DateTime(pt.UpdatedAt.UTC())}
		for _, id := range pt.AllowlistUserIDs {
			if u, ok := users[id]; ok {
				tp.WhitelistUsernames = append(tp.WhitelistUsernames, u.Name)
			}
		}
		for _, id := range pt.AllowlistTeamIDs {
			if t, ok := teams[id]; ok {
				tp.WhitelistTeams = append(tp.WhitelistTeams, t.Name)
			}
		}
		out = append(out, tp)
	}
	return out, nil
}

func (h Handlers) renderTagProtection(ctx context.Context, pt *store.ProtectedTag) (*models.TagProtection, error) {
	out, err := h.renderTagProtections(ctx, []*store.ProtectedTag{pt})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (h Handlers) RepoListTagProtection(ctx context.Context, params repository.RepoListTagProtectionParams) middleware.Responder {
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	rules, err := h.Store.TagProtections().ListAll(ctx, r.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderTagProtections(ctx, rules)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListTagProtectionOK().WithPayload(out)
}

func (h Handlers) RepoGetTagProtection(ctx context.Context, params repository.RepoGetTagProtectionParams) middleware.Responder {
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pt, err := h.Store.TagProtections().Find(ctx, r.ID, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderTagProtection(ctx, pt)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetTagProtectionOK().WithPayload(out)
}

func (h Handlers) RepoCreateTagProtection(ctx context.Context, params repository.RepoCreateTagProtectionParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	pt, err := h.tagSvc().Create(ctx, r, o.NamePattern, o.WhitelistUsernames, o.WhitelistTeams)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderTagProtection(ctx, pt)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateTagProtectionCreated().WithPayload(out)
}

func (h Handlers) RepoEditTagProtection(ctx context.Context, params repository.RepoEditTagProtectionParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	pt, err := h.tagSvc().Edit(ctx, r, params.ID, o.NamePattern, o.WhitelistUsernames, o.WhitelistTeams)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderTagProtection(ctx, pt)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditTagProtectionOK().WithPayload(out)
}

func (h Handlers) RepoDeleteTagProtection(ctx context.Context, params repository.RepoDeleteTagProtectionParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.tagSvc().Delete(ctx, r, params.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteTagProtectionNoContent()
}
