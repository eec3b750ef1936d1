package branch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/store"
)

// Service is the only place branch protection rules are written. Handlers
// check access (repository admins), turn the options into a rule and the
// names it lists, and call it. Rule changes are not announced: the
// reference notifies none.
type Service struct{ *app.Deps }

func (h Handlers) svc() Service { return Service{Deps: h.Deps} }

// RuleLists are the names of the users and teams a rule lists. A nil list
// is absent: an edit keeps the rule's, a new rule lists nobody.
type RuleLists struct {
	PushUsers, PushTeams           []string
	ForcePushUsers, ForcePushTeams []string
	MergeUsers, MergeTeams         []string
	ApprovalsUsers, ApprovalsTeams []string
	BypassUsers, BypassTeams       []string
}

// resolve sets pb's lists from l (see whitelists); keep leaves a rule's
// list as it is where l's is absent.
func (l RuleLists) resolve(ctx context.Context, d *app.Deps, r *store.Repository, pb *store.ProtectedBranch, keep bool) error {
	w := &whitelists{ctx: ctx, d: d, repo: r}
	for _, f := range []struct {
		field string
		names []string
		dst   *[]int64
		team  bool
	}{
		{"PushWhitelistUsernames", l.PushUsers, &pb.PushWhitelistUserIDs, false},
		{"PushWhitelistTeams", l.PushTeams, &pb.PushWhitelistTeamIDs, true},
		{"ForcePushAllowlistUsernames", l.ForcePushUsers, &pb.ForcePushAllowlistUserIDs, false},
		{"ForcePushAllowlistTeams", l.ForcePushTeams, &pb.ForcePushAllowlistTeamIDs, true},
		{"MergeWhitelistUsernames", l.MergeUsers, &pb.MergeWhitelistUserIDs, false},
		{"MergeWhitelistTeams", l.MergeTeams, &pb.MergeWhitelistTeamIDs, true},
		{"ApprovalsWhitelistUsernames", l.ApprovalsUsers, &pb.ApprovalsWhitelistUserIDs, false},
		{"ApprovalsWhitelistTeams", l.ApprovalsTeams, &pb.ApprovalsWhitelistTeamIDs, true},
		{"BypassAllowlistUsernames", l.BypassUsers, &pb.BypassAllowlistUserIDs, false},
		{"BypassAllowlistTeams", l.BypassTeams, &pb.BypassAllowlistTeamIDs, true},
	} {
		if f.names == nil && keep {
			continue
		}
		if f.team {
			*f.dst = w.teams(f.field, f.names)
		} else {
			*f.dst = w.users(f.field, f.names)
		}
	}
	return w.err
}

// errRuleExists is the reference's answer for a second rule of one name.
func errRuleExists() error { return apierr.Forbidden("Branch protection already exist") }

// CreateRule adds pb, a rule of r, listing the users and teams lists names.
func (s Service) CreateRule(ctx context.Context, r *store.Repository, pb *store.ProtectedBranch, lists RuleLists) error {
	if err := checkRuleName(pb.RuleName); err != nil {
		return err
	}
	if _, err := s.Store.Protections().FindByName(ctx, r.ID, pb.RuleName); err == nil {
		return errRuleExists()
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	pb.RepoID = r.ID
	if err := lists.resolve(ctx, s.Deps, r, pb, false); err != nil {
		return err
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		return s.Store.Protections().Create(ctx, pb)
	})
	if errors.Is(err, store.ErrDuplicate) {
		return errRuleExists()
	}
	return err
}

// EditRule changes r's rule named name: change sets its fields, lists the
// lists it names (absent ones stay); read and written in one transaction.
func (s Service) EditRule(ctx context.Context, r *store.Repository, name string, change func(*store.ProtectedBranch), lists RuleLists) (*store.ProtectedBranch, error) {
	var updated *store.ProtectedBranch
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := s.findRule(ctx, r.ID, name)
		if err != nil {
			return err
		}
		change(pb)
		if err := lists.resolve(ctx, s.Deps, r, pb, true); err != nil {
			return err
		}
		updated = pb
		return s.Store.Protections().Update(ctx, pb)
	})
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// DeleteRule removes r's rule named name.
func (s Service) DeleteRule(ctx context.Context, r *store.Repository, name string) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := s.findRule(ctx, r.ID, name)
		if err != nil {
			return err
		}
		return s.Store.Protections().Delete(ctx, r.ID, pb.ID)
	})
}

// SetRulePriorities orders r's rules as ids lists them (each once); 423
// for an archived repository.
func (s Service) SetRulePriorities(ctx context.Context, r *store.Repository, ids []int64) error {
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return apierr.Validation("[IDs]: id %d is listed twice", id)
		}
		seen[id] = true
	}
	if r.IsArchived {
		return apierr.RepoArchived()
	}
	// Ids of other repositories' rules, or of none, are ignored, as the
	// reference does.
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		return s.Store.Protections().SetPriorities(ctx, r.ID, ids)
	})
}

// findRule loads the rule named name from the path. A name no rule can
// have, one the database cannot store (a NUL, invalid UTF-8), is not
// found rather than an invalid value.
func (s Service) findRule(ctx context.Context, repoID int64, name string) (*store.ProtectedBranch, error) {
	if strings.ContainsRune(name, 0) || !utf8.ValidString(name) {
		return nil, fmt.Errorf("branch protection %q: %w", name, store.ErrNotFound)
	}
	return s.Store.Protections().FindByName(ctx, repoID, name)
}

// whitelists resolves the names of users and teams a rule lists. Unknown
// names are a 422; users without write access and teams of other owners
// are dropped, as the reference does.
type whitelists struct {
	ctx  context.Context
	d    *app.Deps
	repo *store.Repository
	err  error
	// anyUser lists every named user; otherwise, as branch rules do in
	// the reference, only those who may write the code are kept.
	anyUser bool
}

func (w *whitelists) users(field string, names []string) []int64 {
	if w.err != nil || len(names) == 0 {
		return []int64{}
	}
	ids := []int64{}
	seen := map[int64]bool{}
	for _, n := range names {
		u, err := w.d.Store.Users().FindByName(w.ctx, n)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsOrganization()) {
			w.err = apierr.Validation("[%s]: user does not exist [name: %s]", field, n)
			return nil
		}
		if err != nil {
			w.err = err
			return nil
		}
		if seen[u.ID] {
			continue
		}
		if w.anyUser {
			seen[u.ID] = true
			ids = append(ids, u.ID)
			continue
		}
		perm, err := w.d.Access.Repo(w.ctx, &auth.Principal{User: u, Signer: u}, w.repo)
		if err != nil {
			w.err = err
			return nil
		}
		if perm.CanWrite(access.UnitCode) {
			seen[u.ID] = true
			ids = append(ids, u.ID)
		}
	}
	return ids
}

func (w *whitelists) teams(field string, names []string) []int64 {
	if w.err != nil || len(names) == 0 || w.repo.Owner == nil || !w.repo.Owner.IsOrganization() {
		return []int64{}
	}
	ids := []int64{}
	for _, n := range names {
		t, err := w.d.Store.Teams().FindByName(w.ctx, w.repo.OwnerID, n)
		if errors.Is(err, store.ErrNotFound) {
			w.err = apierr.Validation("[%s]: team does not exist [name: %s]", field, n)
			return nil
		}
		if err != nil {
			w.err = err
			return nil
		}
		ids = append(ids, t.ID)
	}
	return ids
}

func checkRuleName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apierr.Validation("both rule_name and branch_name are empty")
	case len(name) > maxRuleNameLength:
		return apierr.Validation("[RuleName]: MaxSize")
	case strings.ContainsRune(name, 0):
		return apierr.Validation("[RuleName]: invalid character")
	}
	return nil
}
