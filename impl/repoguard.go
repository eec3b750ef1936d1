package impl

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
)

// hideUnseenRepos makes a repository the caller may not see answer 404 on
// every route under /repos/{owner}/{repo}, before any other refusal, as
// the reference's repository assignment does ahead of its token, binding
// and permission checks: without it, "401 token is required" or "422
// [Title]: Required" for a private repository would tell an outsider that
// it exists.
//
// Handlers already answer 404 when they load a repository the caller may
// not see; what they may answer first (a binding error, the need of a
// signed-in caller, a missing permission) is a refusal. So only a refusal
// is held back, and the one visibility rule (app.Deps.Repo) is asked then:
// when the repository is hidden (or missing) the refusal becomes the 404 of
// a missing repository. Answers that are not refusals pass untouched, so a
// request that succeeds pays nothing.
//
// It runs in front of the generated API, whose security check (the 401 of
// an anonymous caller) comes before any inner middleware; the route it
// matches is kept in the request for the generated router.
func hideUnseenRepos(d *app.Deps, api *middleware.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, rr, ok := api.RouteInfo(r)
		if ok {
			r = rr // the router reads the match from here, not matching again
		}
		if !ok || !strings.HasPrefix(strings.TrimPrefix(route.PathPattern, api.BasePath()), "/repos/{owner}/{repo}") {
			next.ServeHTTP(w, r)
			return
		}
		before := make(map[string]bool, len(w.Header()))
		for k := range w.Header() {
			before[k] = true
		}
		hw := &refusalWriter{ResponseWriter: w}
		next.ServeHTTP(hw, r)
		if hw.held == 0 {
			return
		}
		_, _, err := d.Repo(r.Context(), auth.FromContext(r.Context()), route.Params.Get("owner"), route.Params.Get("repo"))
		if err != nil && app.IsNotFound(err) {
			// The handler's own headers (Allow, WWW-Authenticate,
			// Content-Length, …) belong to the refusal, not to the 404.
			for k := range w.Header() {
				if !before[k] {
					w.Header().Del(k)
				}
			}
			d.Errors.Write(w, apierr.NotFound("not found"))
			return
		}
		w.WriteHeader(hw.held)
		_, _ = w.Write(hw.body.Bytes())
	})
}

// refusalWriter passes an answer through unless its status is a refusal
// that might hide a repository (a 4xx other than 404 and 429), which it
// keeps (held, body) for hideUnseenRepos to decide on.
type refusalWriter struct {
	http.ResponseWriter
	decided bool
	held    int
	body    bytes.Buffer
}

func (w *refusalWriter) WriteHeader(code int) {
	if w.decided {
		return
	}
	w.decided = true
	if code >= 400 && code < 500 && code != http.StatusNotFound && code != http.StatusTooManyRequests {
		w.held = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.held != 0 {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush forwards to the real writer unless the answer is held.
func (w *refusalWriter) Flush() {
	if w.held != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
