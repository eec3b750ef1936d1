package apitest_test

import (
	"net/http"
	"slices"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// TestSDKHooks drives the hooks of every scope with the unchanged official
// SDK: create, list, get, edit, delete, and the admin list's type filter.
func TestSDKHooks(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	c := sdkClient(t, e, gitea.SetBasicAuth("alice", alice.Password))
	admin := sdkClient(t, e)
	opt := gitea.CreateHookOption{Type: gitea.HookTypeGitea, Events: []string{"push", "issues"}, Active: true, BranchFilter: "main",
		Config: map[string]string{"url": "https://ci.example.com/hook", "content_type": "json", "secret": "s"}}

	check := func(what string, h *gitea.Hook, resp *gitea.Response, err error, status int) {
		t.Helper()
		if err != nil || resp.StatusCode != status {
			t.Fatalf("%s: %v (%v)", what, err, resp)
		}
		if h != nil && (h.ID == 0 || h.Type != "gitea" || !h.Active || h.BranchFilter != "main" || h.Config["url"] != "https://ci.example.com/hook" ||
			h.Config["content_type"] != "json" || h.Config["secret"] != "" || !slices.Contains(h.Events, "issue_comment") || h.Created.IsZero()) {
			t.Errorf("%s: hook %+v", what, h)
		}
	}
	no := false
	edit := gitea.EditHookOption{Active: &no, Events: []string{"release"}, Config: map[string]string{"content_type": "form"}}
	editedOK := func(what string, h *gitea.Hook) {
		t.Helper()
		if h.Active || !slices.Equal(h.Events, []string{"release"}) || h.Config["content_type"] != "form" || h.BranchFilter != "" {
			t.Errorf("%s: edited hook %+v", what, h)
		}
	}

	// Repository.
	h, resp, err := c.CreateRepoHook("alice", "pub", opt)
	check("CreateRepoHook", h, resp, err, http.StatusCreated)
	hs, resp, err := c.ListRepoHooks("alice", "pub", gitea.ListHooksOptions{})
	if err != nil || len(hs) != 1 || hs[0].ID != h.ID {
		t.Fatalf("ListRepoHooks: %v %+v (%v)", err, hs, resp)
	}
	got, resp, err := c.GetRepoHook("alice", "pub", h.ID)
	check("GetRepoHook", got, resp, err, http.StatusOK)
	if resp, err = c.EditRepoHook("alice", "pub", h.ID, edit); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("EditRepoHook: %v (%v)", err, resp)
	}
	got, _, _ = c.GetRepoHook("alice", "pub", h.ID)
	editedOK("repository", got)
	if resp, err = c.DeleteRepoHook("alice", "pub", h.ID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteRepoHook: %v (%v)", err, resp)
	}
	if _, resp, err = c.GetRepoHook("alice", "pub", h.ID); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GetRepoHook after delete: %v (%v)", err, resp)
	}

	// Organization.
	h, resp, err = c.CreateOrgHook("acme", opt)
	check("CreateOrgHook", h, resp, err, http.StatusCreated)
	if hs, _, err = c.ListOrgHooks("acme", gitea.ListHooksOptions{}); err != nil || len(hs) != 1 {
		t.Fatalf("ListOrgHooks: %v %+v", err, hs)
	}
	got, resp, err = c.GetOrgHook("acme", h.ID)
	check("GetOrgHook", got, resp, err, http.StatusOK)
	if resp, err = c.EditOrgHook("acme", h.ID, edit); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("EditOrgHook: %v (%v)", err, resp)
	}
	got, _, _ = c.GetOrgHook("acme", h.ID)
	editedOK("organization", got)
	if resp, err = c.DeleteOrgHook("acme", h.ID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteOrgHook: %v (%v)", err, resp)
	}

	// The signed-in user.
	h, resp, err = c.CreateMyHook(opt)
	check("CreateMyHook", h, resp, err, http.StatusCreated)
	if hs, _, err = c.ListMyHooks(gitea.ListHooksOptions{}); err != nil || len(hs) != 1 {
		t.Fatalf("ListMyHooks: %v %+v", err, hs)
	}
	got, resp, err = c.GetMyHook(h.ID)
	check("GetMyHook", got, resp, err, http.StatusOK)
	if resp, err = c.EditMyHook(h.ID, edit); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("EditMyHook: %v (%v)", err, resp)
	}
	got, _, _ = c.GetMyHook(h.ID)
	editedOK("user", got)
	if resp, err = c.DeleteMyHook(h.ID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteMyHook: %v (%v)", err, resp)
	}

	// The site: a default hook and a system hook, told apart by type.
	dflt, resp, err := admin.CreateAdminHook(opt)
	check("CreateAdminHook default", dflt, resp, err, http.StatusCreated)
	sysOpt := opt
	sysOpt.Config = map[string]string{"url": "https://ci.example.com/hook", "content_type": "json", "is_system_webhook": "true"}
	sys, resp, err := admin.CreateAdminHook(sysOpt)
	check("CreateAdminHook system", sys, resp, err, http.StatusCreated)
	for typ, want := range map[string][]int64{"": {sys.ID}, "system": {sys.ID}, "default": {dflt.ID}, "all": {dflt.ID, sys.ID}} {
		hs, resp, err := admin.ListAdminHooks(gitea.ListAdminHooksOptions{Type: typ})
		var ids []int64
		for _, h := range hs {
			ids = append(ids, h.ID)
		}
		if err != nil || resp.StatusCode != http.StatusOK || !slices.Equal(ids, want) {
			t.Errorf("ListAdminHooks(%q): %v %v, want %v", typ, err, ids, want)
		}
	}
	got, resp, err = admin.GetAdminHook(sys.ID)
	check("GetAdminHook", got, resp, err, http.StatusOK)
	edited, resp, err := admin.EditAdminHook(sys.ID, edit)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("EditAdminHook: %v (%v)", err, resp)
	}
	editedOK("admin", edited)
	if _, resp, err = admin.EditAdminHook(999999, edit); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("EditAdminHook of an unknown id: %v (%v)", err, resp)
	}
	if resp, err = admin.DeleteAdminHook(sys.ID); err != nil {
		t.Fatalf("DeleteAdminHook: %v (%v)", err, resp)
	}
	if resp, err = admin.DeleteAdminHook(sys.ID); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("DeleteAdminHook again: %v (%v)", err, resp)
	}
	// A plain user is refused the site's hooks.
	if _, resp, err = c.ListAdminHooks(gitea.ListAdminHooksOptions{}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("ListAdminHooks as a user: %v (%v)", err, resp)
	}
}
