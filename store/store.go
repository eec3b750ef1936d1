// Package store holds the domain types of repohost, the interfaces through which
// the rest of the program reads and writes them, and the sentinel errors every
// implementation returns. It knows nothing of HTTP or of the generated models.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors. Implementations wrap them with %w; impl/apierr maps them to
// status codes, so nothing above the store ever inspects driver errors.
var (
	ErrNotFound  = errors.New("not found")
	ErrDuplicate = errors.New("already exists")
	// ErrConflict means a precondition on the stored state (such as a version
	// number) no longer holds.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means the database refused a value (such as a NUL byte in
	// text on PostgreSQL); it is the caller's input, not a server fault.
	ErrInvalid = errors.New("invalid value")
	// ErrUnavailable means the database could not be reached; nothing was
	// changed and the same request may succeed later.
	ErrUnavailable = errors.New("database unavailable")
)

// Tx runs fn inside one database transaction carried by the context it passes
// on. Store methods called with that context join the transaction; nested calls
// reuse the outer one.
type Tx interface {
	WithTx(ctx context.Context, fn func(ctx context.Context) error) error
	// AfterCommit runs fn once the outermost transaction carried by ctx has
	// committed, and never if it rolls back; with no transaction in ctx it
	// runs fn at once. Side effects that must not outlive a rolled-back
	// change (handing out events) hang here.
	AfterCommit(ctx context.Context, fn func())
}

// Page selects a window of a list. Offset and Limit are already normalised by
// impl/paging; a store never decides page sizes itself.
type Page struct {
	Offset int
	Limit  int
}

// Watch is what a cache of answers built from the store needs to be as
// fresh as the store's own read cache: within this process, Generation
// grows as soon as a change to one of the watched tables is made (at the
// statement, and again when its transaction ends), so an answer read after
// Generation was taken is current while it is unchanged. Across processes
// sharing the database, the same holds in cluster mode (the processes tell
// each other what they changed, and Fresh makes sure this one has heard
// of every write acknowledged before a request began); otherwise nothing
// is told, and an answer may be served for at most TTL.
//
// An answer read from one repository's rows may follow a finer rule:
// Shared grows with every change not confined to one repository, and
// Repo(id) with the changes confined to repository id (the issue
// tracker's rows of that repository, its counters), so that a write in
// one repository does not retire what was read from another. Repo may
// also grow with another repository's changes (repositories share
// counters), never miss one of id's. Shared is taken before anything the
// answer is read from, Repo(id) before the repository's own rows.
type Watch struct {
	TTL time.Duration
	// Fresh, when set, is asked once per request before anything is read
	// (Generation, Shared): false means the cache must neither serve nor
	// keep anything for this request (several processes share the
	// database and this one cannot tell it has heard of every write
	// acknowledged before the request began).
	Fresh      func(ctx context.Context) bool
	Generation func() uint64
	Shared     func() uint64
	Repo       func(repoID int64) uint64
}

// Store bundles every aggregate's store. The GORM implementation satisfies it.
type Store interface {
	// Watch watches the named tables; false when the store caches nothing
	// (then nothing built on it may be cached either).
	Watch(tables ...string) (Watch, bool, error)
	// Locks serialises work per key across every process on the
	// database (see Locker).
	Locks() Locker
	Tx
	Users() UserStore
	Emails() EmailStore
	Tokens() TokenStore
	// OAuth2 is the OAuth2 provider's state.
	OAuth2() OAuth2Store
	Orgs() OrgStore
	Access() AccessStore
	Repos() RepoStore
	IssueTracker
	GitData
	ReleaseData
	Events() EventStore
	// EventJobs is the consumers' queue over the outbox.
	EventJobs() EventJobStore
	Keys() KeyStore
	Cron() CronStore
	Notices() NoticeStore
	Packages() PackageStore
	Hooks() HookStore
	Actions() ActionsStore
	ActionSecrets() ActionSecretStore
	ActionVariables() ActionVariableStore
	Pulls() PullStore
	People() PeopleStore
	// Watches keeps repository watches and issue subscriptions.
	Watches() WatchStore
	// Notifications keeps the users' notification threads.
	Notifications() NotificationStore
	Close() error
}
