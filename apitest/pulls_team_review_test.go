package apitest_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestPullTeamReviewOnPrivateRepo: a team review may be requested on a
// private repository from every team whose members read its pull requests
// through the team (impl/access decides): the owners team and a team
// including all repositories, which were refused before, and a team given
// the repository; a team without it is refused.
func TestPullTeamReviewOnPrivateRepo(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss := e.CreateUser("boss", false)
	e.CreateUser("carol", false)
	owner := apitest.Basic(boss)
	roCreateOrg(t, e, owner, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "secret", "private": true, "auto_init": true}, owner).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/acme/secret/contents/feat.txt", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("feat\n")),
		"new_branch": "feat", "message": "feat"}, owner).Expect(t, http.StatusCreated)
	var pr models.PullRequest
	e.Do("POST", "repos/acme/secret/pulls", map[string]any{"head": "feat", "base": "main", "title": "Feat"}, owner).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	path := fmt.Sprintf("repos/acme/secret/pulls/%d/requested_reviewers", pr.Index)

	tmTeam(t, e, owner, "acme", map[string]any{"name": "everything", "includes_all_repositories": true,
		"units_map": tmAllUnits("read")}, "carol")
	given := tmTeam(t, e, owner, "acme", map[string]any{"name": "given", "units_map": tmAllUnits("read")}, "carol")
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/secret", given.ID), nil, owner).Expect(t, http.StatusNoContent)
	tmTeam(t, e, owner, "acme", map[string]any{"name": "outside", "units_map": tmAllUnits("read")}, "carol")
	// A team given the repository without its pull requests cannot read
	// them either.
	noPulls := tmAllUnits("read")
	noPulls["repo.pulls"] = "none"
	blind := tmTeam(t, e, owner, "acme", map[string]any{"name": "blind", "units_map": noPulls})
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/secret", blind.ID), nil, owner).Expect(t, http.StatusNoContent)

	for _, team := range []string{"Owners", "everything", "given"} {
		e.Do("POST", path, map[string]any{"team_reviewers": []string{team}}, owner).Expect(t, http.StatusCreated)
	}
	for _, team := range []string{"outside", "blind"} {
		e.Do("POST", path, map[string]any{"team_reviewers": []string{team}}, owner).Expect(t, http.StatusUnprocessableEntity)
	}
	e.Do("GET", fmt.Sprintf("repos/acme/secret/pulls/%d", pr.Index), nil, owner).Expect(t, http.StatusOK).JSON(t, &pr)
	var names []string
	for _, team := range pr.RequestedReviewersTeams {
		names = append(names, team.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Owners", "everything", "given"}) {
		t.Fatalf("requested teams %v", names)
	}
}
