// Command repohost is the git hosting server: `serve` runs it, `migrate`
// brings the database schema up to date, and `admin user create` makes
// accounts from the command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"repohost/impl"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/cron"
	"repohost/impl/events"
	"repohost/impl/gitssh"
	"repohost/impl/metrics"
	"repohost/impl/requestid"
	"repohost/impl/signing"
	"repohost/impl/user"
	"repohost/impl/webhook"
	"repohost/store"
	"repohost/store/gitstore"
	"repohost/store/secretbox"
	"repohost/store/sqlstore"
)

const usage = `usage:
  repohost serve   [--listen ADDR] [--ssh-listen ADDR] [--data DIR] [--db DSN] [--root-url URL] [--access-log on|off|sample:N]
                   [--log-level debug|info|warn|error] [--metrics] [--metrics-token T] [--cron SETTINGS] [--cron-lease D]
                   [--signing-key FILE] [--secret-key KEY] [--webhook-allowed-hosts LIST] [--migrations-allowed-domains LIST] [--migrations-blocked-domains LIST] [--migrations-allow-local-networks] [--migrations-wait D] [--disable-migrations] [--disable-mirrors] [--disable-new-pull-mirrors] [--disable-new-push-mirrors] [--mirror-min-interval D] [--mirror-default-interval D] [--pprof ADDR] [--memory-limit SIZE]
                   [--event-lease D]
  repohost migrate [--data DIR] [--db DSN] [--secret-key KEY]
  repohost admin user create --username U --password P --email E [--admin] [--must-change-password]
  repohost admin user list [--admin]
  repohost admin user change-password --username U --password P [--must-change-password=false]
  repohost admin user delete --username U [--purge]
  repohost admin user generate-access-token --username U [--token-name N] [--scopes S] [--raw]
  repohost admin repo-sync-releases [--repo OWNER/NAME]
  repohost admin notices [--limit N]
  repohost admin events queues
  repohost admin reindex-issues [--check]
  repohost admin rotate-secret-key [--new-key KEY]
  repohost admin events dead-letters [--consumer NAME] [--limit N]
  repohost admin events retry (--id N | --all [--consumer NAME])
  (every admin command also takes --data DIR, --db DSN and --secret-key KEY)

--db is a postgres:// URL or the path of a SQLite file (default: DIR/repohost.db).
--signing-key is an armored OpenPGP private key (no passphrase) that signs
the commits the server writes.
--secret-key seals the secrets kept in the database (webhook authorization
headers, Actions secrets); without it a key is generated once into DIR/secret_key
(mode 0600), which every process sharing DIR uses. Keep it: without it those
secrets are lost. admin rotate-secret-key re-seals them all under a new key
(random unless --new-key) in one transaction: with the key file it replaces
the file, with --secret-key it prints the key to configure; stop the servers
first and restart them with the new key.
Each flag can also come from REPOHOST_LISTEN, REPOHOST_SSH_LISTEN, REPOHOST_DATA, REPOHOST_DB,
REPOHOST_ROOT_URL, REPOHOST_ACCESS_LOG, REPOHOST_LOG_LEVEL, REPOHOST_METRICS (true),
REPOHOST_METRICS_TOKEN, REPOHOST_CLUSTER, REPOHOST_CRON, REPOHOST_CRON_LEASE, REPOHOST_EVENT_LEASE, REPOHOST_SIGNING_KEY, REPOHOST_SECRET_KEY, REPOHOST_PPROF,
REPOHOST_MEMORY_LIMIT, REPOHOST_STORAGE and REPOHOST_STORAGE_<KIND> (LFS, PACKAGES, ATTACHMENTS, REPO_ARCHIVE).
--cluster (auto: on with PostgreSQL) lets several server processes share one
PostgreSQL: each tells the others what it changed and hears of their
changes before serving from its caches (see docs/deployment.md); on the
embedded database one server process runs, and a second one is refused.
--storage says where large files live (LFS objects, package blobs, release
files, repository archives): local (the default, under DIR), local:DIR, or an
S3-compatible service, http(s)://HOST:PORT/BUCKET[/BASE][?location=REGION&serve_direct=true]
(each kind under BASE/KIND/; the bucket is created when missing). --storage-KIND
gives one kind its own place, used as given. The keys come from
REPOHOST_STORAGE_ACCESS_KEY_ID and REPOHOST_STORAGE_SECRET_ACCESS_KEY (or
REPOHOST_STORAGE_SECRET_ACCESS_KEY_FILE), or KEY:SECRET@ in the address.
serve_direct=true redirects downloads to presigned addresses of the service.
--pprof serves Go's profiles (net/http/pprof, /debug/pprof/) on a separate
listener, which must be a loopback address.
--memory-limit is the Go runtime's soft memory limit (default ` + defaultMemoryLimit + `; off for
none; REPOHOST_MEMORY_LIMIT); GOMEMLIMIT, when set, wins over it.
`

// testCronTasks are tasks only a test build adds (crontest_task.go, build
// tag crontest); empty in the server people run.
var testCronTasks []cron.Task

// logLevel is the level of the process's log, set by serve's --log-level.
var logLevel = new(slog.LevelVar)

func main() {
	// Lines logged with a request's context carry its id.
	log := slog.New(requestid.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})))
	if err := run(os.Args[1:], log); err != nil {
		fmt.Fprintln(os.Stderr, "repohost:", err)
		os.Exit(1)
	}
}

func run(args []string, log *slog.Logger) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	switch {
	case args[0] == "serve":
		return serve(args[1:], log)
	case args[0] == "migrate":
		return migrate(args[1:], log)
	case len(args) >= 3 && args[0] == "admin" && args[1] == "user":
		switch args[2] {
		case "create":
			return createUser(args[3:], log)
		case "list":
			return listUsers(args[3:], log)
		case "change-password":
			return changePassword(args[3:], log)
		case "delete":
			return deleteUser(args[3:], log)
		case "generate-access-token":
			return generateToken(args[3:], log)
		}
	case len(args) >= 2 && args[0] == "admin" && args[1] == "repo-sync-releases":
		return syncReleases(args[2:], log)
	case len(args) >= 2 && args[0] == "admin" && args[1] == "notices":
		return listNotices(args[2:], log)
	case len(args) >= 2 && args[0] == "admin" && args[1] == "reindex-issues":
		return reindexIssues(args[2:], log)
	case len(args) >= 2 && args[0] == "admin" && args[1] == "rotate-secret-key":
		return rotateSecretKey(args[2:], log)
	case len(args) >= 3 && args[0] == "admin" && args[1] == "events":
		switch args[2] {
		case "queues":
			return listEventQueues(args[3:], log)
		case "dead-letters":
			return listDeadLetters(args[3:], log)
		case "retry":
			return retryDeadLetters(args[3:], log)
		}
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", strings.Join(args[:min(len(args), 3)], " "))
}

// durationEnv reads a duration from the environment (fallback when unset
// or unreadable; the flag then reports a bad value).
func durationEnv(name string, fallback time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return fallback
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// storage holds the flags every command shares.
type storage struct {
	data      string
	db        string
	secretKey string
	// cluster turns the store's cluster mode on (serve, on PostgreSQL).
	cluster bool
	// objects are the storage addresses of large files: "" the default
	// (--storage), else each kind's own (--storage-KIND).
	objects map[string]*string
}

func (s *storage) register(fs *flag.FlagSet) {
	fs.StringVar(&s.data, "data", env("REPOHOST_DATA", "./data"), "data directory (repositories, SQLite file)")
	fs.StringVar(&s.db, "db", env("REPOHOST_DB", ""), "postgres:// URL or SQLite file path")
	fs.StringVar(&s.secretKey, "secret-key", env("REPOHOST_SECRET_KEY", ""),
		"instance secret key sealing secrets kept in the database (default: generated once into DIR/"+secretbox.KeyFile+")")
	s.objects = map[string]*string{"": fs.String("storage", env("REPOHOST_STORAGE", "local"),
		"where large files live: local (under DIR), local:DIR, or an S3-compatible service http(s)://[KEY:SECRET@]HOST:PORT/BUCKET[/BASE][?location=REGION&serve_direct=true]")}
	for _, kind := range app.ObjectKinds {
		name := "REPOHOST_STORAGE_" + strings.ToUpper(strings.ReplaceAll(kind, "-", "_"))
		s.objects[kind] = fs.String("storage-"+kind, env(name, ""), "where "+kind+" files live, as --storage (default: --storage, under the base path "+kind+"/)")
	}
}

// objectStores opens the stores of large files the flags choose.
func (s *storage) objectStores() (app.ObjectStores, error) {
	settings := app.StorageSettings{Kinds: map[string]string{}}
	if err := app.StorageFromEnv(&settings); err != nil {
		return app.ObjectStores{}, err
	}
	if s.objects != nil {
		settings.Default = *s.objects[""]
		for _, kind := range app.ObjectKinds {
			settings.Kinds[kind] = *s.objects[kind]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return app.OpenObjectStores(ctx, s.data, settings)
}

// secrets is the box sealing database secrets with the instance key: the
// one given, else the one kept in the data directory (made on first use).
func (s *storage) secrets() (*secretbox.Box, error) {
	key := s.secretKey
	if key == "" {
		var err error
		if key, err = secretbox.LoadKey(s.data); err != nil {
			return nil, fmt.Errorf("instance secret key: %w", err)
		}
	}
	return secretbox.New(key)
}

// open connects to the database and applies pending migrations.
func (s *storage) open(ctx context.Context, log *slog.Logger) (*sqlstore.DB, error) {
	if err := os.MkdirAll(s.data, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	dsn := s.db
	if dsn == "" {
		dsn = sqlstore.DefaultSQLitePath(s.data)
	}
	secrets, err := s.secrets()
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.Open(dsn, sqlstore.Options{CacheTTL: sqlstore.DefaultCacheTTL, Secrets: secrets,
		Cluster: s.cluster, Log: log})
	if err != nil {
		return nil, err
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		log.Info("applied migrations", "count", n)
	}
	return db, nil
}

// deps builds the dependencies over db and registers the outbox's
// consumers, so that the events this process emits get their jobs (a
// server process takes them; see impl.RegisterConsumers).
func (s *storage) deps(db store.Store, log *slog.Logger) (*app.Deps, *impl.Background, error) {
	d, err := app.New(db, s.data, auth.Hasher{}, log)
	if err != nil {
		return nil, nil, err
	}
	if d.Objects, err = s.objectStores(); err != nil {
		return nil, nil, err
	}
	opts := events.DefaultOptions()
	// On the embedded database this is the only process there is.
	opts.SoleProcess = !sqlstore.IsPostgres(s.db)
	d.Events.SetOptions(opts)
	return d, impl.RegisterConsumers(d), nil
}

func migrate(args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var st storage
	st.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	db, err := st.open(context.Background(), log)
	if err != nil {
		return err
	}
	return db.Close()
}

func createUser(args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("admin user create", flag.ContinueOnError)
	var st storage
	st.register(fs)
	name := fs.String("username", "", "login name")
	password := fs.String("password", "", "password")
	email := fs.String("email", "", "primary email address")
	admin := fs.Bool("admin", false, "make the user a site admin")
	mustChange := fs.Bool("must-change-password", false, "require a password change before API use")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *password == "" || *email == "" {
		return errors.New("--username, --password and --email are required")
	}
	ctx := context.Background()
	db, err := st.open(ctx, log)
	if err != nil {
		return err
	}
	defer db.Close()
	d, _, err := st.deps(db, log)
	if err != nil {
		return err
	}
	u, err := impl.NewServices(d).Users.Create(ctx, nil, user.CreateInput{Name: *name, Password: *password, Email: *email,
		IsAdmin: *admin, MustChangePassword: *mustChange})
	if err != nil {
		return fmt.Errorf("cannot create user %q: %w", *name, err)
	}
	fmt.Printf("created user %s (id %d, admin %v)\n", u.Name, u.ID, u.IsAdmin)
	return nil
}

// ensureFirstAdmin creates the site admin "admin" when the database has no
// users at all, so a fresh server can be used at once.
func ensureFirstAdmin(ctx context.Context, d *app.Deps) error {
	n, err := d.Store.Users().Count(ctx, store.UserTypeIndividual)
	if err != nil || n > 0 {
		return err
	}
	password := os.Getenv("REPOHOST_ADMIN_PASSWORD")
	generated := password == ""
	if generated {
		if password, err = auth.RandomPassword(); err != nil {
			return err
		}
	}
	if _, err := impl.NewServices(d).Users.Create(ctx, nil, user.CreateInput{Name: "admin", Password: password,
		Email: "admin@repohost.localhost", IsAdmin: true}); err != nil {
		return fmt.Errorf("create first admin: %w", err)
	}
	if generated {
		// Printed once: it is not stored anywhere in clear.
		d.Log.Info("created the site admin 'admin' with a generated password", "username", "admin", "password", password)
	} else {
		d.Log.Info("created the site admin 'admin' with the password from REPOHOST_ADMIN_PASSWORD")
	}
	return nil
}

func serve(args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var st storage
	st.register(fs)
	listen := fs.String("listen", env("REPOHOST_LISTEN", "127.0.0.1:3000"), "address to listen on")
	rootURL := fs.String("root-url", env("REPOHOST_ROOT_URL", ""), "public URL of the server, prefix of every absolute URL it answers (default: http://LISTEN/)")
	accessLog := fs.String("access-log", env("REPOHOST_ACCESS_LOG", "on"), "request log: on, off, or sample:N (one request in N)")
	sshListen := fs.String("ssh-listen", env("REPOHOST_SSH_LISTEN", ""), "address to serve git over SSH on (default: no SSH)")
	level := fs.String("log-level", env("REPOHOST_LOG_LEVEL", "info"), "least severe level logged: debug, info, warn or error")
	metricsOn := fs.Bool("metrics", env("REPOHOST_METRICS", "") == "true", "serve Prometheus metrics at GET /metrics")
	metricsToken := fs.String("metrics-token", env("REPOHOST_METRICS_TOKEN", ""), "bearer token GET /metrics demands (none: open)")
	cronSpec := fs.String("cron", env("REPOHOST_CRON", ""), `maintenance task settings, "name=SCHEDULE;name=off;name=on"`)
	eventLease := fs.Duration("event-lease", durationEnv("REPOHOST_EVENT_LEASE", events.DefaultOptions().Lease),
		"how long an event job stays with a server process that stopped renewing its claim")
	cronLease := fs.Duration("cron-lease", durationEnv("REPOHOST_CRON_LEASE", cron.DefaultLease), "how long a task stays with a server process that stopped renewing its lease")
	signingKey := fs.String("signing-key", env("REPOHOST_SIGNING_KEY", ""), "armored OpenPGP private key signing the server's commits (default: unsigned)")
	allowedHosts := fs.String("webhook-allowed-hosts", env("REPOHOST_WEBHOOK_ALLOWED_HOSTS", ""),
		"addresses webhooks may deliver to: external (the default), loopback, private, *, CIDR ranges and host globs, comma-separated")
	migAllowed := fs.String("migrations-allowed-domains", env("REPOHOST_MIGRATIONS_ALLOWED_DOMAINS", ""),
		"hosts migrations and mirrors may connect to: host globs and CIDR ranges, comma-separated (default: any external address)")
	migBlocked := fs.String("migrations-blocked-domains", env("REPOHOST_MIGRATIONS_BLOCKED_DOMAINS", ""),
		"hosts migrations and mirrors may never connect to: host globs and CIDR ranges, comma-separated")
	migLocal := fs.Bool("migrations-allow-local-networks", env("REPOHOST_MIGRATIONS_ALLOW_LOCAL_NETWORKS", "") == "true",
		"let migrations and mirrors connect to loopback and private addresses")
	migWait := fs.Duration("migrations-wait", durationEnv("REPOHOST_MIGRATIONS_WAIT", 10*time.Minute),
		"how long POST /repos/migrate waits for the migration to finish before answering (0: at once)")
	noMigrations := fs.Bool("disable-migrations", env("REPOHOST_DISABLE_MIGRATIONS", "") == "true",
		"turn migrations (POST /repos/migrate) off")
	noMirrors := fs.Bool("disable-mirrors", env("REPOHOST_DISABLE_MIRRORS", "") == "true",
		"turn pull and push mirrors off (the reference's [mirror] ENABLED = false)")
	noNewPull := fs.Bool("disable-new-pull-mirrors", env("REPOHOST_DISABLE_NEW_PULL_MIRRORS", "") == "true",
		"refuse new pull mirrors (the reference's [mirror] DISABLE_NEW_PULL)")
	noNewPush := fs.Bool("disable-new-push-mirrors", env("REPOHOST_DISABLE_NEW_PUSH_MIRRORS", "") == "true",
		"refuse new push mirrors (the reference's [mirror] DISABLE_NEW_PUSH)")
	mirrorMin := fs.Duration("mirror-min-interval", durationEnv("REPOHOST_MIRROR_MIN_INTERVAL", 10*time.Minute),
		"the shortest interval a mirror may be given (the reference's [mirror] MIN_INTERVAL)")
	mirrorDefault := fs.Duration("mirror-default-interval", durationEnv("REPOHOST_MIRROR_DEFAULT_INTERVAL", 8*time.Hour),
		"a new pull mirror's interval when none is given (the reference's [mirror] DEFAULT_INTERVAL)")
	pprofListen := fs.String("pprof", env("REPOHOST_PPROF", ""), "loopback address to serve Go's profiles (/debug/pprof/) on (default: none)")
	sizeLimits := fs.String("size-limits", env("REPOHOST_SIZE_LIMITS", ""),
		`upload limits (413 past them), "asset=2GiB,package=2GiB,npm=100MiB,generic=off": release assets, any package file, one package type`)
	clusterMode := fs.String("cluster", env("REPOHOST_CLUSTER", "auto"),
		"several processes on one PostgreSQL: on, off, or auto (on with PostgreSQL); see docs/deployment.md")
	lfsMaxFile := fs.String("lfs-max-file-size", env("REPOHOST_LFS_MAX_FILE_SIZE", "off"),
		"the largest Git LFS object accepted, a size such as 100MiB, or off (the reference's LFS_MAX_FILE_SIZE; 413 past it)")
	memoryLimit := fs.String("memory-limit", env("REPOHOST_MEMORY_LIMIT", defaultMemoryLimit),
		"the Go runtime's soft memory limit: a size such as 64MiB or 1GiB, or off (GOMEMLIMIT, when set, wins)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := applyMemoryLimit(*memoryLimit, log); err != nil {
		return err
	}
	logEvery, err := impl.ParseAccessLog(*accessLog)
	if err != nil {
		return err
	}
	if err := logLevel.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *level)
	}
	cronSettings, err := cron.ParseSettings(*cronSpec)
	if err != nil {
		return err
	}
	if *cronLease < time.Second {
		return fmt.Errorf("--cron-lease %s: at least 1s", *cronLease)
	}
	// Merges, rebases, forks and pull request diffs run the git binary.
	if err := gitstore.CheckGit(); err != nil {
		return err
	}
	switch *clusterMode {
	case "auto":
		st.cluster = sqlstore.IsPostgres(st.db)
	case "on", "true":
		st.cluster = true
	case "off", "false":
	default:
		return fmt.Errorf("--cluster %q: want on, off or auto", *clusterMode)
	}
	if !sqlstore.IsPostgres(st.db) {
		// The embedded database serves one process: a second one would
		// keep caches and locks the first never hears of.
		release, err := soleProcess(st.data, st.db)
		if err != nil {
			return err
		}
		defer release()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	db, err := st.open(ctx, log)
	if err != nil {
		return err
	}
	defer db.Close()
	d, background, err := st.deps(db, log)
	if err != nil {
		return err
	}
	if *eventLease < time.Second {
		return fmt.Errorf("--event-lease %s: at least 1s", *eventLease)
	}
	opts := events.DefaultOptions()
	opts.SoleProcess, opts.Lease = !sqlstore.IsPostgres(st.db), *eventLease
	d.Events.SetOptions(opts)
	if *signingKey != "" {
		if d.Signer, err = signing.LoadSigner(*signingKey, d.Clock); err != nil {
			return err
		}
		log.Info("signing the server's commits", "key_id", d.Signer.KeyID, "name", d.Signer.Name, "email", d.Signer.Email)
	}
	if err := ensureFirstAdmin(ctx, d); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	d.Config.RootURL = *rootURL
	d.Config.AccessLogEvery = logEvery
	d.Config.Cron, d.Config.CronLease = cronSettings, *cronLease
	if *metricsOn {
		d.Metrics = metrics.New()
		d.Config.MetricsToken = *metricsToken
		if pool, err := db.SQL(); err == nil {
			d.Metrics.WatchDB(pool)
		}
	}
	cronCtx, stopCron := context.WithCancel(context.Background())
	defer func() {
		// Runs under way finish (their context is cancelled) and are
		// recorded before the database closes.
		stopCron()
		d.Cron.Wait()
	}()
	if err := impl.StartCron(cronCtx, d, testCronTasks...); err != nil {
		ln.Close()
		return err
	}
	d.Config.Webhooks.AllowedHosts = *allowedHosts
	d.Config.Migrations = app.MigrationConfig{Disabled: *noMigrations, AllowedDomains: *migAllowed, BlockedDomains: *migBlocked, AllowLocalNetworks: *migLocal,
		Wait: *migWait}
	d.Config.Mirrors = app.MirrorConfig{Disabled: *noMirrors, DisableNewPull: *noNewPull, DisableNewPush: *noNewPush,
		MinInterval: *mirrorMin, DefaultInterval: *mirrorDefault}
	if _, err := webhook.ParseMigrationGuard(*migAllowed, *migBlocked, *migLocal); err != nil {
		ln.Close()
		return err
	}
	if err := applySizeLimits("lfs="+*lfsMaxFile+","+*sizeLimits, &d.Config); err != nil {
		return err
	}
	if d.Config.RootURL == "" {
		d.Config.RootURL = "http://" + ln.Addr().String() + "/"
	}
	// The SSH listener comes first: its port is in every ssh_url.
	var sshLn net.Listener
	if *sshListen != "" {
		if sshLn, err = net.Listen("tcp", *sshListen); err != nil {
			ln.Close()
			return err
		}
		d.Config.SSHPort = sshLn.Addr().(*net.TCPAddr).Port
	}
	handler, err := impl.NewHandler(d)
	if err != nil {
		ln.Close()
		return err
	}
	if err := background.Start(); err != nil {
		ln.Close()
		return err
	}
	// Stopped after the server: jobs of requests finishing during
	// shutdown are taken by the next start (or another process).
	defer background.Stop()
	if *pprofListen != "" {
		_, stopProfiles, err := serveProfiles(*pprofListen, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopProfiles()
	}
	srv := impl.HTTPServer(handler, d.Config)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if sshLn != nil {
		hostKey, err := gitssh.LoadHostKey(st.data)
		if err != nil {
			return fmt.Errorf("ssh host key: %w", err)
		}
		sshSrv := gitssh.New(d, hostKey)
		defer sshSrv.Close()
		go func() { errc <- sshSrv.Serve(sshLn) }()
		log.Info("serving git over ssh", "address", sshLn.Addr().String())
	}
	log.Info("serving", "address", "http://"+ln.Addr().String()+"/", "root_url", d.Config.RootURL, "data", st.data)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// soleProcess makes sure no other server process serves the embedded
// database at dsn (default: in data): it holds an flock on a file beside
// it until release, and refuses when another process holds it.
func soleProcess(data, dsn string) (release func(), err error) {
	if dsn == "" {
		dsn = sqlstore.DefaultSQLitePath(data)
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dsn+".serve-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another server process serves %s: the embedded database serves one process (use PostgreSQL for several, see docs/deployment.md)", dsn)
		}
		return nil, fmt.Errorf("lock %s: %w", dsn, err)
	}
	return func() { f.Close() }, nil
}
