package apitest

import (
	"context"
	"errors"
	"testing"

	"repohost/store"
)

// MembersTeamName is the team AddOrgMember puts non-owners in.
const MembersTeamName = "Members"

// AddOrgMember makes userID a member of orgID directly in the store, the
// way organization membership exists: through a team. An owner joins the
// owners team; anyone else the team "Members" (created on first use),
// which reads every repository of the organization. public shows the
// membership.
func (e *Env) AddOrgMember(t testing.TB, orgID, userID int64, owner, public bool) {
	t.Helper()
	ctx := context.Background()
	teams := e.DB.Teams()
	name := MembersTeamName
	if owner {
		name = store.OwnersTeamName
	}
	team, err := teams.FindByName(ctx, orgID, name)
	if errors.Is(err, store.ErrNotFound) && owner {
		// An organization made directly in the store has no owners team.
		if err = teams.CreateOwnersTeam(ctx, orgID); err == nil {
			team, err = teams.FindByName(ctx, orgID, name)
		}
	}
	if errors.Is(err, store.ErrNotFound) && !owner {
		units := map[string]string{}
		for _, u := range []string{"repo.code", "repo.issues", "repo.pulls", "repo.releases", "repo.wiki",
			"repo.projects", "repo.ext_issues", "repo.ext_wiki", "repo.actions", "repo.packages"} {
			units[u] = store.TeamAccessRead
		}
		team = &store.Team{OrgID: orgID, Name: name, Permission: store.TeamAccessRead,
			IncludesAllRepositories: true, Units: units, Visibility: store.VisibilityPrivate}
		err = teams.Create(ctx, team)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := teams.AddMember(ctx, team, userID); err != nil {
		t.Fatal(err)
	}
	if public {
		if err := e.DB.Orgs().SetMemberPublic(ctx, orgID, userID, true); err != nil {
			t.Fatal(err)
		}
	}
}
