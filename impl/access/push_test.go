package access

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"repohost/store"
	"repohost/store/gitstore"
)

// TestPushPolicyCheck: the one policy's verdicts, as every writer (git
// push, branches, contents, tags, releases) gets them.
func TestPushPolicyCheck(t *testing.T) {
	t.Parallel()
	a, b := plumbing.NewHash("1111111111111111111111111111111111111111"), plumbing.NewHash("2222222222222222222222222222222222222222")
	pp := &PushPolicy{userID: 7, teamIDs: []int64{3}, defaultBranch: "main", rules: []*store.ProtectedBranch{
		{RuleName: "main", EnablePush: true, EnablePushWhitelist: true, PushWhitelistUserIDs: []int64{7}},
		{RuleName: "locked"},
		{RuleName: "rel/*", EnablePush: true},
		{RuleName: "team", EnablePush: true, EnableForcePush: true, EnableForcePushAllowlist: true, ForcePushAllowlistTeamIDs: []int64{3}},
	}}
	branch := func(n string) plumbing.ReferenceName { return plumbing.NewBranchReferenceName(n) }
	cases := []struct {
		name string
		u    gitstore.RefUpdate
		want Reason // 0: allowed
	}{
		{"fast-forward by a whitelisted pusher", gitstore.RefUpdate{Name: branch("main"), Old: a, New: b, FastForward: true}, 0},
		{"rewrite of main", gitstore.RefUpdate{Name: branch("main"), Old: a, New: b}, ForcePush},
		{"delete the default branch", gitstore.RefUpdate{Name: branch("main"), Old: a}, DefaultBranchDeletion},
		{"push to a locked branch", gitstore.RefUpdate{Name: branch("locked"), Old: a, New: b, FastForward: true}, PushNotAllowed},
		{"create a locked branch", gitstore.RefUpdate{Name: branch("locked"), New: b}, PushNotAllowed},
		{"create under a glob that allows pushing", gitstore.RefUpdate{Name: branch("rel/1"), New: b}, 0},
		{"rewrite under that glob", gitstore.RefUpdate{Name: branch("rel/1"), Old: a, New: b}, ForcePush},
		{"delete under that glob", gitstore.RefUpdate{Name: branch("rel/1"), Old: a}, ProtectedDeletion},
		{"rewrite by an allowed team", gitstore.RefUpdate{Name: branch("team"), Old: a, New: b}, 0},
		{"anything on an unprotected branch", gitstore.RefUpdate{Name: branch("free"), Old: a}, 0},
		{"tags are not protected", gitstore.RefUpdate{Name: plumbing.NewTagReferenceName("main"), Old: a}, 0},
	}
	for _, c := range cases {
		err := pp.Check(&c.u)
		var r *Refusal
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != 0 && (!errors.As(err, &r) || r.Reason != c.want || !errors.Is(err, gitstore.ErrRefused)):
			t.Errorf("%s: %v, want reason %d", c.name, err, c.want)
		}
	}

	// Renames: the default branch and exact-rule branches need an admin;
	// glob-protected ones never move.
	for _, c := range []struct {
		from  string
		admin bool
		want  Reason
	}{
		{"main", false, RenameNeedsAdmin}, {"main", true, 0}, {"locked", false, RenameNeedsAdmin},
		{"rel/1", true, RenameGlobProtected}, {"free", false, 0},
	} {
		err := pp.WithAdmin(c.admin).CheckRename(c.from)
		var r *Refusal
		if (c.want == 0) != (err == nil) || (c.want != 0 && (!errors.As(err, &r) || r.Reason != c.want)) {
			t.Errorf("rename %s (admin %v): %v, want reason %d", c.from, c.admin, err, c.want)
		}
	}
}
