package access

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

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

// fakeContent answers the policy's questions about an update.
type fakeContent struct {
	files   []string
	commits []*object.Commit
	err     error
}

func (f fakeContent) ChangedFiles(*gitstore.RefUpdate) ([]string, error) { return f.files, f.err }
func (f fakeContent) BroughtCommits(*gitstore.RefUpdate) ([]*object.Commit, error) {
	return f.commits, f.err
}

// goodSignatures verifies the commits whose signature reads "good".
func goodSignatures(commits []*object.Commit) ([]bool, error) {
	out := make([]bool, len(commits))
	for i, c := range commits {
		out[i] = c.Signature == "good"
	}
	return out, nil
}

// TestPushPolicyFilesAndSignatures: protected_file_patterns refuse a
// change of a protected file to everyone, unprotected_file_patterns let a
// writer who may not push change only such files, and
// require_signed_commits refuses a commit whose signature is not verified.
func TestPushPolicyFilesAndSignatures(t *testing.T) {
	t.Parallel()
	a, b := plumbing.NewHash("1111111111111111111111111111111111111111"), plumbing.NewHash("2222222222222222222222222222222222222222")
	rules := []*store.ProtectedBranch{
		{RuleName: "main", EnablePush: true, ProtectedFilePatterns: " *.lock ; .ci/** ;", UnprotectedFilePatterns: "docs/**"},
		{RuleName: "locked", UnprotectedFilePatterns: "docs/**;*.md"},
		{RuleName: "signed", EnablePush: true, RequireSignedCommits: true},
	}
	ff := func(branch string) *gitstore.RefUpdate {
		return &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName(branch), Old: a, New: b, FastForward: true}
	}
	create := func(branch string) *gitstore.RefUpdate {
		return &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName(branch), New: b}
	}
	for _, c := range []struct {
		name    string
		u       *gitstore.RefUpdate
		content Content
		want    Reason
		file    string
	}{
		{"main: ordinary files", ff("main"), fakeContent{files: []string{"src/a.go", "README.md"}}, 0, ""},
		{"main: a protected file (case-insensitive)", ff("main"), fakeContent{files: []string{"a.go", "Go.LOCK"}}, ProtectedFile, "Go.LOCK"},
		{"main: under a protected directory", ff("main"), fakeContent{files: []string{".ci/deep/x.yml"}}, ProtectedFile, ".ci/deep/x.yml"},
		{"main: * does not cross a dot or slash", ff("main"), fakeContent{files: []string{"x.lock.bak", "dir/y.lock"}}, 0, ""},
		{"main: creating with a protected file", create("main"), fakeContent{files: []string{"yarn.lock"}}, ProtectedFile, "yarn.lock"},
		{"locked: only unprotected files", ff("locked"), fakeContent{files: []string{"docs/a/b.txt", "NOTES.md"}}, 0, ""},
		{"locked: one other file too", ff("locked"), fakeContent{files: []string{"docs/a.txt", "main.go"}}, PushNotAllowed, ""},
		{"locked: no file changed", ff("locked"), fakeContent{}, PushNotAllowed, ""},
		{"locked: a rewrite stays a force push", &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("locked"), Old: a, New: b},
			fakeContent{files: []string{"docs/a.txt"}}, ForcePush, ""},
		{"signed: nothing brought", ff("signed"), fakeContent{}, 0, ""},
		{"signed: all verified", ff("signed"), fakeContent{commits: []*object.Commit{{Hash: b, Signature: "good"}, {Hash: a, Signature: "good"}}}, 0, ""},
		{"signed: one not verified", ff("signed"), fakeContent{commits: []*object.Commit{{Hash: b, Signature: "good"}, {Hash: a, Signature: "forged"}}}, UnverifiedCommit, a.String()},
		{"signed: one unsigned", ff("signed"), fakeContent{commits: []*object.Commit{{Hash: b}}}, UnverifiedCommit, b.String()},
		{"signed: too much history", ff("signed"), fakeContent{err: gitstore.ErrTooMuchHistory}, Unchecked, ""},
		{"signed: nothing to read it with", ff("signed"), nil, Unchecked, ""},
		{"unprotected branch: never asked", ff("free"), fakeContent{err: errors.New("must not be asked")}, 0, ""},
	} {
		pp := &PushPolicy{userID: 7, defaultBranch: "main", rules: rules}
		if c.content != nil {
			pp.WithContent(c.content).WithSignatureCheck(goodSignatures)
		}
		err := pp.Check(c.u)
		var r *Refusal
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != 0 && (!errors.As(err, &r) || r.Reason != c.want || !errors.Is(err, gitstore.ErrRefused)):
			t.Errorf("%s: %v, want reason %d", c.name, err, c.want)
		case c.want == ProtectedFile && r.File != c.file:
			t.Errorf("%s: names file %q, want %q", c.name, r.File, c.file)
		case c.want == UnverifiedCommit && r.Commit != c.file:
			t.Errorf("%s: names commit %q, want %q", c.name, r.Commit, c.file)
		}
	}
	// A failure to read the commits is not a refusal.
	pp := (&PushPolicy{userID: 7, rules: rules}).WithContent(fakeContent{err: errors.New("disk on fire")}).WithSignatureCheck(goodSignatures)
	var re *gitstore.RefError
	if err := pp.Check(ff("signed")); !errors.As(err, &re) || errors.Is(err, gitstore.ErrRefused) {
		t.Errorf("unreadable commits: %v", err)
	}
}

// TestPushPolicyDeployKey: a deploy key stands for no user; whitelists
// let it through only by their deploy-key flags.
func TestPushPolicyDeployKey(t *testing.T) {
	t.Parallel()
	a, b := plumbing.NewHash("1111111111111111111111111111111111111111"), plumbing.NewHash("2222222222222222222222222222222222222222")
	rules := []*store.ProtectedBranch{
		{RuleName: "open", EnablePush: true},
		{RuleName: "users", EnablePush: true, EnablePushWhitelist: true, PushWhitelistUserIDs: []int64{7}},
		{RuleName: "keys", EnablePush: true, EnablePushWhitelist: true, PushWhitelistDeployKeys: true, PushWhitelistUserIDs: []int64{7},
			EnableForcePush: true, EnableForcePushAllowlist: true, ForcePushAllowlistUserIDs: []int64{7}},
		{RuleName: "force", EnablePush: true, EnableForcePush: true, EnableForcePushAllowlist: true, ForcePushAllowlistDeployKeys: true},
	}
	ff := func(branch string) *gitstore.RefUpdate {
		return &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName(branch), Old: a, New: b, FastForward: true}
	}
	rewrite := func(branch string) *gitstore.RefUpdate {
		return &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName(branch), Old: a, New: b}
	}
	for _, c := range []struct {
		name      string
		u         *gitstore.RefUpdate
		deployKey bool
		want      Reason
	}{
		{"open: deploy key", ff("open"), true, 0},
		{"users: deploy key not on the list", ff("users"), true, PushNotAllowed},
		{"users: listed user", ff("users"), false, 0},
		{"keys: deploy keys listed", ff("keys"), true, 0},
		{"keys: force push, deploy keys not allowed", rewrite("keys"), true, ForcePush},
		{"keys: force push, listed user", rewrite("keys"), false, 0},
		{"force: force push, deploy keys allowed", rewrite("force"), true, 0},
		{"force: force push, user not listed", rewrite("force"), false, ForcePush},
	} {
		pp := &PushPolicy{userID: 7, defaultBranch: "main", rules: rules}
		if c.deployKey {
			pp = &PushPolicy{defaultBranch: "main", rules: rules}
			pp.AsDeployKey()
		}
		err := pp.Check(c.u)
		var r *Refusal
		if (c.want == 0) != (err == nil) || (c.want != 0 && (!errors.As(err, &r) || r.Reason != c.want)) {
			t.Errorf("%s: %v, want reason %d", c.name, err, c.want)
		}
	}
}
