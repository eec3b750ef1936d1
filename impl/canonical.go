package impl

import (
	"net/http"
	"path"
	"strings"

	"repohost/impl/apierr"
)

// canonicalAPIPaths answers 404 for an API path that is not in canonical
// form: a "." or ".." segment, or an empty one ("//"). http.ServeMux would
// redirect such a path to its cleaned form with 307, which clients follow
// with the same method and body, so
// DELETE /api/v1/repos/o/r/branches/.. became DELETE /api/v1/repos/o/r and
// deleted the repository. The reference's router does not clean paths
// either: ".." is just a name that matches nothing. Escaped dots and
// slashes (%2E, %2F) are part of a segment and pass.
func canonicalAPIPaths(errs apierr.Translator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); strings.HasPrefix(p, "/api/") && !isCleanPath(p) {
			errs.Write(w, apierr.NotFound("not found"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isCleanPath tells whether ServeMux would leave p as it is: p equals its
// path.Clean form, with a trailing slash kept.
func isCleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
