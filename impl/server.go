// Package impl wires the hand-written areas into the generated router and
// wraps it with authentication and request logging.
package impl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/actions"
	"repohost/impl/admin"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/avatar"
	"repohost/impl/branch"
	"repohost/impl/commits"
	"repohost/impl/contents"
	"repohost/impl/githttp"
	"repohost/impl/issue"
	"repohost/impl/keys"
	"repohost/impl/lfs"
	"repohost/impl/misc"
	"repohost/impl/notification"
	"repohost/impl/oauth2"
	"repohost/impl/org"
	"repohost/impl/packages"
	"repohost/impl/pulls"
	"repohost/impl/release"
	"repohost/impl/repo"
	"repohost/impl/requestid"
	"repohost/impl/rooturl"
	"repohost/impl/statuses"
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
// repositories, branches, contents, releases, deploy keys, commits, hooks
// and actions; each package implements its part.
type repositoryAPI struct {
	repoHandlers
	branchHandlers
	contentsHandlers
	releaseHandlers
	deployKeyHandlers
	commitHandlers
	repoHookHandlers
	actionsRepoHandlers
	pullHandlers
	statusHandlers
}

// organizationAPI is the generated "organization" tag: organizations,
// their teams and members in impl/org, its blocks in impl/user, the organization's hooks, and its
// runners, runs and jobs in impl/actions.
type organizationAPI struct {
	org.Handlers
	user.OrgBlockHandlers
	webhook.OrgHandlers
	actionsOrgHandlers
}

// userAPI is the generated "user" tag: accounts in impl/user, keys in
// impl/keys, the user's hooks in impl/webhook, and runners, runs and jobs
// in impl/actions.
type userAPI struct {
	userHandlers
	keyHandlers
	userHookHandlers
	actionsUserHandlers
	oauth2AppHandlers
}

// Embedded fields are named after their type; these names keep the
// Handlers apart.
type (
	repoHandlers        = repo.Handlers
	branchHandlers      = branch.Handlers
	contentsHandlers    = contents.Handlers
	releaseHandlers     = release.Handlers
	deployKeyHandlers   = keys.RepoHandlers
	commitHandlers      = commits.Handlers
	repoHookHandlers    = webhook.RepoHandlers
	userHandlers        = user.Handlers
	keyHandlers         = keys.UserHandlers
	userHookHandlers    = webhook.UserHandlers
	actionsRepoHandlers = actions.RepoHandlers
	pullHandlers        = pulls.Handlers
	statusHandlers      = statuses.Handlers
	actionsUserHandlers = actions.UserHandlers
	actionsOrgHandlers  = actions.OrgHandlers
	oauth2AppHandlers   = oauth2.AppHandlers
)

func newRepositoryAPI(d *app.Deps, s Services) repositoryAPI {
	return repositoryAPI{repo.Handlers{Deps: d}, branch.Handlers{Deps: d}, contents.Handlers{Deps: d}, release.Handlers{Deps: d},
		keys.RepoHandlers{Deps: d, Keys: s.Keys}, commits.Handlers{Deps: d}, webhook.RepoHandlers{Deps: d},
		actions.RepoHandlers{Deps: d, Actions: s.Actions}, pulls.Handlers{Deps: d}, statuses.Handlers{Deps: d}}
}

// Config hands every API area its implementation. Because the generated
// Config embeds one interface per tag, an operation added to swagger.yml
// does not compile until some area implements it.
func Config(d *app.Deps) restapi.Config {
	s := NewServices(d)
	return restapi.Config{
		AdminAPI:             admin.Handlers{Deps: d, Users: s.Users, Orgs: s.Orgs, Actions: s.Actions},
		IssueAPI:             issue.Handlers{Deps: d},
		MiscellaneousAPI:     misc.Handlers{Deps: d, Users: s.Users},
		NotificationAPI:      notification.Handlers{Deps: d},
		OrganizationAPI:      organizationAPI{org.Handlers{Deps: d, Orgs: s.Orgs}, user.OrgBlockHandlers{Handlers: user.Handlers{Deps: d, Users: s.Users}}, webhook.OrgHandlers{Deps: d}, actions.OrgHandlers{Deps: d, Actions: s.Actions}},
		PackageOperationsAPI: packages.Handlers{Deps: d, Packages: s.Packages},
		RepositoryAPI:        newRepositoryAPI(d, s),
		SettingsAPI:          misc.Handlers{Deps: d, Users: s.Users},
		UserAPI: userAPI{user.Handlers{Deps: d, Users: s.Users}, keys.UserHandlers{Deps: d, Keys: s.Keys}, webhook.UserHandlers{Deps: d},
			actions.UserHandlers{Deps: d, Actions: s.Actions}, oauth2.AppHandlers{Service: oauth2.Service{Deps: d}}},
		JSONConsumer: jsonConsumer(d.Config.MaxBodyBytes),
		InnerMiddleware: func(h http.Handler) http.Handler {
			return labelRoute(newBodyBudget(d.Config.BodyBudgetBytes, d.Config.MaxBodyBytes, d.Errors).middleware(h))
		},
		Logger: func(format string, args ...any) { d.Log.Debug(fmt.Sprintf(format, args...)) },
	}
}

// Option adjusts the configuration NewHandler and API build.
type Option func(*restapi.Config)

// WithOperationMiddleware wraps the execution of every operation: mw sees a
// request once the generated router has matched it to an operation
// (middleware.MatchedRouteFrom names it), before authentication, binding and
// the handler. The API tests use it to learn where each request went.
func WithOperationMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *restapi.Config) {
		prev := c.InnerMiddleware
		if prev == nil {
			c.InnerMiddleware = mw
			return
		}
		c.InnerMiddleware = func(h http.Handler) http.Handler { return prev(mw(h)) }
	}
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
	return emptyBodyKnown(hideUnseenRepos(d, api.Context(), h)), api, nil
}

// emptyBodyKnown tells the generated router that a request without a body
// (net/http gives it http.NoBody) has none, with "Content-Length: 0".
// Otherwise the router's binding (go-openapi runtime.HasBody) wraps every
// such body in a 4 KiB bufio.Reader to peek for content: a quarter of the
// bytes a GET allocated, and so of the collector's work per request.
func emptyBodyKnown(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == http.NoBody && r.ContentLength == 0 && r.Header.Get("Content-Length") == "" {
			r.Header.Set("Content-Length", "0")
		}
		next.ServeHTTP(w, r)
	})
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
	// The package registries, outside the API as the reference serves them.
	packages.Handlers{Deps: d, Packages: packages.Service{Deps: d}}.Mount(mux, authn.Middleware)
	// The OAuth2 provider and OpenID Connect issuer, outside the API as
	// the reference serves them; its signing key is made on first start.
	oauthKeys, err := oauth2.LoadKeys(d.OAuth2KeyFile)
	if err != nil {
		return nil, fmt.Errorf("oauth2 signing key: %w", err)
	}
	oauth2.Handlers{Service: oauth2.Service{Deps: d, Keys: oauthKeys}, Authn: authn}.Mount(mux)
	// The runner protocol, outside the API as the reference serves it;
	// runners authenticate with their own tokens.
	acts := actions.Service{Deps: d}
	mux.Handle("/api/actions/", http.StripPrefix("/api/actions", actions.Protocol{Service: acts}.Handler()))
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
	// Git LFS beside it, authenticated the same way (and by the tokens
	// git-lfs-authenticate hands out over SSH).
	lfs.NewHandlers(d, authn, lfs.NewService(d)).Mount(web)
	mux.Handle("/", web)
	// For load balancers (the reference's path), outside authentication.
	mux.HandleFunc("GET /api/healthz", healthz(d))
	if d.Metrics != nil {
		mux.Handle("GET /metrics", d.Metrics.Handler(d.Config.MetricsToken))
	}
	// The contract itself, outside /api/v1 as the reference serves it.
	mux.HandleFunc("GET /swagger.v1.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(restapi.SwaggerJSON)
	})
	// The mux would redirect a non-canonical API path (with "." or ".."
	// segments) to another operation's path; answer 404 instead.
	routes := func(r *http.Request) string {
		_, pattern := mux.Handler(r)
		if pattern == "/" {
			_, pattern = web.Handler(r)
		}
		return pattern
	}
	return observeRequests(d, routes, trackCommits(rooturl.Middleware(rooturl.Normalize(d.Config.RootURL), canonicalAPIPaths(d.Errors, mux)))), nil
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
	mountDiffDownloads(mux, api)
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
	status    int
	bytes     int
	requestID string
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

// RequestID lets code holding only the writer log the request's id
// (requestid.FromWriter).
func (s *statusRecorder) RequestID() string { return s.requestID }

// routeKey holds, in a request's context, where the route template the
// request matched is written once known (labelRoute).
type routeKey struct{}

// labelRoute runs inside the generated router once it has matched an
// operation, and records the operation's path template.
func labelRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := middleware.MatchedRouteFrom(r); route != nil {
			if slot, ok := r.Context().Value(routeKey{}).(*string); ok {
				*slot = r.Method + " " + route.PathPattern
			}
		}
		next.ServeHTTP(w, r)
	})
}

// observeRequests gives every request an id (X-Request-ID, also on every
// log line written with the request's context), counts it in the metrics
// by route template and status, and writes its access-log line for one
// request in d.Config.AccessLogEvery (every one when 1, none when 0; see
// ParseAccessLog). A request whose client went away before the answer was
// complete is logged with status 499, whatever the handler managed to
// write. routes names the template of a request outside the API.
func observeRequests(d *app.Deps, routes func(*http.Request) string, next http.Handler) http.Handler {
	log, every := d.Log, d.Config.AccessLogEvery
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestid.Accept(r)
		w.Header().Set(requestid.Header, id)
		var route string
		// store.BeginRequest: the caches serve it only what includes every
		// write acknowledged before now, by any process.
		r = r.WithContext(context.WithValue(requestid.With(store.BeginRequest(r.Context()), id), routeKey{}, &route))
		rec := &statusRecorder{ResponseWriter: w, requestID: id}
		logIt := every == 1 || (every > 1 && (n.Add(1)-1)%uint64(every) == 0)
		// Also for a request that panics (a download cut off midway is
		// aborted with http.ErrAbortHandler), which then goes on up.
		defer func() {
			v := recover()
			status := rec.status
			if errors.Is(r.Context().Err(), context.Canceled) && (status == 0 || status >= 500) {
				// The client went away: its doing, not a server fault.
				status = apierr.StatusClientClosedRequest
			}
			if status == 0 {
				status = http.StatusOK
			}
			took := time.Since(start)
			if d.Metrics != nil {
				if route == "" {
					// Outside the API, the mux's pattern; an API request
					// answered before an operation was matched (no
					// operation has the path, or the credentials were
					// refused in front of the router) is one label, never
					// the raw path.
					if route = routes(r); route == "" || strings.HasPrefix(r.URL.Path, "/api/v1/") {
						route = "unrouted"
					}
				}
				d.Metrics.ObserveRequest(route, r.Method, status, took)
			}
			if logIt {
				args := []any{"method", r.Method, "path", r.URL.Path, "status", status,
					"bytes", rec.bytes, "duration_ms", float64(took.Microseconds()) / 1000, "remote", r.RemoteAddr}
				if v != nil {
					args = append(args, "aborted", true)
				}
				log.InfoContext(r.Context(), "request", args...)
			}
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
