// Package rooturl carries the server's configured root URL (the
// reference's ROOT_URL) in each request's context. Absolute URLs in answers
// (html_url, clone_url, Link, download links) start with it, never with the
// client's Host header: a client could name any host there and have the
// server hand out links pointing at it.
package rooturl

import (
	"context"
	"net/http"
	"strings"
)

type key struct{}

// Middleware puts root (which must end in "/") into every request's context.
func Middleware(root string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, root)))
	})
}

// From is the root URL for r, with a trailing slash. A request that did not
// pass through Middleware (a handler called directly) gets a relative root.
func From(r *http.Request) string {
	if root, ok := r.Context().Value(key{}).(string); ok {
		return root
	}
	return "/"
}

// Normalize returns root with exactly one trailing slash.
func Normalize(root string) string {
	return strings.TrimRight(root, "/") + "/"
}
