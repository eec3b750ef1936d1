package app

import (
	"time"

	"repohost/impl/cron"
	"repohost/impl/paging"
)

// Config gathers the limits the service enforces. main builds it from
// DefaultConfig (and, later, flags); tests may lower a limit to reach it
// cheaply. Nothing reads these values from package variables.
type Config struct {
	// RootURL is the public address of the server, with a trailing slash
	// (the reference's ROOT_URL); every absolute URL in an answer starts
	// with it.
	RootURL string
	// SSHPort is the port the built-in SSH server is reached on, 0 when
	// there is none (no ssh_url then); SSHDomain is its host name, the
	// root URL's host when empty (the reference's SSH_DOMAIN default).
	SSHPort   int
	SSHDomain string
	// SSHHandshakeTimeout bounds an SSH connection's handshake and
	// authentication; SSHMaxPreAuthPerAddress caps the connections of one
	// source address still at that stage (more are closed at once);
	// SSHIdleTimeout closes an authenticated connection on which nothing
	// was read or written for that long. 0 turns each off.
	SSHHandshakeTimeout     time.Duration
	SSHMaxPreAuthPerAddress int
	SSHIdleTimeout          time.Duration
	Paging                  paging.Limits
	// MaxBodyBytes bounds a JSON request body; larger ones are refused
	// before they are parsed.
	MaxBodyBytes int64
	// BodyBudgetBytes bounds the bytes of large (1 MiB or more) JSON
	// bodies being read and decoded at once; others wait their turn.
	BodyBudgetBytes int64
	// AllowedReactions are the reaction contents issues and comments accept.
	AllowedReactions []string
	// MaxTopicsPerRepo caps the topics of one repository.
	MaxTopicsPerRepo int
	// MaxContentsBlob is the largest file whose content the contents API
	// inlines (base64); bigger ones are described without content, like
	// the reference's DEFAULT_MAX_BLOB_SIZE.
	MaxContentsBlob int64
	// MaxGitInflatedBody bounds the decompressed size of a gzip-compressed
	// git request body (413 past it). Uncompressed pushes are not bounded;
	// git compresses only requests it buffered whole (up to its
	// http.postBuffer), so the bound only stops a small body from
	// inflating without end.
	MaxGitInflatedBody int64
	// LoginFailures failed password attempts for one account from one
	// address (or five times as many from one address across accounts)
	// within LoginWindow lock further attempts from that address (429)
	// until the window has passed; see auth.LoginThrottle.
	LoginFailures int
	LoginWindow   time.Duration
	// VerifiedPasswords bounds the cache of passwords bcrypt accepted
	// (0 turns it off), each remembered for VerifiedPasswordTTL; see
	// auth.CredentialCache.
	VerifiedPasswords   int
	VerifiedPasswordTTL time.Duration
	// AccessLogEvery is how many requests share one access-log line: 1
	// logs each, 0 none (see impl.ParseAccessLog).
	AccessLogEvery int
	// MetricsToken, when set, is the bearer token GET /metrics demands
	// (metrics are served only when Deps.Metrics is set).
	MetricsToken string
	// HeaderTimeout bounds reading a request's headers; IdleTimeout closes
	// idle keep-alive connections; StallTimeout ends a request whose body
	// or answer stops making progress (see impl.HTTPServer).
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	StallTimeout  time.Duration
	// MaxHeavyRequests bounds the requests that stream a lot of
	// repository data at once: archives (API and /{owner}/{repo}/archive),
	// raw downloads of blobs over LargeBlobBytes, and npm publishes (each a
	// tarball decoded to disk as it arrives). One more waits up to
	// HeavyRequestWait for a slot, then is answered 503 with Retry-After.
	// Each streams from disk, so memory stays flat whatever the file size.
	MaxHeavyRequests int
	HeavyRequestWait time.Duration
	LargeBlobBytes   int64
	// MaxAssetBytes is the largest release asset accepted (413 past it);
	// the reference's [repository.release] FILE_MAX_SIZE, 2 GiB by default.
	MaxAssetBytes int64
	// Cron overrides tasks' default schedules by name (--cron); CronLease
	// is how long a process that died keeps a task from the others.
	Cron      map[string]cron.Setting
	CronLease time.Duration
	// ArchiveMaxAge is the age past which archive_cleanup removes a kept
	// archive (the reference's [cron.archive_cleanup] OLDER_THAN).
	ArchiveMaxAge time.Duration
	// InactiveAccountAge is how long an account may stay unactivated
	// before delete_inactive_accounts removes it (its OLDER_THAN).
	InactiveAccountAge time.Duration
	// NoticeMaxAge is the age past which delete_old_system_notices
	// removes a system notice (the reference's default: a year).
	NoticeMaxAge time.Duration
	// MaxPackageFileBytes is the largest package file accepted and
	// MaxPackageOwnerBytes the most all files of one owner's packages may
	// take together (413 past either; -1: no limit), like the reference's
	// [packages] LIMIT_SIZE_GENERIC and LIMIT_TOTAL_OWNER_SIZE.
	MaxPackageFileBytes  int64
	MaxPackageOwnerBytes int64
	// LFSMaxFileBytes is the largest Git LFS object accepted (the
	// reference's [server] LFS_MAX_FILE_SIZE) and LFSOwnerBytes the most
	// the LFS objects of one owner's repositories may take together (413
	// past either; -1: no limit).
	LFSMaxFileBytes int64
	LFSOwnerBytes   int64
	// LFSAuthExpiry is how long a token from git-lfs-authenticate (SSH)
	// is accepted (the reference's LFS_HTTP_AUTH_EXPIRY).
	LFSAuthExpiry time.Duration
	// LFSGCOlderThan is the age past which gc_lfs removes a stored LFS
	// object no repository links (the reference's [cron.gc_lfs]
	// OLDER_THAN).
	LFSGCOlderThan time.Duration
	// EventRetention is how long the outbox keeps an event every consumer
	// has finished with before cleanup_events deletes it (the reference
	// keeps its queues' items until handled, and its hook tasks for the
	// same week).
	EventRetention time.Duration
	// PackageTypeLimits overrides MaxPackageFileBytes per package type
	// ("npm", "generic"; -1: no limit), like the reference's
	// LIMIT_SIZE_NPM, LIMIT_SIZE_GENERIC and the others.
	PackageTypeLimits map[string]int64
	// ActionsRetention is how long finished workflow runs (with their
	// jobs and logs) are kept before delete_old_actions removes them (the
	// reference's [actions] LOG_RETENTION_DAYS).
	ActionsRetention time.Duration
	// ActionsZombieTimeout is how long a running task may go without word
	// from its runner before cleanup_actions fails it (the reference's
	// [actions] ZOMBIE_TASK_TIMEOUT).
	ActionsZombieTimeout time.Duration
	// ActionsEndlessTaskTimeout is how long a task may run, however often
	// its runner reports, before stop_endless_tasks fails it (the
	// reference's [actions] ENDLESS_TASK_TIMEOUT).
	ActionsEndlessTaskTimeout time.Duration
	// ActionsAbandonedJobTimeout is how long a job may wait for a runner
	// (or on its needs) unchanged before cancel_abandoned_jobs cancels it
	// (the reference's [actions] ABANDONED_JOB_TIMEOUT).
	ActionsAbandonedJobTimeout time.Duration
	// Webhooks are the delivery settings of webhooks.
	Webhooks WebhookConfig
	// Migrations says where migrations (and mirrors) may connect.
	Migrations MigrationConfig
	// Mirrors are the settings of pull and push mirrors.
	Mirrors MirrorConfig
}

// MirrorConfig is the reference's [mirror] section.
type MirrorConfig struct {
	// Disabled turns mirrors off (the reference's ENABLED = false): no
	// new mirror, no sync, and the settings say so.
	Disabled bool
	// DisableNewPull and DisableNewPush refuse new pull and new push
	// mirrors; those already there keep syncing.
	DisableNewPull bool
	DisableNewPush bool
	// DefaultInterval is a new pull mirror's interval when none is asked
	// for; MinInterval the shortest accepted (0 means never, and is
	// always accepted).
	DefaultInterval time.Duration
	MinInterval     time.Duration
}

// NewPullAllowed and NewPushAllowed tell whether new mirrors of either
// kind may be made.
func (c MirrorConfig) NewPullAllowed() bool { return !c.Disabled && !c.DisableNewPull }
func (c MirrorConfig) NewPushAllowed() bool { return !c.Disabled && !c.DisableNewPush }

// MigrationConfig is the reference's [migrations] section: the addresses
// a migration, a pull mirror or a push mirror may connect to.
type MigrationConfig struct {
	// Disabled turns migrations off (the reference's [repository]
	// DISABLE_MIGRATIONS): POST /repos/migrate answers 403.
	Disabled bool
	// AllowedDomains are host globs and CIDR ranges ("" allows every
	// external address); BlockedDomains the same, refused first.
	AllowedDomains string
	BlockedDomains string
	// AllowLocalNetworks adds loopback and private addresses.
	AllowLocalNetworks bool
	// Wait is how long POST /repos/migrate waits for the migration's job
	// (or a mirror's first sync) before answering, as the reference
	// answers once the repository is filled; 0 answers at once, with the
	// repository still being migrated. The job does not depend on the
	// request: it goes on (and survives a restart) either way.
	Wait time.Duration
}

// WebhookConfig tunes webhook delivery.
type WebhookConfig struct {
	// AllowedHosts is the reference's [webhook] ALLOWED_HOST_LIST: a
	// comma-separated list of "external", "loopback", "private", "*",
	// host globs and CIDR ranges; "" means external.
	AllowedHosts string
	// Timeout bounds one attempt, from dialling to the end of the answer.
	Timeout time.Duration
	// MaxAttempts is how often a delivery is tried before it is failed;
	// attempt n waits RetryBase·2^(n-1), at most RetryMax, after the last.
	MaxAttempts int
	RetryBase   time.Duration
	RetryMax    time.Duration
	// Workers is how many deliveries this process sends at once.
	Workers int
	// Retention is how long finished deliveries are kept (PruneDeliveries).
	Retention time.Duration
	// PollInterval is how often an idle worker looks for deliveries queued
	// by other processes or due for a retry.
	PollInterval time.Duration
}

// DefaultConfig is the reference's defaults.
func DefaultConfig() Config {
	return Config{
		Paging: paging.DefaultLimits(),
		// As OpenSSH's LoginGraceTime (120 s) and MaxStartups, tighter:
		// git clients authenticate in well under a second.
		SSHHandshakeTimeout:     30 * time.Second,
		SSHMaxPreAuthPerAddress: 10,
		SSHIdleTimeout:          10 * time.Minute,
		MaxBodyBytes:            8 << 20,
		BodyBudgetBytes:         24 << 20,
		AllowedReactions:        []string{"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"},
		MaxTopicsPerRepo:        25,
		MaxContentsBlob:         10 << 20,
		// Far above git's default http.postBuffer (1 MiB), and above the
		// 500 MB users often raise it to.
		MaxGitInflatedBody: 1 << 30,
		LoginFailures:      10,
		LoginWindow:        5 * time.Minute,
		// Enough for every active account of a large site; an entry is a
		// few dozen bytes.
		VerifiedPasswords:   10_000,
		VerifiedPasswordTTL: 2 * time.Minute,
		AccessLogEvery:      1,
		HeaderTimeout:       10 * time.Second,
		IdleTimeout:         90 * time.Second,
		StallTimeout:        60 * time.Second,
		MaxHeavyRequests:    4,
		HeavyRequestWait:    30 * time.Second,
		LargeBlobBytes:      1 << 20,
		MaxAssetBytes:       2 << 30,
		CronLease:           cron.DefaultLease,
		ArchiveMaxAge:       24 * time.Hour,
		InactiveAccountAge:  7 * 24 * time.Hour,
		NoticeMaxAge:        365 * 24 * time.Hour,
		// The reference leaves both unlimited; a file as large as a
		// release asset, and far more per owner, keep one account from
		// filling the disk by accident.
		MaxPackageFileBytes:  2 << 30,
		MaxPackageOwnerBytes: 50 << 30,
		// The reference leaves LFS objects unlimited too.
		LFSMaxFileBytes: -1,
		LFSOwnerBytes:   -1,
		LFSAuthExpiry:   24 * time.Hour,
		LFSGCOlderThan:  7 * 24 * time.Hour,
		Webhooks: WebhookConfig{
			Timeout:      5 * time.Second,
			MaxAttempts:  8,
			RetryBase:    10 * time.Second,
			RetryMax:     time.Hour,
			Workers:      8,
			Retention:    7 * 24 * time.Hour,
			PollInterval: time.Second,
		},
		Mirrors:                    MirrorConfig{DefaultInterval: 8 * time.Hour, MinInterval: 10 * time.Minute},
		EventRetention:             7 * 24 * time.Hour,
		ActionsRetention:           365 * 24 * time.Hour,
		ActionsZombieTimeout:       10 * time.Minute,
		ActionsEndlessTaskTimeout:  3 * time.Hour,
		ActionsAbandonedJobTimeout: 24 * time.Hour,
	}
}
