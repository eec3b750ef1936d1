package store_test

import (
	"testing"

	"repohost/store"
)

func TestProtectionRuleMatching(t *testing.T) {
	rules := []*store.ProtectedBranch{
		{ID: 1, RuleName: "release/*"},
		{ID: 3, RuleName: "release/1"},
		{ID: 4, RuleName: "{dev,stage}-?"},
		{ID: 5, RuleName: "hot[!x]ix"},
		{ID: 2, RuleName: "**"},
	}
	for branch, want := range map[string]int64{
		"release/1":   3, // an exact name wins over any glob
		"release/2":   1, // the first glob in priority order
		"release/2/a": 2, // "*" stays in one segment, "**" does not
		"main":        2,
		"dev-1":       4,
		"hotfix":      5,
	} {
		got := store.MatchRule(rules, branch)
		if got == nil || got.ID != want {
			t.Errorf("%s: rule %+v, want %d", branch, got, want)
		}
	}
	if got := store.MatchRule(rules[:1], "main"); got != nil {
		t.Errorf("main matched %+v", got)
	}
	for glob, cases := range map[string]map[string]bool{
		"**.go":      {"a.go": true, "a/b/c.go": true, "a.gox": false},
		"src/*.go":   {"src/a.go": true, "src/x/a.go": false},
		"a.b":        {"a.b": true, "axb": false},
		"[bB]at":     {"bat": true, "Bat": true, "cat": false},
		"{x,y}/*.md": {"x/r.md": true, "y/r.md": true, "z/r.md": false},
	} {
		re, err := store.CompileGlob(glob)
		if err != nil {
			t.Fatalf("%s: %v", glob, err)
		}
		for name, want := range cases {
			if re.MatchString(name) != want {
				t.Errorf("%s ~ %s: %v", glob, name, !want)
			}
		}
	}
}

func TestProtectionRulePermissions(t *testing.T) {
	pb := &store.ProtectedBranch{RuleName: "main"}
	if pb.CanPush(1, nil) || pb.CanForcePush(1, nil) || !pb.CanMerge(1, nil) {
		t.Fatal("a bare rule")
	}
	pb.EnablePush, pb.EnablePushWhitelist, pb.PushWhitelistUserIDs, pb.PushWhitelistTeamIDs = true, true, []int64{1}, []int64{7}
	if !pb.CanPush(1, nil) || pb.CanPush(2, nil) || !pb.CanPush(2, []int64{7}) {
		t.Fatal("push whitelist")
	}
	pb.EnableForcePush = true
	if !pb.CanForcePush(2, nil) {
		t.Fatal("force push without an allowlist")
	}
	pb.EnableForcePushAllowlist, pb.ForcePushAllowlistUserIDs = true, []int64{3}
	if pb.CanForcePush(2, nil) || !pb.CanForcePush(3, nil) {
		t.Fatal("force push allowlist")
	}
}
