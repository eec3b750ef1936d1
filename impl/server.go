// Package impl wires the hand-written areas into the generated router and
// wraps it with authentication and request logging.
package impl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"

	"repohost/impl/admin"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/avatar"
	"repohost/impl/branch"
	"repohost/impl/contents"
	"repohost/impl/githttp"
	"repohost/impl/issue"
	"repohost/impl/misc"
	"repohost/impl/org"
	"repohost/impl/release"
	"repohost/impl/repo"
	"repohost/impl/rooturl"
	"repohost/impl/user"
	"repohost/impl/webhook"
	"repohost/restapi"
	"repohost/restapi/operations"
	"repohost/store"
)

func init() {
	// go-openapi renders times with milliseconds by default; the reference
	// (and therefore every client) expects second precision. This is the
	// library's own setting, fixed once for the whole process.
	strfmt.MarshalFormat = time.RFC3339
}

// repositoryAPI is the generated "repository" tag, one interface for
// repositories, branches, contents and releases; each package implements
// its part.
type repositoryAPI struct {
	repoHandlers
	branchHandlers
	contentsHandlers
	releaseHandlers
	repoHookHandlers
}

// organizationAPI is the generated "organization" tag: organizations and
// their members, and the organization's hooks.
type organizationAPI struct {
	org.Handlers
	webhook.OrgHandlers
}

// userAPI is the generated "user" tag: accounts, and the user's hooks.
type userAPI struct {
	user.Handlers
	webhook.UserHandlers
}

// Embedded fields are named after their type; these names keep the four
// Handlers apart.
type (
	repoHandlers     = repo.Handlers
	branchHandlers   = branch.Handlers
	contentsHandlers = contents.Handlers
	releaseHandlers  = release.Handlers
	repoHookHandlers = webhook.RepoHandlers
)

func newRepositoryAPI(d *app.Deps) repositoryAPI {
	return repositoryAPI{repo.Handlers{Deps: d}, branch.Handlers{Deps: d}, contents.Handlers{Deps: d}, release.Handlers{Deps: d}, webhook.RepoHandlers{Deps: d}}
}

// Config hands every API area its implementation. Because the generated
// Config embeds one interface per tag, an operation added to swagger.yml
// does not compile until some area implements it.
func Config(d *app.Deps) restapi.Config {
	s := NewServices(d)
	return restapi.Config{
		AdminAPI:         admin.Handlers{Deps: d, Users: s.Users, Orgs: s.Orgs},
		IssueAPI:         issue.Handlers{Deps: d},
		MiscellaneousAPI: misc.Handlers{Deps: d, Users: s.Users},
		OrganizationAPI:  organizationAPI{org.Handlers{Deps: d, Orgs: s.Orgs}, webhook.OrgHandlers{Deps: d}},
		RepositoryAPI:    newRepositoryAPI(d),
		SettingsAPI:      misc.Handlers{Deps: d, Users: s.Users},
		UserAPI:          userAPI{user.Handlers{Deps: d, Users: s.Users}, webhook.UserHandlers{Deps: d}},
		JSONConsumer:     jsonConsumer(d.Config.MaxBodyBytes),
		Logger:           func(format string, args ...any) { d.Log.Debug(fmt.Sprintf(format, args...)) },
	}
}

// Option adjusts the configuration NewHandler and API build.
type Option func(*restapi.Config)

// WithOperationMiddleware wraps the execution of every operation: mw sees a
// request once the generated router has matched it to an operation
// (middleware.MatchedRouteFrom names it), before authentication, binding and
// the handler. The API tests use it to learn where each request went.
func WithOperationMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *restapi.Config) { c.InnerMiddleware = mw }
}

// API builds the generated API with our error translator in place.
func API(d *app.Deps, opts ...Option) (http.Handler, *operations.RepohostAPI, error) {
	cfg := Config(d)
	for _, o := range opts {
		o(&cfg)
	}
	h, api, err := restapi.HandlerAPI(cfg)
	if err != nil {
		return nil, nil, err
	}
	api.ServeError = d.Errors.ServeError
	if err := api.Validate(); err != nil {
		return nil, nil, fmt.Errorf("API is missing handlers: %w", err)
	}
	return h, api, nil
}

// NewHandler is the whole HTTP surface of the server.
func NewHandler(d *app.Deps, opts ...Option) (http.Handler, error) {
	api, _, err := API(d, opts...)
	if err != nil {
		return nil, err
	}
	authn := &auth.Authenticator{Store: d.Store, Hasher: d.Hasher, Errors: d.Errors,
		Throttle: auth.NewLoginThrottle(d.Config.LoginFailures, d.Config.LoginWindow),
		Verified: auth.NewCredentialCache(d.Config.VerifiedPasswords, d.Config.VerifiedPasswordTTL)}
	mux := http.NewServeMux()
	MountAPI(mux, authn.Middleware(assetUploads(d, api)))
	// Downloads outside the API: browser_download_url, tarball_url and
	// zipball_url point here.
	mux.Handle("GET /attachments/{uuid}", authn.Middleware(http.HandlerFunc(release.Handlers{Deps: d}.ServeAttachment)))
	// The avatars avatar_url points at: public, drawn from the hash.
	mux.HandleFunc("GET /avatars/{hash}", avatar.Serve)
	// Routes under /{owner}/{repo}/ go on a second mux: on this one they
	// would overlap /api/v1/ (an owner named "api"), which ServeMux refuses.
	web := http.NewServeMux()
	web.Handle("GET /{owner}/{repo}/archive/{file...}", authn.Middleware(http.HandlerFunc(contents.Handlers{Deps: d}.ServeArchive)))
	// Git over smart HTTP ({repo} may end in ".git"); it authenticates
	// itself, answering git's way (401 with a challenge, plain text).
	gitHTTP := githttp.New(d, authn)
	web.HandleFunc("GET /{owner}/{repo}/info/refs", gitHTTP.InfoRefs)
	web.HandleFunc("POST /{owner}/{repo}/git-upload-pack", gitHTTP.UploadPack)
	web.HandleFunc("POST /{owner}/{repo}/git-receive-pack", gitHTTP.ReceivePack)
	mux.Handle("/", web)
	// The contract itself, outside /api/v1 as the reference serves it.
	mux.HandleFunc("GET /swagger.v1.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(restapi.SwaggerJSON)
	})
	// The mux would redirect a non-canonical API path (with "." or ".."
	// segments) to another operation's path; answer 404 instead.
	return logRequests(d.Log, d.Config.AccessLogEvery, trackCommits(rooturl.Middleware(rooturl.Normalize(d.Config.RootURL), canonicalAPIPaths(d.Errors, mux)))), nil
}

// trackCommits gives every request a commit marker: once the request has
// committed a write, the store reads the rest of it through a short
// database outage instead of failing (store.TrackCommits).
func trackCommits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(store.TrackCommits(r.Context())))
	})
}

// MountAPI routes /api/v1/ to api on mux, with the operations whose last
// parameter may hold slashes first folded into the one segment the
// generated router can match (mountSlashParams). The API tests mount
// the same routes to see each path as the generated router sees it.
func MountAPI(mux *http.ServeMux, api http.Handler) {
	mux.Handle("/api/v1/", api)
	mountSlashParams(mux, api)
}

// assetUploads hands a release asset upload to release.Handlers.UploadAsset
// before the generated binding, which would read the whole multipart body
// into memory and a temporary file first; everything else goes to api.
func assetUploads(d *app.Deps, api http.Handler) http.Handler {
	uploads := http.NewServeMux()
	uploads.Handle("POST /api/v1/repos/{owner}/{repo}/releases/{id}/assets", release.Handlers{Deps: d}.UploadAsset(api))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := uploads.Handler(r); pattern != "" {
			uploads.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer (flushing for
// git over HTTP).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests writes a structured line for one request in every (all of
// them when every is 1, none when it is 0; see ParseAccessLog). A request
// whose client went away before the answer was complete is logged with
// status 499, whatever the handler managed to write.
func logRequests(log *slog.Logger, every int, next http.Handler) http.Handler {
	if every <= 0 {
		return next
	}
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if every > 1 && (n.Add(1)-1)%uint64(every) != 0 {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		// Also for a request that panics (a download cut off midway is
		// aborted with http.ErrAbortHandler), which then goes on up.
		defer func() {
			v := recover()
			status := rec.status
			if errors.Is(r.Context().Err(), context.Canceled) && (status == 0 || status >= 500) {
				// The client went away: its doing, not a server fault.
				status = apierr.StatusClientClosedRequest
			}
			args := []any{"method", r.Method, "path", r.URL.Path, "status", status,
				"bytes", rec.bytes, "duration_ms", float64(time.Since(start).Microseconds()) / 1000, "remote", r.RemoteAddr}
			if v != nil {
				args = append(args, "aborted", true)
			}
			log.Info("request", args...)
			if v != nil {
				panic(v)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// ParseAccessLog reads the --access-log setting: "on" logs every request,
// "off" none, "sample:N" one request in N. It returns how many requests
// share one line (0 for none).
func ParseAccessLog(s string) (int, error) {
	switch s {
	case "", "on":
		return 1, nil
	case "off":
		return 0, nil
	}
	if rest, ok := strings.CutPrefix(s, "sample:"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 1 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("access log %q: want on, off or sample:N with N >= 1", s)
}
