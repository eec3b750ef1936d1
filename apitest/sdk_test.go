package apitest_test

import (
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// sdkClient is the official Gitea SDK pointed at e, signed in as the admin.
func sdkClient(t *testing.T, e *apitest.Env, opts ...gitea.ClientOption) *gitea.Client {
	t.Helper()
	if len(opts) == 0 {
		opts = []gitea.ClientOption{gitea.SetBasicAuth(e.Admin.User.Name, e.Admin.Password)}
	}
	c, err := gitea.NewClient(e.Server.URL, opts...)
	if err != nil {
		t.Fatalf("SDK client: %v", err)
	}
	return c
}
