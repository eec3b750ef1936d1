// Package auth resolves who is calling, once per request and ahead of the
// generated router, and knows how secrets are hashed.
package auth

import (
	"context"
	"strings"

	"repohost/store"
)

// Principal is the signed-in caller. A nil *Principal means anonymous.
type Principal struct {
	// User is who the request acts as (the sudo target, if any).
	User *store.User
	// Signer is who presented the credentials; differs from User under sudo.
	Signer *store.User
	// Token is the access token used, nil for a password sign-in.
	Token  *store.AccessToken
	Scopes Scopes
	// TaskRepoID is set when the credentials are a running workflow
	// task's token: the caller then reads that one repository and nothing
	// else (User is ActionsUser).
	TaskRepoID int64
}

// ActionsUser is who a workflow task's token acts as; it owns nothing and
// belongs to no organization.
var ActionsUser = store.User{ID: -2, Name: "gitea-actions", LowerName: "gitea-actions", FullName: "Gitea Actions", IsActive: true}

// IsAdmin tells whether the caller acts with site-admin rights.
func (p *Principal) IsAdmin() bool { return p != nil && p.User.IsAdmin }

// UserID is 0 for anonymous callers.
func (p *Principal) UserID() int64 {
	if p == nil {
		return 0
	}
	return p.User.ID
}

// PublicOnly tells whether the caller's token may only reach public resources.
func (p *Principal) PublicOnly() bool { return p != nil && p.Token != nil && p.Scopes.PublicOnly() }

type principalKey struct{}

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller, or nil for anonymous.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Scope categories, as the reference names them.
var Categories = []string{"activitypub", "admin", "issue", "misc", "notification", "organization", "package", "repository", "user"}

// Scopes is a token's normalised scope set.
type Scopes map[string]bool

// ParseScopes reads a comma-separated or listed scope set. It reports the
// first unknown scope.
func ParseScopes(list []string) (Scopes, string, bool) {
	s := Scopes{}
	for _, raw := range list {
		for _, part := range strings.Split(raw, ",") {
			name := strings.TrimSpace(part)
			if name == "" {
				continue
			}
			if !validScope(name) {
				return nil, name, false
			}
			s[name] = true
		}
	}
	return s, "", true
}

func validScope(name string) bool {
	if name == "all" || name == "public-only" {
		return true
	}
	level, cat, ok := strings.Cut(name, ":")
	if !ok || (level != "read" && level != "write") {
		return false
	}
	for _, c := range Categories {
		if c == cat {
			return true
		}
	}
	return false
}

// String renders the set in a stable order.
func (s Scopes) String() string { return strings.Join(s.List(), ",") }

// List returns the scopes in a stable order.
func (s Scopes) List() []string {
	out := []string{}
	for _, special := range []string{"all", "public-only"} {
		if s[special] {
			out = append(out, special)
		}
	}
	for _, c := range Categories {
		for _, level := range []string{"read", "write"} {
			if s[level+":"+c] {
				out = append(out, level+":"+c)
			}
		}
	}
	return out
}

// PublicOnly reports the public-only restriction.
func (s Scopes) PublicOnly() bool { return s["public-only"] }

// Allows tells whether the set grants level ("read" or "write") on category.
func (s Scopes) Allows(category, level string) bool {
	if s["all"] || s["write:"+category] {
		return true
	}
	return level == "read" && s["read:"+category]
}
