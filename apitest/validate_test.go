package apitest_test

import (
	"testing"

	"repohost/apitest"
)

// TestContractFindsOperationsAsTheServerRoutes pins the Contract's route
// matching on the cases that a naive matcher gets wrong: parameters holding
// slashes, literal segments next to parameters, and paths no operation
// serves. TestEveryOperationIsDispatched checks it against the real router
// for every operation.
func TestContractFindsOperationsAsTheServerRoutes(t *testing.T) {
	t.Parallel()
	c, err := apitest.SharedContract()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/api/v1/repos/o/r/branches/main", "repoGetBranch"},
		{"GET", "/api/v1/repos/o/r/branches/feature/x", "repoGetBranch"},
		{"GET", "/api/v1/repos/o/r/branches/feature%2Fx", "repoGetBranch"},
		{"DELETE", "/api/v1/repos/o/r/branches/a/b/c", "repoDeleteBranch"},
		{"PATCH", "/api/v1/repos/o/r/branches/a/b", "repoRenameBranch"},
		{"POST", "/api/v1/repos/o/r/contents/docs/new.md", "repoCreateFile"},
		{"GET", "/api/v1/repos/o/r/contents/docs/guide/intro.md", "repoGetContents"},
		{"GET", "/api/v1/repos/o/r/contents/docs/", "repoGetContents"},
		{"GET", "/api/v1/repos/o/r/contents", "repoGetContentsList"},
		{"GET", "/api/v1/repos/o/r/raw/main/docs/a.md", "repoGetRawFile"},
		{"GET", "/api/v1/repos/o/r/tags/v1/rc", "repoGetTag"},
		{"GET", "/api/v1/repos/o/r/releases/tags/v1/rc", "repoGetReleaseByTag"},
		{"GET", "/api/v1/repos/o/r/releases/tags/assets", "repoGetReleaseByTag"},
		{"GET", "/api/v1/repos/o/r/releases/7/assets", "repoListReleaseAttachments"},
		{"GET", "/api/v1/repos/o/r/archive/main.zip", "repoGetArchive"},
		{"GET", "/api/v1/repos/o/r/branch_protections/release/x", "repoGetBranchProtection"},
		{"GET", "/api/v1/repos/o/r/branch_protections/priority", "repoGetBranchProtection"},
		{"POST", "/api/v1/repos/o/r/branch_protections/priority", "repoUpdateBranchProtectionPriories"},
		{"GET", "/api/v1/users/search", "userSearch"},
		{"GET", "/api/v1/users/search/repos", "userListRepos"},
		{"GET", "/api/v1/users/alice", "userGet"},
		{"GET", "/api/v1/repos/issues/search", "issueSearchIssues"},
		{"DELETE", "/api/v1/repos/issues/search", "repoDelete"},
		{"GET", "/api/v1/repos/o/r/", "repoGet"},
		{"POST", "/api/v1/repos/o/r/generate", "generateRepo"},
		{"GET", "/api/v1/repos/o/r/issues/1/nothing", ""},
		{"GET", "/api/v1/repos/o/r/issues/1/labels/2/3", ""},
		{"PUT", "/api/v1/version", ""},
		{"GET", "/api/v1/nothing", ""},
		{"GET", "/api/v1/repos/o/r/branches/a%2F..%2F..", "repoGetBranch"},
	} {
		op, _ := c.Operation(tc.method, tc.path)
		got := ""
		if op != nil {
			got = op.ID
		}
		if got != tc.want {
			t.Errorf("%s %s: operation %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
	for _, p := range []string{"/swagger.v1.json", "/alice/pub.git/info/refs", "/attachments/x", "/api/v1",
		"/api/v1/repos/../version", "/api/v1//version"} {
		if c.InAPI("GET", p) {
			t.Errorf("%s: counted as part of the API", p)
		}
	}
}
