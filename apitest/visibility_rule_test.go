package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// vrWorld has an owner of every kind and visibility, each with a public
// repository "pub" and a private one "priv".
type vrWorld struct {
	repos []string // every "owner/name"
	// orgs and users are the owners by kind.
	orgs, users []string
	// memberOf lists, by caller login, the organizations it belongs to.
	memberOf map[string][]string
}

// vrCaller is one kind of caller; login is the account behind it ("" when
// anonymous).
type vrCaller struct {
	name  string
	login string
	cred  apitest.Cred
	// sees is what the rule of impl/access grants this caller, written out
	// by hand so the test does not merely compare two wrong answers.
	sees []string
}

func vrSetup(t *testing.T, e *apitest.Env) (vrWorld, map[string]*apitest.Account) {
	t.Helper()
	admin := apitest.Basic(e.Admin)
	acct := map[string]*apitest.Account{}
	for _, name := range []string{"upub", "ulim", "upriv", "boss", "member", "rmember", "outsider", "restricted"} {
		acct[name] = e.CreateUser(name, false)
	}
	edit := func(login string, fields map[string]any) {
		fields["login_name"], fields["source_id"] = login, 0
		e.Do("PATCH", "admin/users/"+login, fields, admin).Expect(t, http.StatusOK)
	}
	edit("ulim", map[string]any{"visibility": "limited"})
	edit("upriv", map[string]any{"visibility": "private"})
	edit("restricted", map[string]any{"restricted": true})
	edit("rmember", map[string]any{"restricted": true})

	w := vrWorld{users: []string{"upub", "ulim", "upriv"}, orgs: []string{"opub", "olim", "opriv"},
		memberOf: map[string][]string{}}
	for _, u := range w.users {
		cred := apitest.Basic(acct[u])
		roCreateRepo(t, e, cred, map[string]any{"name": "pub"})
		roCreateRepo(t, e, cred, map[string]any{"name": "priv", "private": true})
		w.repos = append(w.repos, u+"/pub", u+"/priv")
	}
	boss := apitest.Basic(acct["boss"])
	for i, vis := range []string{"public", "limited", "private"} {
		org := w.orgs[i]
		o := roCreateOrg(t, e, boss, map[string]any{"username": org, "visibility": vis})
		e.Do("POST", "orgs/"+org+"/repos", map[string]any{"name": "pub"}, boss).Expect(t, http.StatusCreated)
		e.Do("POST", "orgs/"+org+"/repos", map[string]any{"name": "priv", "private": true}, boss).Expect(t, http.StatusCreated)
		w.repos = append(w.repos, org+"/pub", org+"/priv")
		roAddMember(t, e, o.ID, acct["member"], false, false)
		roAddMember(t, e, o.ID, acct["rmember"], false, false)
		for _, login := range []string{"boss", "member", "rmember"} {
			w.memberOf[login] = append(w.memberOf[login], org)
		}
	}
	return w, acct
}

func vrCallers(e *apitest.Env, w vrWorld, acct map[string]*apitest.Account) []vrCaller {
	publicOnly := func(a *apitest.Account) apitest.Cred {
		return apitest.TokenCred(e.Token(a, "public-only", "read:repository", "read:user", "read:organization"))
	}
	public := []string{"upub/pub", "opub/pub"}
	withLimited := append([]string{"ulim/pub", "olim/pub"}, public...)
	orgRepos := []string{"opub/pub", "opub/priv", "olim/pub", "olim/priv", "opriv/pub", "opriv/priv"}
	return []vrCaller{
		{"anonymous", "", nil, public},
		{"public-only token of an org member", "member", publicOnly(acct["member"]), public},
		{"public-only token of a site admin", "admin", publicOnly(e.Admin), public},
		{"public-only token of a private user", "upriv", publicOnly(acct["upriv"]), public},
		{"normal user", "outsider", apitest.Basic(acct["outsider"]), withLimited},
		// A restricted user reaches only what it was given, public or not.
		{"restricted user", "restricted", apitest.Basic(acct["restricted"]), nil},
		{"org member", "member", apitest.Basic(acct["member"]), append([]string{"upub/pub", "ulim/pub"}, orgRepos...)},
		{"restricted org member", "rmember", apitest.Basic(acct["rmember"]), orgRepos},
		{"org owner", "boss", apitest.Basic(acct["boss"]), append([]string{"upub/pub", "ulim/pub"}, orgRepos...)},
		{"repo owner (public user)", "upub", apitest.Basic(acct["upub"]), append([]string{"upub/priv"}, withLimited...)},
		{"repo owner (limited user)", "ulim", apitest.Basic(acct["ulim"]), append([]string{"ulim/priv"}, withLimited...)},
		{"repo owner (private user)", "upriv", apitest.Basic(acct["upriv"]), append([]string{"upriv/pub", "upriv/priv"}, withLimited...)},
		{"site admin", "admin", apitest.Basic(e.Admin), w.repos},
	}
}

// vrNames is the sorted full names of a list answer.
func vrNames(repos []*models.Repository) []string {
	out := []string{}
	for _, r := range repos {
		out = append(out, r.FullName)
	}
	sort.Strings(out)
	return out
}

func vrSorted(names []string) []string {
	out := append([]string{}, names...)
	sort.Strings(out)
	return out
}

// vrOwnedBy keeps the names whose owner passes keep.
func vrOwnedBy(names []string, keep func(owner string) bool) []string {
	out := []string{}
	for _, n := range names {
		if owner, _, _ := strings.Cut(n, "/"); keep(owner) {
			out = append(out, n)
		}
	}
	return out
}

// vrList reads a repository list answer, 404 giving ok false.
func vrList(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) (names []string, ok bool) {
	t.Helper()
	r := e.Do("GET", path, nil, cred)
	if r.Status == http.StatusNotFound {
		return nil, false
	}
	r.Expect(t, http.StatusOK)
	var repos []*models.Repository
	r.JSON(t, &repos)
	return vrNames(repos), true
}

// TestRepoVisibilityIsOneRule: for every kind of caller, the repositories
// GET /repos/{owner}/{repo} shows (the single-repository check) are exactly
// the ones /repos/search lists (the SQL filter), and the owner and
// "my repositories" lists agree with them too. Before the SQL filter got the
// caller's restricted flag, a restricted user found a limited
// organization's repository through search that answered 404 when opened.
func TestRepoVisibilityIsOneRule(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w, acct := vrSetup(t, e)
	for _, c := range vrCallers(e, w, acct) {
		t.Run(c.name, func(t *testing.T) {
			opened := []string{}
			for _, full := range w.repos {
				switch st := e.Do("GET", "repos/"+full, nil, c.cred).Status; st {
				case http.StatusOK:
					opened = append(opened, full)
				case http.StatusNotFound:
				default:
					t.Fatalf("GET repos/%s: status %d", full, st)
				}
			}
			opened = vrSorted(opened)
			if want := vrSorted(c.sees); !slices.Equal(opened, want) {
				t.Fatalf("GET /repos/{owner}/{repo} shows %v, the rule grants %v", opened, want)
			}

			found, total, _ := roSearch(t, e, c.cred, "limit=50")
			if got := vrNames(found); !slices.Equal(got, opened) || total != len(got) {
				t.Errorf("/repos/search lists %v (total %d), GET shows %v", got, total, opened)
			}
			vrCheckOwnerLists(t, e, w, c, opened)
			vrCheckMyRepos(t, e, w, c, opened)
		})
	}
}

// vrCheckOwnerLists: an owner's list holds exactly its repositories the
// caller can open, and answers 404 only when the caller can open none.
func vrCheckOwnerLists(t *testing.T, e *apitest.Env, w vrWorld, c vrCaller, opened []string) {
	t.Helper()
	check := func(path, owner string) {
		want := vrOwnedBy(opened, func(o string) bool { return o == owner })
		got, ok := vrList(t, e, path+"?limit=50", c.cred)
		switch {
		case !ok && len(want) > 0:
			t.Errorf("%s answers 404, yet GET shows %v", path, want)
		case ok && !slices.Equal(got, want):
			t.Errorf("%s lists %v, GET shows %v", path, got, want)
		}
	}
	for _, owner := range append(append([]string{}, w.users...), w.orgs...) {
		check(fmt.Sprintf("users/%s/repos", owner), owner)
	}
	for _, org := range w.orgs {
		check(fmt.Sprintf("orgs/%s/repos", org), org)
	}
}

// vrCheckMyRepos: /user/repos holds the repositories the caller can open
// among those it owns or reaches as an organization member.
func vrCheckMyRepos(t *testing.T, e *apitest.Env, w vrWorld, c vrCaller, opened []string) {
	t.Helper()
	if c.login == "" {
		e.Do("GET", "user/repos", nil, c.cred).Expect(t, http.StatusUnauthorized)
		return
	}
	want := vrOwnedBy(opened, func(owner string) bool {
		return owner == c.login || slices.Contains(w.memberOf[c.login], owner)
	})
	got, _ := vrList(t, e, "user/repos?limit=50", c.cred)
	if !slices.Equal(got, want) {
		t.Errorf("/user/repos lists %v, want %v", got, want)
	}
}
