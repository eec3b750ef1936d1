package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestPackageLinkNeedsRepoAccess: writing an organization's packages is not
// enough to link one of them to a repository, the caller also needs write
// access to that repository's packages unit (as the reference). A private
// repository the caller cannot see answers exactly like a missing one, so
// link and unlink tell nothing of which private repositories exist.
func TestPackageLinkNeedsRepoAccess(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss, mallory := e.CreateUser("boss", false), e.CreateUser("mallory", false)
	owner, mc := apitest.Basic(boss), apitest.Basic(mallory)
	roCreateOrg(t, e, owner, map[string]any{"username": "pkorg"})
	for _, r := range []struct {
		name    string
		private bool
	}{{"secret", true}, {"open", false}} {
		e.Do("POST", "orgs/pkorg/repos", map[string]any{"name": r.name, "private": r.private}, owner).Expect(t, http.StatusCreated)
	}
	// mallory's team writes the organization's packages and has no
	// repository.
	team := tmTeam(t, e, owner, "pkorg", map[string]any{"name": "publishers",
		"units_map": map[string]string{"repo.packages": "write"}}, "mallory")
	pkUpload(t, e, mc, "pkorg", "lib", "1.0.0", "lib.bin", []byte("lib")).Expect(t, http.StatusCreated)

	linked := func() *models.Repository {
		t.Helper()
		var pkg models.Package
		e.Do("GET", "packages/pkorg/generic/lib/1.0.0", nil, owner).Expect(t, http.StatusOK).JSON(t, &pkg)
		return pkg.Repository
	}

	// A private repository mallory cannot see and a missing one answer
	// the same.
	hidden := e.Do("POST", "packages/pkorg/generic/lib/-/link/secret", nil, mc).Expect(t, http.StatusNotFound)
	missing := e.Do("POST", "packages/pkorg/generic/lib/-/link/nothing", nil, mc).Expect(t, http.StatusNotFound)
	if string(hidden.Body) != string(missing.Body) {
		t.Fatalf("hidden repository %s, missing one %s", hidden.Body, missing.Body)
	}
	// A repository mallory reads but whose packages it may not write.
	e.Do("POST", "packages/pkorg/generic/lib/-/link/open", nil, mc).Expect(t, http.StatusForbidden)
	if r := linked(); r != nil {
		t.Fatalf("refused links left the package linked to %s", r.FullName)
	}

	// Given the private repository, the team writes its packages unit.
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/pkorg/secret", team.ID), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("POST", "packages/pkorg/generic/lib/-/link/secret", nil, mc).Expect(t, http.StatusCreated)
	if r := linked(); r == nil || r.FullName != "pkorg/secret" {
		t.Fatalf("linked to %+v", r)
	}
	e.Do("POST", "packages/pkorg/generic/lib/-/unlink", nil, mc).Expect(t, http.StatusCreated)
	if r := linked(); r != nil {
		t.Fatalf("unlinked package still linked to %s", r.FullName)
	}

	// Unlinking from a repository mallory can no longer see answers 404
	// and leaves the link; from one it reads without writing, 403.
	e.Do("POST", "packages/pkorg/generic/lib/-/link/secret", nil, owner).Expect(t, http.StatusCreated)
	e.Do("DELETE", fmt.Sprintf("teams/%d/repos/pkorg/secret", team.ID), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("POST", "packages/pkorg/generic/lib/-/unlink", nil, mc).Expect(t, http.StatusNotFound)
	if r := linked(); r == nil || r.FullName != "pkorg/secret" {
		t.Fatalf("refused unlink changed the link to %+v", r)
	}
	e.Do("POST", "packages/pkorg/generic/lib/-/link/open", nil, owner).Expect(t, http.StatusCreated)
	e.Do("POST", "packages/pkorg/generic/lib/-/unlink", nil, mc).Expect(t, http.StatusForbidden)
	if r := linked(); r == nil || r.FullName != "pkorg/open" {
		t.Fatalf("refused unlink changed the link to %+v", r)
	}
	// A link to a repository that is gone is dropped by any writer of
	// the packages.
	e.Do("DELETE", "repos/pkorg/open", nil, owner).Expect(t, http.StatusNoContent)
	e.Do("POST", "packages/pkorg/generic/lib/-/unlink", nil, mc).Expect(t, http.StatusCreated)
	if r := linked(); r != nil {
		t.Fatalf("unlinked package still linked to %s", r.FullName)
	}
}
