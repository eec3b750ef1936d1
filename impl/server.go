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
	"repohost/restapi"
	"repohost/restapi/operations"
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
}

// Embedded fields are named after their type; these names keep the four
// Handlers apart.
type (
	repoHandlers     = repo.Handlers
	branchHandlers   = branch.Handlers
	contentsHandlers = contents.Handlers
	releaseHandlers  = release.Handlers
)

func newRepositoryAPI(d *app.Deps) repositoryAPI {
	return repositoryAPI{repo.Handlers{Deps: d}, branch.Handlers{Deps: d}, contents.Handlers{Deps: d}, release.Handlers{Deps: d}}
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
		OrganizationAPI:  org.Handlers{Deps: d, Orgs: s.Orgs},
		RepositoryAPI:    newRepositoryAPI(d),
		SettingsAPI:      misc.Handlers{Deps: d, Users: s.Users},
		UserAPI:          user.Handlers{Deps: d, Users: s.Users},
		JSONConsumer:     jsonConsumer(d.Config.MaxBodyBytes),
		Logger:           func(format string, args ...any) { d.Log.Debug(fmt.Sprintf(format, args...)) },
	}
}

// API builds the generated API with our error translator in place.
func API(d *app.Deps) (http.Handler, *operations.RepohostAPI, error) {
	h, api, err := restapi.HandlerAPI(Config(d))
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
func NewHandler(d *app.Deps) (http.Handler, error) {
	api, _, err := API(d)
	if err != nil {
		return nil, err
	}
	authn := &auth.Authenticator{Store: d.Store, Hasher: d.Hasher, Errors: d.Errors,
		Throttle: auth.NewLoginThrottle(d.Config.LoginFailures, d.Config.LoginWindow),
		Verified: auth.NewCredentialCache(d.Config.VerifiedPasswords, d.Config.VerifiedPasswordTTL)}
	mux := http.NewServeMux()
	apiAuthn := authn.Middleware(api)
	mux.Handle("/api/v1/", apiAuthn)
	// Operations whose last parameter may hold slashes.
	mountSlashParams(mux, apiAuthn)
	// Downloads outside the API: browser_download_url, tarball_url and
	// zipball_url point here.
	mux.Handle("GET /attachments/{uuid}", authn.Middleware(http.HandlerFunc(release.Handlers{Deps: d}.ServeAttachment)))
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
	return logRequests(d.Log, d.Config.AccessLogEvery, rooturl.Middleware(rooturl.Normalize(d.Config.RootURL), mux)), nil
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
		next.ServeHTTP(rec, r)
		status := rec.status
		if errors.Is(r.Context().Err(), context.Canceled) && (status == 0 || status >= 500) {
			status = apierr.StatusClientClosedRequest
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Int("bytes", rec.bytes),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000), slog.String("remote", r.RemoteAddr))
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
