package apitest_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"repohost/apitest"
	"repohost/store"
)

// Keyword searches of repositories and users are read through trigram
// indexes (store/sqlstore/search_names.go) for keywords of three
// characters or more, and by the plain scan below that; the rule is the
// same either way: a substring of the name (or topic, description,
// "owner/name"; a user's full name), case-insensitive, among what the
// caller may see. The index follows renames, edits and deletes at once.
func TestRepoKeywordSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	hermit := e.CreateUser("hermit", false)
	utUpdate(t, e, hermit, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	ca, cb := apitest.Basic(alice), apitest.Basic(bob)
	roCreateRepo(t, e, ca, map[string]any{"name": "Kettle-Works", "description": "Brews TEA quickly"})
	roCreateRepo(t, e, ca, map[string]any{"name": "kettle-secret", "private": true})
	roCreateRepo(t, e, cb, map[string]any{"name": "teapot"})
	roCreateRepo(t, e, apitest.Basic(hermit), map[string]any{"name": "kettle-hermit"})
	ctx := context.Background()
	teapot, err := e.DB.Repos().FindByName(ctx, bob.User.ID, "teapot")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DB.Topics().Update(ctx, teapot.ID, func([]string) ([]string, error) { return []string{"steamy"}, nil }); err != nil {
		t.Fatal(err)
	}
	callers := map[string]apitest.Cred{"anonymous": nil, "bob": cb, "alice": ca, "admin": apitest.Basic(e.Admin)}
	check := func(t *testing.T, query, caller, want string) {
		t.Helper()
		page, total, _ := roSearch(t, e, callers[caller], query+"&sort=alpha&limit=50")
		var names []string
		for _, r := range page {
			names = append(names, r.FullName)
		}
		slices.Sort(names)
		if got := utJoin(names); got != want || total != len(names) {
			t.Errorf("%s as %s: got %q (total %d), want %q", query, caller, got, total, want)
		}
	}
	q := func(kw string) string { return "q=" + url.QueryEscape(kw) }
	for _, tc := range []struct{ query, caller, want string }{
		// Substring, any case, through the index.
		{q("ETTLE-wo"), "anonymous", "alice/Kettle-Works"},
		{q("kettle"), "anonymous", "alice/Kettle-Works"},
		{q("kettle"), "bob", "alice/Kettle-Works"},
		{q("kettle"), "alice", "alice/Kettle-Works,alice/kettle-secret"},
		{q("kettle"), "admin", "alice/Kettle-Works,alice/kettle-secret,hermit/kettle-hermit"},
		// Topics, descriptions when asked, owner/name.
		{q("eam"), "anonymous", "bob/teapot"},
		{q("tea"), "anonymous", "bob/teapot"},
		{q("tea") + "&includeDesc=true", "anonymous", "alice/Kettle-Works,bob/teapot"},
		{q("alice/works"), "bob", "alice/Kettle-Works"},
		{q("ali/kettle-s"), "bob", ""},
		{q("ali/kettle-s"), "alice", "alice/kettle-secret"},
		{q("ali/k"), "alice", "alice/Kettle-Works,alice/kettle-secret"},
		{q("tea, cret"), "alice", "alice/kettle-secret,bob/teapot"},
		// Shorter than a trigram: the scan, same rule.
		{q("Tt"), "anonymous", "alice/Kettle-Works"},
		{q("tt"), "alice", "alice/Kettle-Works,alice/kettle-secret"},
		{q("t"), "bob", "alice/Kettle-Works,bob/teapot"},
		// Wildcards and quotes are plain characters.
		{q("%"), "admin", ""},
		{q(`"tea`), "admin", ""},
		{q("k_ttle"), "admin", ""},
	} {
		check(t, tc.query, tc.caller, tc.want)
	}
	// Edits are found at once.
	e.Do("PATCH", "repos/alice/Kettle-Works", map[string]any{"description": "coffee", "name": "boiler"}, ca).Expect(t, http.StatusOK)
	check(t, q("tea")+"&includeDesc=true", "anonymous", "bob/teapot")
	check(t, q("kettle"), "anonymous", "")
	check(t, q("OILE"), "anonymous", "alice/boiler")
	check(t, q("offe")+"&includeDesc=true", "bob", "alice/boiler")
	e.Do("DELETE", "repos/bob/teapot", nil, cb).Expect(t, http.StatusNoContent)
	check(t, q("teapot"), "admin", "")
	check(t, q("eam"), "admin", "")
}

func TestUserKeywordSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	zeb := e.CreateUser("Zebedee", false)
	utUpdate(t, e, zeb, func(u *store.User) { u.FullName = "Captain Marvelous" })
	hidden := e.CreateUser("zelda-hidden", false)
	utUpdate(t, e, hidden, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	lim := e.CreateUser("zed-limited", false)
	utUpdate(t, e, lim, func(u *store.User) { u.Visibility = store.VisibilityLimited })
	utOrg(t, e, "zebra-org", store.VisibilityPublic, nil)
	callers := map[string]apitest.Cred{"anonymous": nil, "zebedee": apitest.Basic(zeb), "admin": apitest.Basic(e.Admin),
		"zelda": apitest.Basic(hidden)}
	check := func(t *testing.T, kw, caller, want string) {
		t.Helper()
		r := e.Do("GET", "users/search?limit=50&q="+url.QueryEscape(kw), nil, callers[caller]).Expect(t, http.StatusOK)
		var out struct {
			Data []struct {
				Login string `json:"login"`
			} `json:"data"`
		}
		r.JSON(t, &out)
		var names []string
		for _, u := range out.Data {
			names = append(names, u.Login)
		}
		slices.Sort(names)
		if got := utJoin(names); got != want || r.Header.Get("X-Total-Count") != strconv.Itoa(len(names)) {
			t.Errorf("%q as %s: got %q (total %s), want %q", kw, caller, got, r.Header.Get("X-Total-Count"), want)
		}
	}
	for _, tc := range []struct{ kw, caller, want string }{
		{"BEDE", "anonymous", "Zebedee"},
		{"marvel", "anonymous", "Zebedee"},
		{"TAIN MA", "anonymous", "Zebedee"},
		{"zelda", "anonymous", ""},
		{"zelda", "zebedee", ""},
		{"zelda", "zelda", "zelda-hidden"},
		{"zelda", "admin", "zelda-hidden"},
		{"limited", "anonymous", ""},
		{"limited", "zebedee", "zed-limited"},
		{"zebra", "admin", ""}, // organizations are not users
		// Shorter than a trigram: the scan, same rule.
		{"ZE", "anonymous", "Zebedee"},
		{"ze", "zebedee", "Zebedee,zed-limited"},
		{"ze", "admin", "Zebedee,zed-limited,zelda-hidden"},
		{"%", "admin", ""},
	} {
		check(t, tc.kw, tc.caller, tc.want)
	}
	utUpdate(t, e, zeb, func(u *store.User) { u.FullName = "Admiral Nobody" })
	check(t, "marvel", "anonymous", "")
	check(t, "miral", "anonymous", "Zebedee")
}
