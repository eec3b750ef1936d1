package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// crowd makes n accounts named prefix0… with a token each.
func crowd(t *testing.T, e *apitest.Env, prefix string, n int) []apitest.Cred {
	t.Helper()
	out := make([]apitest.Cred, n)
	for i := range out {
		a := e.CreateUser(fmt.Sprintf("%s%d", prefix, i), false)
		out[i] = apitest.TokenCred(e.Token(a))
	}
	return out
}

// all sends one request per credential at once and expects status from each.
func all(t *testing.T, e *apitest.Env, creds []apitest.Cred, method, path string, status int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range creds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.DoFor(t, method, path, nil, c); r.Status != status {
				t.Errorf("%s %s: %d %s", method, path, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
}

func getUser(t *testing.T, e *apitest.Env, name string, cred apitest.Cred) *models.User {
	t.Helper()
	var u models.User
	e.Do("GET", "users/"+name, nil, cred).Expect(t, http.StatusOK).JSON(t, &u)
	return &u
}

func getRepo(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) *models.Repository {
	t.Helper()
	var r models.Repository
	e.Do("GET", "repos/"+path, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	return &r
}

func TestStarsConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	fans := crowd(t, e, "fan", 50)

	all(t, e, fans, "PUT", "user/starred/alice/proj", http.StatusNoContent)
	if r := getRepo(t, e, "alice/proj", ac); r.Stars != 50 {
		t.Fatalf("after 50 stars: stars_count %d", r.Stars)
	}
	// Starring again changes nothing.
	all(t, e, fans[:5], "PUT", "user/starred/alice/proj", http.StatusNoContent)
	if r := getRepo(t, e, "alice/proj", ac); r.Stars != 50 {
		t.Fatalf("after stars again: stars_count %d", r.Stars)
	}
	if u := getUser(t, e, "fan7", ac); u.StarredRepos != 1 {
		t.Fatalf("fan7 starred_repos_count %d", u.StarredRepos)
	}
	r := e.Do("GET", "repos/alice/proj/stargazers?limit=20&page=2", nil, nil).Expect(t, http.StatusOK)
	var gazers []*models.User
	r.JSON(t, &gazers)
	if len(gazers) != 20 || r.Header.Get("X-Total-Count") != "50" || r.Header.Get("Link") == "" || gazers[0].UserName != "fan20" {
		t.Fatalf("stargazers page 2: %d users (first %v), total %q", len(gazers), gazers[0].UserName, r.Header.Get("X-Total-Count"))
	}

	all(t, e, fans, "DELETE", "user/starred/alice/proj", http.StatusNoContent)
	if r := getRepo(t, e, "alice/proj", ac); r.Stars != 0 {
		t.Fatalf("after 50 unstars: stars_count %d", r.Stars)
	}
	if u := getUser(t, e, "fan7", ac); u.StarredRepos != 0 {
		t.Fatalf("fan7 starred_repos_count after unstar %d", u.StarredRepos)
	}
	e.Do("GET", "user/starred/alice/proj", nil, fans[0]).Expect(t, http.StatusNotFound)
}

func TestStarsVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	carol := e.CreateUser("carol", false)
	ac, bc, cc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
	e.Do("POST", "user/repos", map[string]any{"name": "open"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, ac).Expect(t, http.StatusCreated)

	// Not visible: 404 as if missing, for each route; anonymous: 401.
	e.Do("PUT", "user/starred/alice/secret", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PUT", "user/starred/alice/nothing", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PUT", "user/starred/alice/open", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "repos/alice/secret/stargazers", nil, bc).Expect(t, http.StatusNotFound)

	// bob collaborates, stars both, then loses access to the private one.
	e.Do("PUT", "repos/alice/secret/collaborators/bob", map[string]any{"permission": "read"}, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/starred/alice/secret", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/starred/alice/open", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/starred/alice/secret", nil, bc).Expect(t, http.StatusNoContent)
	names := func(path string, cred apitest.Cred) []string {
		var repos []*models.Repository
		r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &repos)
		out := []string{}
		for _, x := range repos {
			out = append(out, x.Name)
		}
		return append(out, "total="+r.Header.Get("X-Total-Count"))
	}
	if got := fmt.Sprint(names("user/starred", bc)); got != "[open secret total=2]" {
		t.Fatalf("bob's starred: %s", got)
	}
	// carol sees only the public one among bob's stars.
	if got := fmt.Sprint(names("users/bob/starred", cc)); got != "[open total=1]" {
		t.Fatalf("bob's starred as carol sees them: %s", got)
	}
	if got := fmt.Sprint(names("users/bob/starred", nil)); got != "[open total=1]" {
		t.Fatalf("bob's starred anonymously: %s", got)
	}
	e.Do("DELETE", "repos/alice/secret/collaborators/bob", nil, ac).Expect(t, http.StatusNoContent)
	if got := fmt.Sprint(names("user/starred", bc)); got != "[open total=1]" {
		t.Fatalf("bob's starred after losing access: %s", got)
	}
	e.Do("GET", "user/starred/alice/secret", nil, bc).Expect(t, http.StatusNotFound)
	// The owner still counts the star and lists its stargazer.
	if r := getRepo(t, e, "alice/secret", ac); r.Stars != 1 {
		t.Fatalf("secret stars_count %d", r.Stars)
	}

	// Scopes: read:user lists, write:user stars; read:repository the stargazers.
	readUser := apitest.TokenCred(e.Token(bob, "read:user"))
	e.Do("GET", "user/starred", nil, readUser).Expect(t, http.StatusOK)
	e.Do("PUT", "user/starred/alice/open", nil, readUser).Expect(t, http.StatusForbidden)
	readRepo := apitest.TokenCred(e.Token(bob, "read:repository"))
	e.Do("GET", "repos/alice/open/stargazers", nil, readRepo).Expect(t, http.StatusOK)
	e.Do("GET", "user/starred", nil, readRepo).Expect(t, http.StatusForbidden)

	// Deleting a repository takes its stars off the users' counts.
	e.Do("DELETE", "repos/alice/open", nil, ac).Expect(t, http.StatusNoContent)
	if u := getUser(t, e, "bob", bc); u.StarredRepos != 1 {
		t.Fatalf("bob starred_repos_count after a starred repository went: %d", u.StarredRepos)
	}
}

func TestFollowsConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	fans := crowd(t, e, "fan", 50)

	all(t, e, fans, "PUT", "user/following/alice", http.StatusNoContent)
	if u := getUser(t, e, "alice", ac); u.Followers != 50 || u.Following != 0 {
		t.Fatalf("after 50 follows: followers %d following %d", u.Followers, u.Following)
	}
	if u := getUser(t, e, "fan3", ac); u.Following != 1 || u.Followers != 0 {
		t.Fatalf("fan3: followers %d following %d", u.Followers, u.Following)
	}
	r := e.Do("GET", "users/alice/followers?limit=10", nil, nil).Expect(t, http.StatusOK)
	var fs []*models.User
	r.JSON(t, &fs)
	if len(fs) != 10 || r.Header.Get("X-Total-Count") != "50" || fs[0].UserName != "fan0" {
		t.Fatalf("alice's followers: %d, total %q", len(fs), r.Header.Get("X-Total-Count"))
	}
	e.Do("GET", "users/fan3/following/alice", nil, nil).Expect(t, http.StatusNoContent)
	e.Do("GET", "users/alice/following/fan3", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "user/following/alice", nil, fans[3]).Expect(t, http.StatusNoContent)

	all(t, e, fans, "DELETE", "user/following/alice", http.StatusNoContent)
	if u := getUser(t, e, "alice", ac); u.Followers != 0 {
		t.Fatalf("after 50 unfollows: followers %d", u.Followers)
	}
	if u := getUser(t, e, "fan3", ac); u.Following != 0 {
		t.Fatalf("fan3 after unfollow: following %d", u.Following)
	}
	// Following oneself records nothing, as the reference answers.
	e.Do("PUT", "user/following/alice", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/following/alice", nil, ac).Expect(t, http.StatusNotFound)
	if u := getUser(t, e, "alice", ac); u.Followers != 0 || u.Following != 0 {
		t.Fatalf("after following oneself: %d %d", u.Followers, u.Following)
	}
	e.Do("PUT", "user/following/nobody", nil, ac).Expect(t, http.StatusNotFound)
}

// TestFollowOrganizations: an organization may be followed, as the
// reference allows; whom a user follows lists it beside people, its
// followers list the user, and a private organization stays unseen by
// those outside it.
func TestFollowOrganizations(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	bob := e.CreateUser("bob", false)
	bc := apitest.Basic(bob)
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs", map[string]any{"username": "hidden", "visibility": "private"}, ac).Expect(t, http.StatusCreated)

	e.Do("PUT", "user/following/acme", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/following/acme", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "users/bob/following/acme", nil, nil).Expect(t, http.StatusNoContent)
	var following []*models.User
	r := e.Do("GET", "users/bob/following", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &following)
	if len(following) != 2 || r.Header.Get("X-Total-Count") != "2" || following[0].UserName != "alice" || following[1].UserName != "acme" {
		t.Fatalf("bob follows %d (total %q): %+v", len(following), r.Header.Get("X-Total-Count"), following)
	}
	var followers []*models.User
	e.Do("GET", "users/acme/followers", nil, nil).Expect(t, http.StatusOK).JSON(t, &followers)
	if len(followers) != 1 || followers[0].UserName != "bob" {
		t.Fatalf("acme's followers: %+v", followers)
	}
	if u := getUser(t, e, "bob", bc); u.Following != 2 {
		t.Fatalf("bob follows %d", u.Following)
	}

	// A private organization answers as a missing one to an outsider.
	e.Do("PUT", "user/following/hidden", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "user/following/acme", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/following/acme", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("GET", "users/bob/following", nil, nil).Expect(t, http.StatusOK).JSON(t, &following)
	if len(following) != 1 || following[0].UserName != "alice" {
		t.Fatalf("bob follows after unfollowing acme: %+v", following)
	}
}

func TestUserBlocks(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "user/repos", map[string]any{"name": "mine"}, bc).Expect(t, http.StatusCreated)
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/following/bob", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/starred/bob/mine", nil, ac).Expect(t, http.StatusNoContent)

	e.Do("GET", "user/blocks/bob", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("PUT", "user/blocks/bob?note=spam", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/blocks/bob", nil, ac).Expect(t, http.StatusBadRequest)   // already
	e.Do("PUT", "user/blocks/alice", nil, ac).Expect(t, http.StatusBadRequest) // oneself
	e.Do("GET", "user/blocks/bob", nil, ac).Expect(t, http.StatusNoContent)
	var blocked []*models.User
	r := e.Do("GET", "user/blocks", nil, ac).Expect(t, http.StatusOK)
	r.JSON(t, &blocked)
	if len(blocked) != 1 || blocked[0].UserName != "bob" || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("alice's blocks: %+v", blocked)
	}
	// The follows both ways and the stars both ways are gone.
	for _, name := range []string{"alice", "bob"} {
		if u := getUser(t, e, name, ac); u.Followers != 0 || u.Following != 0 || u.StarredRepos != 0 {
			t.Fatalf("%s after the block: %+v", name, u)
		}
	}
	if r := getRepo(t, e, "alice/proj", ac); r.Stars != 0 {
		t.Fatalf("alice/proj stars after the block: %d", r.Stars)
	}
	// Neither can follow the other; bob cannot star alice's repositories.
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("PUT", "user/following/bob", nil, ac).Expect(t, http.StatusForbidden)
	e.Do("PUT", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("PUT", "user/starred/bob/mine", nil, ac).Expect(t, http.StatusNoContent)

	e.Do("DELETE", "user/blocks/bob", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "user/blocks/bob", nil, ac).Expect(t, http.StatusBadRequest)
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusNoContent)
}

func TestUserSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	var s models.UserSettings
	e.Do("GET", "user/settings", nil, ac).Expect(t, http.StatusOK).JSON(t, &s)
	if s.Theme != "gitea-auto" || s.HideEmail || s.Language != "" {
		t.Fatalf("initial settings %+v", s)
	}
	e.Do("PATCH", "user/settings", map[string]any{"full_name": "Alice A", "language": "de_de", "hide_email": true,
		"theme": "gitea-dark", "diff_view_style": "split", "hide_activity": true, "location": "Here",
		"website": "https://a.example", "description": "hi"}, ac).Expect(t, http.StatusOK).JSON(t, &s)
	want := models.UserSettings{FullName: "Alice A", Language: "de_de", HideEmail: true, Theme: "gitea-dark",
		DiffViewStyle: "split", HideActivity: true, Location: "Here", Website: "https://a.example", Description: "hi"}
	if s != want {
		t.Fatalf("after the change %+v", s)
	}
	var again models.UserSettings
	e.Do("GET", "user/settings", nil, ac).Expect(t, http.StatusOK).JSON(t, &again)
	if again != want {
		t.Fatalf("read back %+v", again)
	}
	// Fields left out stay; hide_email hides the address from others.
	e.Do("PATCH", "user/settings", map[string]any{"language": ""}, ac).Expect(t, http.StatusOK).JSON(t, &s)
	if s.Language != "" || s.FullName != "Alice A" || !s.HideEmail {
		t.Fatalf("after a partial change %+v", s)
	}
	bob := e.CreateUser("bob", false)
	if u := getUser(t, e, "alice", apitest.Basic(bob)); u.Email == "alice@example.com" || u.FullName != "Alice A" {
		t.Fatalf("alice as bob sees her: %+v", u)
	}
	e.Do("GET", "user/settings", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PATCH", "user/settings", map[string]any{"theme": "x"}, apitest.TokenCred(e.Token(alice, "read:user"))).
		Expect(t, http.StatusForbidden)
}

// TestStarredListCached: with the read caches on, a star or unstar shows
// at once in the starred lists and the counters.
func TestStarredListCached(t *testing.T) {
	t.Parallel()
	e := apitest.NewCached(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	count := func() string {
		return e.Do("GET", "users/bob/starred", nil, ac).Expect(t, http.StatusOK).Header.Get("X-Total-Count")
	}
	for i := 0; i < 3; i++ {
		if n := count(); n != "0" {
			t.Fatalf("round %d before the star: %s", i, n)
		}
		e.Do("PUT", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusNoContent)
		if n, r, u := count(), getRepo(t, e, "alice/proj", ac), getUser(t, e, "bob", ac); n != "1" || r.Stars != 1 || u.StarredRepos != 1 {
			t.Fatalf("round %d after the star: listed %s, stars %d, starred %d", i, n, r.Stars, u.StarredRepos)
		}
		e.Do("DELETE", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusNoContent)
		if r := getRepo(t, e, "alice/proj", ac); r.Stars != 0 {
			t.Fatalf("round %d after the unstar: stars %d", i, r.Stars)
		}
	}
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusNoContent)
	if u := getUser(t, e, "alice", bc); u.Followers != 1 {
		t.Fatalf("followers after a follow, cached: %d", u.Followers)
	}
}

// TestPeopleCountersOnUserDelete: deleting a user takes its follows and
// stars off the counts of the users and repositories they were counted in.
func TestPeopleCountersOnUserDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := e.CreateUser("root", true)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "user/starred/alice/proj", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/following/alice", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "user/following/bob", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "admin/users/bob", nil, apitest.Basic(admin)).Expect(t, http.StatusNoContent)
	if u := getUser(t, e, "alice", ac); u.Followers != 0 || u.Following != 0 {
		t.Fatalf("alice after bob went: followers %d following %d", u.Followers, u.Following)
	}
	if r := getRepo(t, e, "alice/proj", ac); r.Stars != 0 {
		t.Fatalf("alice/proj after its stargazer went: %d", r.Stars)
	}
}

// TestUserBlockEndsTies: as in the reference, a block also takes each of
// the two off the assignees of the other's issues (a timeline entry each),
// ends their collaborations on each other's repositories, and drops the
// transfers of one's repositories waiting for the other.
func TestUserBlockEndsTies(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	roCreateRepo(t, e, ac, map[string]any{"name": "proj"})
	roCreateRepo(t, e, ac, map[string]any{"name": "gift"})
	roCreateRepo(t, e, bc, map[string]any{"name": "mine"})
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", "repos/bob/mine/collaborators/alice", map[string]any{"permission": "write"}, bc).Expect(t, http.StatusNoContent)
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "both", "assignees": []string{"alice", "bob"}}, ac).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/bob/mine/issues", map[string]any{"title": "hers", "assignees": []string{"alice"}}, bc).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/gift/transfer", map[string]any{"new_owner": "bob"}, ac).Expect(t, http.StatusAccepted)

	e.Do("PUT", "user/blocks/bob", nil, ac).Expect(t, http.StatusNoContent)

	var is models.Issue
	e.Do("GET", "repos/alice/proj/issues/1", nil, ac).Expect(t, http.StatusOK).JSON(t, &is)
	if len(is.Assignees) != 1 || is.Assignees[0].UserName != "alice" {
		t.Errorf("alice/proj#1 assignees after the block: %+v", is.Assignees)
	}
	var list []*models.TimelineComment
	e.Do("GET", "repos/alice/proj/issues/1/timeline", nil, ac).Expect(t, http.StatusOK).JSON(t, &list)
	if got := timelineTypes(list); !strings.HasSuffix(got, "assignees:bob:true") {
		t.Errorf("alice/proj#1 timeline after the block: %s", got)
	}
	e.Do("GET", "repos/bob/mine/issues/1", nil, bc).Expect(t, http.StatusOK).JSON(t, &is)
	if len(is.Assignees) != 0 {
		t.Errorf("bob/mine#1 assignees after the block: %+v", is.Assignees)
	}
	e.Do("GET", "repos/alice/proj/collaborators/bob", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/bob/mine/collaborators/alice", nil, bc).Expect(t, http.StatusNotFound)
	var gift models.Repository
	e.Do("GET", "repos/alice/gift", nil, ac).Expect(t, http.StatusOK).JSON(t, &gift)
	if gift.Owner.UserName != "alice" {
		t.Errorf("gift owner %s", gift.Owner.UserName)
	}
	e.Do("POST", "repos/alice/gift/transfer/accept", nil, bc).Expect(t, http.StatusNotFound)
}
