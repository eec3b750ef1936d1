package impl

import (
	"net/http"
	"net/url"
	"strings"
)

// slashParamRoutes are the API paths whose last parameter may hold slashes:
// file paths (contents/docs/a.md), refs and tags (tags/v1/rc), branch and
// protection-rule names (branches/feature/x). Gitea clients send them with
// the slashes unescaped.
var slashParamRoutes = []string{
	"/api/v1/repos/{owner}/{repo}/contents/{rest...}",
	"/api/v1/repos/{owner}/{repo}/raw/{rest...}",
	"/api/v1/repos/{owner}/{repo}/media/{rest...}",
	"/api/v1/repos/{owner}/{repo}/archive/{rest...}",
	"/api/v1/repos/{owner}/{repo}/tags/{rest...}",
	"/api/v1/repos/{owner}/{repo}/releases/tags/{rest...}",
	"/api/v1/repos/{owner}/{repo}/branches/{rest...}",
	"/api/v1/repos/{owner}/{repo}/branch_protections/{rest...}",
	"/api/v1/repos/{owner}/{repo}/git/refs/{rest...}",
	"/api/v1/repos/{owner}/{repo}/compare/{rest...}",
}

// diffDownloads are the reference's addresses of a diff or patch,
// "<id>.diff" and "<id>.patch", each with the operation's address in
// swagger.yml ("<id>/download/<type>") and what an id looks like: the
// generated router matches a parameter over a whole segment, so
// "{index}.{diffType}" would be taken for "{index}".
var diffDownloads = []struct {
	prefix string
	isID   func(string) bool
}{
	{"/api/v1/repos/{owner}/{repo}/pulls/", func(s string) bool { return strings.Trim(s, "0123456789") == "" }},
	// A commit id or a ref without a dot, as the reference's route reads it.
	{"/api/v1/repos/{owner}/{repo}/git/commits/", func(s string) bool { return !strings.ContainsAny(s, "/") }},
}

// mountDiffDownloads routes diffDownloads to their operations.
func mountDiffDownloads(mux *http.ServeMux, api http.Handler) {
	for _, dd := range diffDownloads {
		mux.Handle("GET "+dd.prefix+"{file}", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			file := req.PathValue("file")
			dot := strings.LastIndex(file, ".")
			id, kind, ok := file[:max(dot, 0)], file[dot+1:], dot >= 0
			if !ok || (kind != "diff" && kind != "patch") || id == "" || !dd.isID(id) {
				api.ServeHTTP(w, req)
				return
			}
			head := strings.NewReplacer("{owner}", url.PathEscape(req.PathValue("owner")),
				"{repo}", url.PathEscape(req.PathValue("repo"))).Replace(dd.prefix)
			r2 := req.Clone(req.Context())
			r2.URL.RawPath = head + url.PathEscape(id) + "/download/" + kind
			r2.URL.Path, _ = url.PathUnescape(r2.URL.RawPath)
			api.ServeHTTP(w, r2)
		}))
	}
}

// mountSlashParams routes slashParamRoutes to api with the rest of the path
// escaped into one segment: the generated router matches a parameter within
// one segment only and unescapes it afterwards, so the handler receives the
// slashes intact.
func mountSlashParams(mux *http.ServeMux, api http.Handler) {
	for _, pattern := range slashParamRoutes {
		prefix := pattern[:strings.Index(pattern, "{rest...}")]
		// The collection itself, so the mux does not redirect ".../tags"
		// to ".../tags/" instead of letting the list operation answer.
		mux.Handle(strings.TrimSuffix(prefix, "/"), api)
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			rest := req.PathValue("rest")
			if !strings.Contains(rest, "/") {
				api.ServeHTTP(w, req)
				return
			}
			head := strings.NewReplacer("{owner}", url.PathEscape(req.PathValue("owner")),
				"{repo}", url.PathEscape(req.PathValue("repo"))).Replace(prefix)
			r2 := req.Clone(req.Context())
			r2.URL.RawPath = head + url.PathEscape(rest)
			r2.URL.Path, _ = url.PathUnescape(r2.URL.RawPath)
			api.ServeHTTP(w, r2)
		}))
	}
}
