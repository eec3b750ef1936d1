package repo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/refs"
	"repohost/impl/webhook"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// MigrateInput is a migration as its caller asked for it.
type MigrateInput struct {
	CloneAddr    string
	AuthUsername string
	AuthPassword string
	AuthToken    string
	Service      string
	Name         string
	Description  string
	Private      bool
	Mirror       bool
	// MirrorInterval is a mirror's interval ("": the default).
	MirrorInterval string
	// Items are the parts beyond git data the caller asked for.
	Wiki, Issues, Labels, Milestones, Releases, PullRequests bool
}

// MigrationGuard is the connect guard of migrations and mirrors, from the
// [migrations] settings.
func (s Service) MigrationGuard() (*webhook.AllowList, error) {
	c := s.Config.Migrations
	return webhook.ParseMigrationGuard(c.AllowedDomains, c.BlockedDomains, c.AllowLocalNetworks)
}

// cloneAddr splits the clone address into the address without
// credentials and the credentials (the fields win over the address's).
func cloneAddr(in MigrateInput) (addr, user, secret string, err error) {
	u, err := url.Parse(strings.TrimSpace(in.CloneAddr))
	if err == nil && strings.EqualFold(u.Scheme, "file") {
		return "", "", "", apierr.Validation("You are not allowed to import local repositories.")
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		if err == nil && u.Scheme == "" || strings.HasPrefix(in.CloneAddr, "/") {
			return "", "", "", apierr.Validation("You are not allowed to import local repositories.")
		}
		return "", "", "", apierr.Validation("Invalid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", "", apierr.Validation("Invalid URL: only http and https addresses can be migrated")
	}
	if u.User != nil {
		user = u.User.Username()
		secret, _ = u.User.Password()
		u.User = nil
	}
	if in.AuthUsername != "" {
		user = in.AuthUsername
	}
	if in.AuthPassword != "" {
		secret = in.AuthPassword
	}
	if in.AuthToken != "" {
		// As the reference: a token is sent as the password of a
		// placeholder user when no user is named.
		secret = in.AuthToken
		if user == "" {
			user = "oauth2"
		}
	}
	return u.String(), user, secret, nil
}

// checkedCloneAddr is the address and credentials of in's source
// (cloneAddr), refused when the connect guard does not let it through.
func (s Service) checkedCloneAddr(ctx context.Context, in MigrateInput) (addr, user, secret string, err error) {
	if addr, user, secret, err = cloneAddr(in); err != nil {
		return "", "", "", err
	}
	guard, err := s.MigrationGuard()
	if err != nil {
		return "", "", "", err
	}
	if _, err := guard.GitConfig(ctx, addr); err != nil {
		if errors.Is(err, webhook.ErrForbiddenAddress) {
			return "", "", "", apierr.Validation("You can not import from disallowed hosts.")
		}
		return "", "", "", apierr.Validation("Invalid URL: %v", err)
	}
	return addr, user, secret, nil
}

// errMirrorsDisabled is the reference's answer to a mirror where new pull
// mirrors are off.
var errMirrorsDisabled = apierr.Forbidden("MirrorsGlobalDisabled")

// errMigrationsDisabled is the reference's answer where migrations are
// turned off.
var errMigrationsDisabled = apierr.Forbidden("MigrationsGlobalDisabled")

// Migrate creates owner's repository named in.Name empty and marked as
// being migrated, with its migration's row and RepoMigrateRequested in
// the same transaction; the repo_migrate consumer fills it. Callers check
// that doer may create repositories for owner.
func (s Service) Migrate(ctx context.Context, doer, owner *store.User, in MigrateInput) (*store.Repository, error) {
	if s.Config.Migrations.Disabled {
		return nil, errMigrationsDisabled
	}
	if in.Mirror {
		return s.migrateMirror(ctx, doer, owner, in)
	}
	items, err := itemsOf(in)
	if err != nil {
		return nil, err
	}
	addr, user, secret, err := s.checkedCloneAddr(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, doer, owner, CreateInput{Name: in.Name, Description: in.Description, Private: in.Private, Migrating: true,
		OriginalURL: addr, Also: func(ctx context.Context, r *store.Repository) error {
			m := &store.RepoMigration{RepoID: r.ID, DoerID: doer.ID, CloneAddr: addr, AuthUsername: user, AuthSecret: secret, Service: in.Service,
				Items: items.String()}
			if err := s.Store.Migrations().Create(ctx, m); err != nil {
				return err
			}
			return s.Events.Emit(ctx, events.RepoMigrateRequested, r.ID, doer.ID, EventOf(r))
		}})
}

// MigrateConsumer is the outbox consumer that runs migrations: the source
// is cloned through the connect guard into a quarantine, its objects are
// copied in and its branches and tags created through impl/refs (one
// RefsChanged, webhooks and all), and the migration's row goes in the
// transaction that records them. A migration that fails removes its
// repository, as the reference's does, so nothing half-made stays and it
// can be asked for again. A repository with no migration row (done, or
// removed) is nothing to do, so a repeated job is harmless.
func (s Service) MigrateConsumer() events.Consumer {
	return events.Consumer{Name: "repo_migrate", Kinds: []events.Kind{events.RepoMigrateRequested}, Workers: 2,
		Handle: func(ctx context.Context, e events.Event) error {
			// One run of a migration at a time, across processes: a run
			// that took over a lost lease while the first still works
			// waits for it, then finds the migration done (or its
			// repository removed) and has nothing left to do. Two runs at
			// once raced: one failing early removed the repository the
			// other then recorded.
			unlock, err := s.Store.Locks().Lock(ctx, "migration:"+strconv.FormatInt(e.RepoID, 10), false)
			if err != nil {
				return err
			}
			defer unlock()
			m, err := s.Store.Migrations().Find(ctx, e.RepoID)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			r, err := s.Store.Repos().FindByID(ctx, e.RepoID)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := s.runMigration(ctx, r, m); err != nil {
				if errors.Is(err, errMigrationDone) {
					return nil
				}
				if ctx.Err() != nil {
					// Stopping: the job goes back for another try.
					return ctx.Err()
				}
				// A run that lost a race with another run of the same
				// job (its refs moved under it) fails while or after the
				// other finishes: the repository is then complete and
				// stays. Abandon waits for that run's transaction.
				if mine, aerr := s.Store.Migrations().Abandon(ctx, r.ID); aerr != nil || !mine {
					return aerr
				}
				s.Log.WarnContext(ctx, "migration failed; its repository is removed", "repo", r.FullName(), "from", m.CloneAddr, "err", err)
				return s.Delete(ctx, nil, r)
			}
			return nil
		}}
}

// awaitMigration waits, up to the configured time, for the job filling r
// (a migration, or a mirror's first sync) to end, and returns r as it
// then is: ready, or still being migrated when the time ran out or the
// request ended. A job that failed took its repository with it: that is
// answered as the reference answers a failed migration.
func (s Service) awaitMigration(ctx context.Context, r *store.Repository) (*store.Repository, error) {
	if s.Config.Migrations.Wait <= 0 {
		return r, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.Config.Migrations.Wait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		fresh, err := s.Store.Repos().FindByID(ctx, r.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, apierr.Validation("Migration failed: %s could not be brought over (the server's log tells why); it can be asked for again.", r.FullName())
		case ctx.Err() != nil:
			return r, nil
		case err != nil:
			return nil, err
		case fresh.Status == store.RepoStatusReady:
			return fresh, nil
		}
		r = fresh
		select {
		case <-ctx.Done():
			return r, nil
		case <-tick.C:
		}
	}
}

// errMigrationDone stops a run of a migration that another run finished
// while it worked.
var errMigrationDone = errors.New("the migration was finished by another run")

// Remote is how git reaches addr through the connect guard, with the
// credentials in git's environment (an extra header), never on its
// command line.
func (s Service) Remote(ctx context.Context, addr, user, secret string) (gitstore.Remote, error) {
	guard, err := s.MigrationGuard()
	if err != nil {
		return gitstore.Remote{}, err
	}
	cfg, err := guard.GitConfig(ctx, addr)
	if err != nil {
		return gitstore.Remote{}, err
	}
	// Migrations name themselves to the source, git and API calls alike.
	cfg = append(cfg, "-c", "http.userAgent="+migrationUserAgent)
	rem := gitstore.Remote{URL: addr, Config: cfg}
	if user != "" || secret != "" {
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + secret))
		rem.Env = []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}
	}
	return rem, nil
}

func (s Service) runMigration(ctx context.Context, r *store.Repository, m *store.RepoMigration) error {
	doer, err := s.Store.Users().FindByID(ctx, m.DoerID)
	if err != nil {
		return err
	}
	rem, err := s.Remote(ctx, m.CloneAddr, m.AuthUsername, m.AuthSecret)
	if err != nil {
		return err
	}
	src, done, err := gitstore.CloneRemote(ctx, rem)
	if err != nil {
		return err
	}
	defer done()
	recordFormat, err := s.takeSourceFormat(ctx, r, src)
	if err != nil {
		return err
	}
	list, err := src.BranchAndTagRefs()
	if err != nil {
		return err
	}
	// The items beyond the git data (migrate_gitea.go) are read before
	// anything is written, and written with the refs' record.
	pullRefs, pullTips, write, cleanup, err := s.importGitea(ctx, r, doer, m, src)
	if err != nil {
		cleanup()
		return err
	}
	committed := false
	defer func() {
		if !committed {
			cleanup()
		}
	}()
	// The migration's row goes first: a second run of the same job
	// (its lease lost to another worker) waits for this transaction, then
	// finds the migration finished and writes nothing.
	finish := func(ctx context.Context) error {
		if err := s.Store.Migrations().Finish(ctx, r.ID); errors.Is(err, store.ErrNotFound) {
			return errMigrationDone
		} else if err != nil {
			return err
		}
		if err := recordFormat(ctx); err != nil {
			return err
		}
		return write(ctx)
	}
	if len(list) == 0 && len(pullRefs) == 0 {
		err := s.Store.WithTx(ctx, finish)
		committed = err == nil
		return err
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return err
	}
	updates := make([]*gitstore.RefUpdate, 0, len(list)+len(pullRefs))
	tips := make([]plumbing.Hash, 0, len(list)+len(pullTips))
	for _, ref := range list {
		updates = append(updates, &gitstore.RefUpdate{Name: ref.Name(), New: ref.Hash()})
		tips = append(tips, ref.Hash())
	}
	updates = append(updates, pullRefs...)
	tips = append(tips, pullTips...)
	if err := g.FetchObjects(ctx, src, tips); err != nil {
		return err
	}
	// A second run of the job (after a crash between the refs and their
	// record) finds refs already made: each update starts from what is
	// there (one already made is written again, unchanged), so the refs
	// are recorded, with the rows, once.
	for _, u := range updates {
		if u.Old, err = g.RefHash(u.Name); err != nil {
			return err
		}
	}
	// The source's default branch stays the default: it is written
	// first, so an empty repository takes it.
	if head := src.DefaultBranch(); head != "" {
		for i, u := range updates {
			if u.Branch() == head {
				updates[0], updates[i] = updates[i], updates[0]
				break
			}
		}
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Git: g, Doer: &auth.Principal{User: doer, Signer: doer},
		Updates: updates, Atomic: true, Also: finish})
	committed = err == nil
	return err
}

func (h Handlers) RepoMigrate(ctx context.Context, params repository.RepoMigrateParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var o models.MigrateRepoOptions
	if params.Body != nil {
		o = *params.Body
	}
	owner := p.User
	switch {
	case o.RepoOwner != "":
		owner, err = h.VisibleUser(ctx, p, o.RepoOwner)
	case o.UID != 0 && o.UID != p.User.ID:
		owner, err = h.Store.Users().FindByID(ctx, o.UID)
	}
	if app.IsNotFound(err) {
		return h.Fail(apierr.NotFound("the owner does not exist"))
	}
	if err != nil {
		return h.Fail(err)
	}
	ok, err := h.Access.CanCreateIn(ctx, p, owner)
	if err != nil {
		return h.Fail(err)
	}
	if !ok {
		return h.Fail(apierr.Forbidden("Given user is not allowed to create repository in this organization."))
	}
	in := MigrateInput{CloneAddr: conv.Value(o.CloneAddr), AuthUsername: o.AuthUsername, AuthPassword: o.AuthPassword,
		AuthToken: o.AuthToken, Service: o.Service, Name: conv.Value(o.RepoName), Description: o.Description,
		Private: o.Private, Mirror: o.Mirror, MirrorInterval: o.MirrorInterval, Wiki: o.Wiki, Issues: o.Issues, Labels: o.Labels,
		Milestones: o.Milestones, Releases: o.Releases, PullRequests: o.PullRequests}
	r, err := h.svc().Migrate(ctx, p.User, owner, in)
	if err != nil {
		return h.Fail(err)
	}
	if r, err = h.svc().awaitMigration(ctx, r); err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoMigrateCreated().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), r, perm, app.Viewer(p)))
}

// takeSourceFormat gives r, a migration or mirror still without refs, the
// object format of its source's clone src when the two differ: r's
// directory is made anew in src's format, and the returned record writes
// that format to r's row, in the transaction that records the first refs
// (a run that stops before it finds the directory in the new format and
// the row in the old one, and makes the directory again, empty).
func (s Service) takeSourceFormat(ctx context.Context, r *store.Repository, src *gitstore.GitRepo) (record func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	cur := r.ObjectFormat
	if cur == "" {
		cur = gitstore.FormatSHA1
	}
	want := src.ObjectFormat()
	if want == cur {
		return none, nil
	}
	if !r.IsEmpty {
		return nil, fmt.Errorf("the source of %s is now a %s repository, this one %s", r.FullName(), want, cur)
	}
	if err := s.Git.Reinit(r.Owner.Name, r.Name, gitstore.InitOptions{DefaultBranch: r.DefaultBranch, ObjectFormat: want}); err != nil {
		return nil, err
	}
	r.ObjectFormat = want
	return func(ctx context.Context) error {
		row, err := s.Store.Repos().FindByIDForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		row.ObjectFormat = want
		return s.Store.Repos().Update(ctx, row)
	}, nil
}
