package webhook

import (
	"context"
	"errors"
	"testing"

	"repohost/store"
)

// TestBuildRequestAuthorization: a hook's authorization header goes out as
// it was set, and a hook whose sealed header this server cannot open fails
// its delivery with that reason instead of sending the request without it.
func TestBuildRequestAuthorization(t *testing.T) {
	t.Parallel()
	d := &store.HookDelivery{UUID: "0b8c1f9e-1111-4a2b-9c3d-000000000001", Event: "issues", EventType: "issues", Payload: []byte(`{"action":"opened"}`)}
	h := &store.Hook{Type: "gitea", URL: "http://example.com/hook", HTTPMethod: "POST", ContentType: "json", AuthorizationHeader: "Bearer s3cret"}
	req, err := buildRequest(context.Background(), h, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization %q, want the hook's header", got)
	}
	h.AuthorizationHeader, h.AuthorizationUnreadable = "", true
	if req, err := buildRequest(context.Background(), h, d); !errors.Is(err, errUnreadableAuthorization) || req != nil {
		t.Errorf("unreadable header: request %v, error %v; want no request and errUnreadableAuthorization", req, err)
	}
}
