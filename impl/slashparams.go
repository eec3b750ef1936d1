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
	"/api/v1/repos/{owner}/{repo}/archive/{rest...}",
	"/api/v1/repos/{owner}/{repo}/tags/{rest...}",
	"/api/v1/repos/{owner}/{repo}/releases/tags/{rest...}",
	"/api/v1/repos/{owner}/{repo}/branches/{rest...}",
	"/api/v1/repos/{owner}/{repo}/branch_protections/{rest...}",
}

// mountPullDiffs routes the reference's /pulls/{index}.diff and .patch to
// the operation's address in swagger.yml, /pulls/{index}/download/{type}:
// the generated router matches a parameter over a whole segment, so
// "{index}.{diffType}" would be taken for "{index}".
func mountPullDiffs(mux *http.ServeMux, api http.Handler) {
	mux.Handle("GET /api/v1/repos/{owner}/{repo}/pulls/{file}", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		file := req.PathValue("file")
		index, kind, ok := strings.Cut(file, ".")
		if !ok || (kind != "diff" && kind != "patch") || index == "" || strings.Trim(index, "0123456789") != "" {
			api.ServeHTTP(w, req)
			return
		}
		r2 := req.Clone(req.Context())
		r2.URL.RawPath = "/api/v1/repos/" + url.PathEscape(req.PathValue("owner")) + "/" + url.PathEscape(req.PathValue("repo")) +
			"/pulls/" + index + "/download/" + kind
		r2.URL.Path, _ = url.PathUnescape(r2.URL.RawPath)
		api.ServeHTTP(w, r2)
	}))
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
