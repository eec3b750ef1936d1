// Package app holds what every API area needs: the dependencies built by
// main, and the lookups that several areas share (a visible user, a visible
// repository with the caller's permission).
package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sync"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/cron"
	"repohost/impl/events"
	"repohost/impl/listcache"
	"repohost/impl/metrics"
	"repohost/impl/paging"
	"repohost/impl/rooturl"
	"repohost/impl/signing"
	"repohost/store"
	"repohost/store/gitstore"
)

// Version is the service version reported by GET /version; the official SDK
// gates features on it.
const Version = "28.1.0"

// Deps is built once in main and handed to every area.
type Deps struct {
	Store store.Store
	// Git is the bare-repository store; only impl/refs moves refs in it.
	Git    gitstore.Repos
	Access access.Checker
	Hasher auth.Hasher
	Errors apierr.Translator
	Log    *slog.Logger
	Clock  store.Clock
	Config Config
	// Events is where every service announces its changes.
	Events *events.Bus
	// TempDir stages uploads (see TempFile) before they go to their
	// store in Objects.
	TempDir string
	// Cron runs the maintenance tasks (impl.StartCron registers and starts
	// them); nil until then.
	Cron *cron.Scheduler
	// Metrics counts what an operator watches (nil: not collected).
	Metrics *metrics.Metrics
	// BranchLocks queues the contents commits to one branch (of every
	// process on the database: the store's Locker), so they do not keep
	// losing the compare-and-swap to each other.
	BranchLocks KeyedMutex
	// BlobLocks serialise the work on one package blob (by SHA-256) of
	// every process on the database: placing it and recording it, or
	// removing it.
	BlobLocks KeyedMutex
	// IssueLists keeps rendered issue lists for a moment when the store
	// keeps its read cache (nil otherwise); see impl/listcache.
	IssueLists *listcache.Cache
	// RepoLists keeps rendered repository lists (a user's, an
	// organization's, the caller's, a search) the same way.
	RepoLists *listcache.Cache
	// IssueSearches keeps rendered searches of issues across
	// repositories (IssueSearchTables) the same way.
	IssueSearches *listcache.Cache
	// UserSearches keeps rendered searches of users (UserSearchTables)
	// the same way.
	UserSearches *listcache.Cache
	// CommentLists keeps rendered comment lists (an issue's, a
	// repository's: CommentListTables) the same way.
	CommentLists *listcache.Cache
	// OAuth2KeyFile is the OAuth2 provider's signing key (see
	// impl/oauth2.LoadKeys), made on first start.
	OAuth2KeyFile string
	// Objects are where each kind of large file is kept (see
	// store/objects).
	Objects ObjectStores
	// Signer is the instance's signing key (--signing-key), nil when the
	// server's commits go unsigned.
	Signer *signing.Signer

	heavyOnce sync.Once
	heavy     *Limiter
}

// CommitSigner signs the commits the server writes, nil without a
// signing key.
func (d *Deps) CommitSigner() gitstore.CommitSigner {
	if d.Signer == nil {
		return nil
	}
	return d.Signer
}

// Verifier judges commit signatures against the users' keys and the
// instance key.
func (d *Deps) Verifier() signing.Verifier {
	return signing.Verifier{Store: d.Store, Instance: d.Signer}
}

// Heavy is the limiter of heavy requests (see Config.MaxHeavyRequests),
// sized from Config when first used, once the server is configured.
func (d *Deps) Heavy() *Limiter {
	d.heavyOnce.Do(func() { d.heavy = NewLimiter(d.Config.MaxHeavyRequests, d.Config.HeavyRequestWait) })
	return d.heavy
}

// Page normalises a list's page and limit parameters with the configured
// caps.
func (d *Deps) Page(page, limit *int64) paging.Params { return d.Config.Paging.From(page, limit) }

// Fail renders err through the one error translator.
func (d *Deps) Fail(err error) middleware.Responder { return d.Errors.Respond(err) }

// Links are the addresses a repository is reached at, for root (the
// request's root URL, see BaseURL): the SSH address is the server's
// configuration.
func (d *Deps) Links(root string) convert.Links {
	l := convert.Links{Root: root, SSHPort: d.Config.SSHPort, SSHHost: d.Config.SSHDomain}
	if l.SSHHost == "" {
		if u, err := url.Parse(d.Config.RootURL); err == nil {
			l.SSHHost = u.Hostname()
		}
	}
	return l
}

// BaseURL is the configured root URL with a trailing slash; it prefixes
// html_url, clone_url and the like.
func BaseURL(r *http.Request) string { return rooturl.From(r) }

// Viewer is the store user behind p, nil when anonymous.
func Viewer(p *auth.Principal) *store.User {
	if p == nil {
		return nil
	}
	return p.User
}

// VisibleUser loads a user or organization by name, answering 404 when it
// does not exist or p may not see it.
func (d *Deps) VisibleUser(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	u, err := d.Store.Users().FindByName(ctx, name)
	if err != nil {
		return nil, err
	}
	ok, err := d.Access.CanSeeUser(ctx, p, u)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound("not found")
	}
	return u, nil
}

// VisibleIndividual is VisibleUser restricted to individual accounts.
func (d *Deps) VisibleIndividual(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	u, err := d.VisibleUser(ctx, p, name)
	if err == nil && u.IsOrganization() {
		return nil, apierr.NotFound("not found")
	}
	return u, err
}

// VisibleOrg is VisibleUser restricted to organizations.
func (d *Deps) VisibleOrg(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	u, err := d.VisibleUser(ctx, p, name)
	if err == nil && !u.IsOrganization() {
		return nil, apierr.NotFound("not found")
	}
	return u, err
}

// OwnedOrg loads an organization the signed-in caller may see and checks
// that they own it: 401 when anonymous, 404 when hidden, 403 when visible
// but not owned.
func (d *Deps) OwnedOrg(ctx context.Context, name string) (*auth.Principal, *store.User, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, err := d.VisibleOrg(ctx, p, name)
	if err != nil {
		return nil, nil, err
	}
	ok, err := d.Access.IsOrgOwner(ctx, p, o)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, ErrNotOrgOwner
	}
	return p, o, nil
}

// ErrNotOrgOwner is the reference's refusal of an owner's operation to
// anyone else.
var ErrNotOrgOwner = apierr.Forbidden("Must be an organization owner")

// Repo loads owner/name with p's permission on it; a repository p may not
// see answers 404 exactly like a missing one.
func (d *Deps) Repo(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error) {
	r, err := d.Store.Repos().FindByOwnerAndName(ctx, owner, name)
	if err != nil {
		return nil, access.None, err
	}
	perm, err := d.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, access.None, err
	}
	if !perm.Pull {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

// IsNotFound reports the store's or the translator's not-found.
func IsNotFound(err error) bool {
	var e *apierr.Error
	return errors.Is(err, store.ErrNotFound) || (errors.As(err, &e) && e.Status == http.StatusNotFound)
}

// IssueListTables are the tables a rendered issue list is read from: the
// issues and what filters them (labels and their links, milestones,
// assignees, mentions, comments for the keyword), and what each issue shows
// (its pull request, projects, repository, and the users it names).
var IssueListTables = []string{"issues", "comments", "labels", "issue_labels", "milestones", "issue_assignees",
	"issue_mentions", "pull_requests", "projects", "project_issues", "users", "repositories"}

// IssueSearchTables are the tables a rendered search of issues across
// repositories is read from: those of an issue list, and what decides
// which repositories the caller sees (as for a repository list).
var IssueSearchTables = append(slices.Clone(IssueListTables), "collaborations", "org_members", "teams", "team_users", "team_repos")

// RepoListTables are the tables a rendered repository list is read from
// (the store's Repos().Search, access.Checker.Repos, convert.Repo): the
// repositories (their counters, topics and settings are columns) and
// their owners; what decides who sees which, with which permission:
// collaborations, organization membership, teams (their permission, units
// and all-repositories flag are columns), their members and their
// repositories.
var RepoListTables = []string{"repositories", "users", "collaborations", "org_members", "teams", "team_users", "team_repos"}

// UserSearchTables are the tables a rendered search of users is read from
// (the store's Users().Search with a keyword or an id, convert.User): the
// users, whose columns hold all it shows and filters on.
var UserSearchTables = []string{"users"}

// CommentListTables are the tables a rendered comment list is read from
// (the store's Comments().List and ListByRepo, convert.Comment): the
// comments, their issues (the index and kind in each link), their posters,
// and the repository (its full name in each link). A comment shows neither
// its reactions nor its attachments (an empty list): should it ever, their
// tables belong here.
var CommentListTables = []string{"comments", "issues", "users", "repositories"}

// New builds the dependencies of a server over db whose files live under
// dataDir (repositories/, attachments/ and packages/), with the default configuration;
// main and the API tests share it so they cannot drift apart.
func New(db store.Store, dataDir string, hasher auth.Hasher, log *slog.Logger) (*Deps, error) {
	git, err := gitstore.New(filepath.Join(dataDir, "repositories"))
	if err != nil {
		return nil, err
	}
	clock := store.SystemClock{}
	// Consumers are registered by the composition root (impl.Consumers).
	bus := events.NewBus(db, clock, log, events.DefaultOptions())
	issueLists, err := listcache.New(db, IssueListTables...)
	if err != nil {
		return nil, err
	}
	repoLists, err := listcache.New(db, RepoListTables...)
	if err != nil {
		return nil, err
	}
	issueSearches, err := listcache.New(db, IssueSearchTables...)
	if err != nil {
		return nil, err
	}
	userSearches, err := listcache.New(db, UserSearchTables...)
	if err != nil {
		return nil, err
	}
	commentLists, err := listcache.New(db, CommentListTables...)
	if err != nil {
		return nil, err
	}
	if l, ok := db.Locks().(interface{ AcrossHosts() bool }); ok && l.AcrossHosts() {
		// Processes on several hosts may share the repository directory,
		// where a file lock may not hold.
		git.Locker = db.Locks()
	}
	return &Deps{
		BranchLocks:   KeyedMutex{Locker: db.Locks(), Prefix: "branch:"},
		BlobLocks:     KeyedMutex{Locker: db.Locks(), Prefix: "package-blob:"},
		IssueLists:    issueLists,
		RepoLists:     repoLists,
		IssueSearches: issueSearches,
		UserSearches:  userSearches,
		CommentLists:  commentLists,
		Store:         db,
		Git:           git,
		Access:        access.Checker{Store: db},
		Hasher:        hasher,
		Errors:        apierr.Translator{Log: log},
		Log:           log,
		Clock:         clock,
		Config:        DefaultConfig(),
		Events:        bus,
		TempDir:       filepath.Join(dataDir, "tmp"),
		OAuth2KeyFile: filepath.Join(dataDir, "oauth2", "jwt_private.pem"),
		Objects:       LocalObjectStores(dataDir),
	}, nil
}

// VisibleUsers is one page of the individual accounts q keeps that p may
// see (the rule of access.UserVisibilities), by id unless q orders them.
func (d *Deps) VisibleUsers(ctx context.Context, p *auth.Principal, q store.UserSearch, pg paging.Params) ([]*store.User, int64, error) {
	q.Type = store.UserTypeIndividual
	q.Visibilities, q.Self = access.UserVisibilities(p)
	if q.OrderBy == "" {
		q.OrderBy = "id ASC"
	}
	return d.Store.Users().Search(ctx, q, pg.Store())
}
