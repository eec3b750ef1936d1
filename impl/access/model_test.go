package access

import (
	"testing"

	"repohost/impl/auth"
	"repohost/store"
)

// TestTeamRepoForIsRepoForOfAMember: what a team alone grants on a private
// repository is what RepoFor gives a member of that team only, whatever
// the team's permission, units, and whether it has the repository.
func TestTeamRepoForIsRepoForOfAMember(t *testing.T) {
	org := &store.User{ID: 1, Name: "acme", Type: store.UserTypeOrganization, Visibility: store.VisibilityPublic}
	r := &store.Repository{ID: 7, OwnerID: org.ID, Owner: org, IsPrivate: true, HasCode: true, HasIssues: true,
		HasPullRequests: true, HasReleases: true, HasPackages: true}
	member := &auth.Principal{User: &store.User{ID: 2, Name: "carol"}}
	units := func(level string) map[string]string {
		m := map[string]string{}
		for _, u := range Units {
			m[u.String()] = level
		}
		return m
	}
	noPulls := units(store.TeamAccessWrite)
	noPulls[UnitPulls.String()] = "none"
	for _, tm := range []*store.Team{
		{ID: 10, OrgID: org.ID, Name: store.OwnersTeamName, LowerName: "owners", Permission: "owner", IncludesAllRepositories: true},
		{ID: 11, OrgID: org.ID, Name: "all", Permission: store.TeamAccessRead, IncludesAllRepositories: true, Units: units(store.TeamAccessRead)},
		{ID: 12, OrgID: org.ID, Name: "some", Permission: store.TeamAccessWrite, Units: noPulls},
		{ID: 13, OrgID: org.ID + 1, Name: "elsewhere", Permission: store.TeamAccessRead, IncludesAllRepositories: true, Units: units(store.TeamAccessRead)},
	} {
		for _, given := range []bool{false, true} {
			want := RepoFor(member, r, Facts{Teams: []*store.Team{tm}, TeamHasRepo: map[int64]bool{tm.ID: given}})
			if tm.OrgID != org.ID {
				want = None
			}
			if got := TeamRepoFor(tm, r, given); got != want {
				t.Errorf("team %s, given %v: %+v, want %+v", tm.Name, given, got, want)
			}
		}
	}
	if p := TeamRepoFor(&store.Team{ID: 10, OrgID: org.ID, Permission: "owner", IncludesAllRepositories: true}, r, false); !p.CanRead(UnitPulls) {
		t.Errorf("the owners team does not read the pull requests: %+v", p)
	}
}
