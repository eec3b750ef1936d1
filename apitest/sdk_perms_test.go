package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// TestSDKCollaboratorsTeamsTransfer drives collaborators, teams with
// units_map, team members and repositories, a transfer and the three
// team-visibility tiers with the unchanged official SDK, and checks the
// reference's codes.
func TestSDKCollaboratorsTeamsTransfer(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	accts := map[string]*apitest.Account{}
	for _, n := range []string{"boss", "dev", "reader", "outsider"} {
		accts[n] = e.CreateUser(n, false)
	}
	as := func(n string) *gitea.Client { return sdkClient(t, e, gitea.SetBasicAuth(n, n+"-pw")) }
	boss, dev, reader, outsider := as("boss"), as("dev"), as("reader"), as("outsider")

	if _, _, err := boss.CreateOrg(gitea.CreateOrgOption{Name: "acme", Visibility: gitea.VisibleTypePublic}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := boss.CreateOrgRepo("acme", gitea.CreateRepoOption{Name: "tool", Private: true, AutoInit: true}); err != nil {
		t.Fatal(err)
	}

	// Collaborators.
	read := gitea.AccessModeRead
	if resp, err := boss.AddCollaborator("acme", "tool", "reader", gitea.AddCollaboratorOption{Permission: &read}); err != nil || resp.StatusCode != 204 {
		t.Fatalf("AddCollaborator: %v %v", err, resp)
	}
	if ok, _, err := boss.IsCollaborator("acme", "tool", "reader"); err != nil || !ok {
		t.Fatalf("IsCollaborator: %v %v", ok, err)
	}
	perm, _, err := reader.CollaboratorPermission("acme", "tool", "reader")
	if err != nil || perm.Permission != gitea.AccessModeRead || perm.Role != "read" || perm.User.UserName != "reader" {
		t.Fatalf("CollaboratorPermission: %v %+v", err, perm)
	}
	if _, resp, err := reader.CollaboratorPermission("acme", "tool", "boss"); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a reader asking about others: %v %v", err, resp)
	}
	if _, _, err := reader.CreateLabel("acme", "tool", gitea.CreateLabelOption{Name: "x", Color: "#aabbcc"}); err == nil {
		t.Fatal("a read collaborator created a label")
	}
	if _, resp, err := outsider.GetRepo("acme", "tool"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("outsider GetRepo: %v %v", err, resp)
	}

	// A team with units_map, a member and the repository.
	team, resp, err := boss.CreateTeam("acme", gitea.CreateTeamOption{Name: "devs", Permission: gitea.AccessModeWrite,
		UnitsMap: map[string]string{"repo.code": "write", "repo.issues": "write", "repo.pulls": "read"}})
	if err != nil || resp.StatusCode != 201 || team.UnitsMap["repo.code"] != "write" || team.Organization == nil {
		t.Fatalf("CreateTeam: %v %v %+v", err, resp, team)
	}
	if _, err := boss.AddTeamMember(team.ID, "dev"); err != nil {
		t.Fatal(err)
	}
	if _, err := boss.AddTeamRepository(team.ID, "acme", "tool"); err != nil {
		t.Fatal(err)
	}
	if resp, err := dev.AddTeamMember(team.ID, "outsider"); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a member adding members: %v %v", err, resp)
	}
	repo, _, err := dev.GetRepo("acme", "tool")
	if err != nil || !repo.Permissions.Push || repo.Permissions.Admin {
		t.Fatalf("team member's repository: %v %+v", err, repo)
	}
	if _, _, err := dev.CreateLabel("acme", "tool", gitea.CreateLabelOption{Name: "bug", Color: "#aabbcc"}); err != nil {
		t.Fatalf("a team writer of issues: %v", err)
	}
	if tm, _, err := dev.CheckRepoTeam("acme", "tool", "devs"); err != nil || tm.Name != "devs" {
		t.Fatalf("CheckRepoTeam: %v %+v", err, tm)
	}
	assignees, _, err := boss.GetAssignees("acme", "tool")
	// The owners (through the owners team) and the team's writer.
	if err != nil || len(assignees) != 2 || assignees[0].UserName != "boss" || assignees[1].UserName != "dev" {
		t.Fatalf("GetAssignees: %v %+v", err, assignees)
	}
	if mine, _, err := dev.ListMyTeams(&gitea.ListTeamsOptions{}); err != nil || len(mine) != 1 || mine[0].ID != team.ID {
		t.Fatalf("ListMyTeams: %v %+v", err, mine)
	}
	if resp, err := boss.EditTeam(team.ID, gitea.EditTeamOption{Name: "devs", Permission: gitea.AccessModeRead,
		UnitsMap: map[string]string{"repo.code": "read"}}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("EditTeam: %v %v", err, resp)
	}
	if repo, _, err = dev.GetRepo("acme", "tool"); err != nil || repo.Permissions.Push {
		t.Fatalf("after EditTeam: %v %+v", err, repo.Permissions)
	}

	// The three visibility tiers of the service spec: the SDK creates
	// private teams; limited and public ones are set over plain HTTP.
	owner := apitest.Basic(accts["boss"])
	tiers := map[string]*gitea.Team{"private": team}
	for _, vis := range []string{"limited", "public"} {
		tm, _, err := boss.CreateTeam("acme", gitea.CreateTeamOption{Name: vis, Permission: gitea.AccessModeRead})
		if err != nil {
			t.Fatal(err)
		}
		e.Do("PATCH", fmt.Sprintf("teams/%d", tm.ID), map[string]any{"name": vis, "visibility": vis}, owner).Expect(t, http.StatusOK)
		tiers[vis] = tm
	}
	// reader becomes an organization member through a fourth team.
	other, _, err := boss.CreateTeam("acme", gitea.CreateTeamOption{Name: "other", Permission: gitea.AccessModeRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := boss.AddTeamMember(other.ID, "reader"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who    string
		client *gitea.Client
		codes  map[string]int
	}{
		{"team member", dev, map[string]int{"private": 200, "limited": 200, "public": 200}},
		{"org member", reader, map[string]int{"private": 403, "limited": 200, "public": 200}},
		{"outsider", outsider, map[string]int{"private": 404, "limited": 404, "public": 200}},
	} {
		for vis, tm := range tiers {
			_, resp, _ := c.client.GetTeam(tm.ID)
			if resp == nil || resp.StatusCode != c.codes[vis] {
				t.Errorf("%s GetTeam(%s): %v, want %d", c.who, vis, resp, c.codes[vis])
			}
		}
	}
	listed, _, err := outsider.ListOrgTeams("acme", gitea.ListTeamsOptions{})
	if err != nil || len(listed) != 1 || listed[0].Name != "public" {
		t.Fatalf("outsider ListOrgTeams: %v %+v", err, listed)
	}

	// A transfer to another user waits for them; they accept it.
	if _, _, err := boss.CreateRepo(gitea.CreateRepoOption{Name: "gift"}); err != nil {
		t.Fatal(err)
	}
	moved, resp, err := boss.TransferRepo("boss", "gift", gitea.TransferRepoOption{NewOwner: "dev"})
	if err != nil || resp.StatusCode != 202 || moved.FullName != "boss/gift" {
		t.Fatalf("TransferRepo: %v %v %+v", err, resp, moved)
	}
	if _, resp, err := outsider.AcceptRepoTransfer("boss", "gift"); err == nil || resp.StatusCode != 403 {
		t.Fatalf("outsider AcceptRepoTransfer: %v %v", err, resp)
	}
	moved, resp, err = dev.AcceptRepoTransfer("boss", "gift")
	if err != nil || resp.StatusCode != 202 || moved.FullName != "dev/gift" {
		t.Fatalf("AcceptRepoTransfer: %v %v %+v", err, resp, moved)
	}
	if byID, _, err := dev.GetRepoByID(moved.ID); err != nil || byID.FullName != "dev/gift" {
		t.Fatalf("GetRepoByID: %v %+v", err, byID)
	}
	// To an organization the doer owns: at once, with a team.
	ids := []int64{other.ID}
	if _, _, err := boss.CreateRepo(gitea.CreateRepoOption{Name: "tool2"}); err != nil {
		t.Fatal(err)
	}
	moved, resp, err = boss.TransferRepo("boss", "tool2", gitea.TransferRepoOption{NewOwner: "acme", TeamIDs: &ids})
	if err != nil || resp.StatusCode != 202 || moved.FullName != "acme/tool2" {
		t.Fatalf("TransferRepo to an organization: %v %v %+v", err, resp, moved)
	}
	if _, _, err := reader.CheckRepoTeam("acme", "tool2", "other"); err != nil {
		t.Fatalf("the transfer's team: %v", err)
	}
	if resp, err := boss.DeleteCollaborator("acme", "tool", "reader"); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DeleteCollaborator: %v %v", err, resp)
	}
}
