package repo

// Pull mirrors and push mirrors.
//
// A pull mirror is a repository made by POST /repos/migrate with mirror
// set: its branches and tags are the remote's, brought over by the
// mirror_sync consumer (first to fill it, then at its interval when the
// update_mirrors cron task queues it, or when asked by POST
// .../mirror-sync) through the connect guard and impl/refs, so events,
// push webhooks and pull request refreshes follow as for any push.
// Nothing else moves its refs (refs.ErrMirror).
//
// A push mirror is a remote a repository is pushed to: the push_mirror
// consumer pushes every branch and tag (and deletes those gone) on each
// ref change when sync_on_commit, when update_mirrors finds it due and
// when asked by POST .../push_mirrors-sync, and records how it went.
//
// The credentials of both are kept sealed with the instance secret key
// (store/sqlstore sealedColumns) and reach git in its environment only.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/refs"
	"repohost/impl/webhook"
	"repohost/store"
	"repohost/store/gitstore"
)

// mirrorTimeout bounds one sync or push, as the reference's [git.timeout]
// MIRROR does: a remote that stops answering fails it instead of holding
// its repository's queue.
const mirrorTimeout = 6 * time.Minute

// errMirrorFeatureOff is the reference's answer to mirror operations
// where mirrors are turned off.
var errMirrorFeatureOff = apierr.BadRequest("Mirror feature is disabled")

// mirrorInterval reads a mirror's interval as the reference does: a Go
// duration, 0 for never, otherwise at least the configured minimum; ""
// is def.
func (s Service) mirrorInterval(raw string, def time.Duration) (time.Duration, error) {
	if strings.TrimSpace(raw) == "" {
		return def, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(raw))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid mirror interval %q: a duration such as 8h0m0s is expected", raw)
	}
	if d != 0 && d < s.Config.Mirrors.MinInterval {
		return 0, fmt.Errorf("invalid mirror interval %q: at least %s (or 0 for never)", raw, s.Config.Mirrors.MinInterval)
	}
	return d, nil
}

// nextUpdate is when a mirror synced at now with interval is next due
// (nil: never).
func nextUpdate(now time.Time, interval time.Duration) *time.Time {
	if interval <= 0 {
		return nil
	}
	t := now.Add(interval)
	return &t
}

// checkRemoteHost refuses an address whose host the connect guard does
// not allow: a literal address, or a name that resolves to one. A name
// that does not resolve now is let through; every connection is checked
// again when it is dialled.
func (s Service) checkRemoteHost(ctx context.Context, addr string) error {
	guard, err := s.MigrationGuard()
	if err != nil {
		return err
	}
	u, err := url.Parse(addr)
	if err != nil {
		return err
	}
	_, err = guard.CheckHost(ctx, u.Hostname())
	if errors.Is(err, webhook.ErrForbiddenAddress) {
		return err
	}
	return nil
}

// migrateMirror is Migrate with mirror set: the repository is created
// empty, marked as being migrated and as a mirror of addr, and the
// mirror_sync consumer fills it. As the reference, a mirror brings the
// git data only.
func (s Service) migrateMirror(ctx context.Context, doer, owner *store.User, in MigrateInput) (*store.Repository, error) {
	if !s.Config.Mirrors.NewPullAllowed() {
		return nil, errMirrorsDisabled
	}
	interval, err := s.mirrorInterval(in.MirrorInterval, s.Config.Mirrors.DefaultInterval)
	if err != nil {
		return nil, apierr.Validation("%v", err)
	}
	addr, user, secret, err := s.checkedCloneAddr(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, doer, owner, CreateInput{Name: in.Name, Description: in.Description, Private: in.Private, Migrating: true,
		OriginalURL: addr, Also: func(ctx context.Context, r *store.Repository) error {
			r.IsMirror, r.MirrorInterval = true, interval
			if err := s.Store.Repos().Update(ctx, r); err != nil {
				return err
			}
			m := &store.Mirror{RepoID: r.ID, RemoteAddress: addr, AuthUsername: user, AuthSecret: secret, EnablePrune: true}
			if err := s.Store.Mirrors().Create(ctx, m); err != nil {
				return err
			}
			return s.Events.Emit(ctx, events.RepoMirrorSyncRequested, r.ID, doer.ID, EventOf(r))
		}})
}

// RequestMirrorSync queues a sync of pull mirror r.
func (s Service) RequestMirrorSync(ctx context.Context, doer *store.User, r *store.Repository) error {
	if s.Config.Mirrors.Disabled {
		return errMirrorFeatureOff
	}
	if !r.IsMirror {
		return apierr.BadRequest("Repository is not a mirror")
	}
	return s.Events.Emit(ctx, events.RepoMirrorSyncRequested, r.ID, events.ActorID(doer), EventOf(r))
}

// setMirrorInterval is the PATCH of a mirror's interval, inside the
// edit's transaction: the next sync is due an interval from now.
func (s Service) setMirrorInterval(ctx context.Context, r *store.Repository) error {
	return s.Store.Mirrors().Schedule(ctx, r.ID, nextUpdate(s.Clock.Now(), r.MirrorInterval))
}

// MirrorSyncConsumer is the outbox consumer that syncs pull mirrors: the
// remote is cloned through the connect guard into a quarantine, its
// objects copied in, and every branch and tag that differs moved (and
// those the remote no longer has deleted) through impl/refs as one
// change, with the mirror's update time in its transaction. The first
// sync fills a mirror being created: when it fails the repository goes,
// as a failed migration's does. A later failure is logged and waits for
// the next interval. Repeating a sync changes nothing, so a repeated job
// is harmless; jobs of one repository run one at a time.
func (s Service) MirrorSyncConsumer() events.Consumer {
	return events.Consumer{Name: "mirror_sync", Kinds: []events.Kind{events.RepoMirrorSyncRequested}, Ordered: true, Workers: 2,
		Handle: func(ctx context.Context, e events.Event) error {
			r, err := s.Store.Repos().FindByID(ctx, e.RepoID)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			m, err := s.Store.Mirrors().Find(ctx, r.ID)
			if errors.Is(err, store.ErrNotFound) || !r.IsMirror {
				return nil
			}
			if err != nil {
				return err
			}
			creating := r.Status == store.RepoStatusBeingMigrated
			if s.Config.Mirrors.Disabled && !creating {
				return nil
			}
			if err := s.syncMirror(ctx, r, m); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if creating {
					s.Log.WarnContext(ctx, "mirror creation failed; its repository is removed", "repo", r.FullName(), "from", m.RemoteAddress, "err", err)
					return s.Delete(ctx, nil, r)
				}
				s.Log.WarnContext(ctx, "mirror sync failed", "repo", r.FullName(), "from", m.RemoteAddress, "err", err)
			}
			return nil
		}}
}

func (s Service) syncMirror(ctx context.Context, r *store.Repository, m *store.Mirror) error {
	fetchCtx, cancel := context.WithTimeout(ctx, mirrorTimeout)
	defer cancel()
	rem, err := s.Remote(ctx, m.RemoteAddress, m.AuthUsername, m.AuthSecret)
	if err != nil {
		return err
	}
	src, done, err := gitstore.CloneRemote(fetchCtx, rem)
	if err != nil {
		return err
	}
	defer done()
	recordFormat, err := s.takeSourceFormat(ctx, r, src)
	if err != nil {
		return err
	}
	theirs, err := src.BranchAndTagRefs()
	if err != nil {
		return err
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return err
	}
	ours, err := g.BranchAndTagRefs()
	if err != nil {
		return err
	}
	have := make(map[plumbing.ReferenceName]plumbing.Hash, len(ours))
	for _, ref := range ours {
		have[ref.Name()] = ref.Hash()
	}
	var updates []*gitstore.RefUpdate
	var tips []plumbing.Hash
	for _, ref := range theirs {
		old, ok := have[ref.Name()]
		delete(have, ref.Name())
		if ok && old == ref.Hash() {
			continue
		}
		updates = append(updates, &gitstore.RefUpdate{Name: ref.Name(), Old: old, New: ref.Hash()})
		tips = append(tips, ref.Hash())
	}
	if m.EnablePrune {
		for _, ref := range ours {
			if old, gone := have[ref.Name()]; gone {
				updates = append(updates, &gitstore.RefUpdate{Name: ref.Name(), Old: old})
			}
		}
	}
	if err := g.FetchObjects(ctx, src, tips); err != nil {
		return err
	}
	// The remote's default branch comes first, so an empty mirror takes
	// it as its default.
	if head := src.DefaultBranch(); head != "" && r.IsEmpty {
		for i, u := range updates {
			if u.Branch() == head {
				updates[0], updates[i] = updates[i], updates[0]
				break
			}
		}
	}
	now := s.Clock.Now()
	finish := func(ctx context.Context) error {
		if err := recordFormat(ctx); err != nil {
			return err
		}
		return s.Store.Mirrors().Synced(ctx, r.ID, now, nextUpdate(now, r.MirrorInterval))
	}
	if len(updates) == 0 {
		return s.Store.WithTx(ctx, finish)
	}
	// As the reference, a mirror's changes are pushed by its owner.
	doer := &auth.Principal{User: r.Owner, Signer: r.Owner}
	applied, err := refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Git: g, Doer: doer, Updates: updates, Mirror: true, Also: finish})
	if err != nil {
		return err
	}
	if len(applied) < len(updates) {
		for _, u := range updates {
			if u.Err != nil {
				s.Log.WarnContext(ctx, "mirror sync: a ref was not moved", "repo", r.FullName(), "ref", u.Name, "err", u.Err)
			}
		}
		if len(applied) == 0 {
			return s.Store.WithTx(ctx, finish)
		}
	}
	return nil
}

// UpdateMirrors is the update_mirrors cron task: every pull and push
// mirror whose time has come is queued (its next time moved on in the
// same transaction, so a mirror is queued once per interval).
func (s Service) UpdateMirrors(ctx context.Context) error {
	if s.Config.Mirrors.Disabled {
		return nil
	}
	const batch = 100
	now := s.Clock.Now()
	for {
		ids, err := s.Store.Mirrors().Due(ctx, now, batch)
		if err != nil {
			return err
		}
		for _, id := range ids {
			r, err := s.Store.Repos().FindByID(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				// Going with its repository: never due again.
				if err := s.Store.Mirrors().Schedule(ctx, id, nil); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			err = s.Store.WithTx(ctx, func(ctx context.Context) error {
				// The sync moves it on again from when it ends; until
				// then it is not due (nil, for an interval of 0, is not
				// due either).
				if err := s.Store.Mirrors().Schedule(ctx, id, nextUpdate(now, r.MirrorInterval)); err != nil {
					return err
				}
				return s.Events.Emit(ctx, events.RepoMirrorSyncRequested, id, 0, EventOf(r))
			})
			if err != nil {
				return err
			}
		}
		if len(ids) < batch {
			break
		}
	}
	for {
		due, err := s.Store.Mirrors().DuePush(ctx, now, batch)
		if err != nil {
			return err
		}
		for _, pm := range due {
			r, err := s.Store.Repos().FindByID(ctx, pm.RepoID)
			if errors.Is(err, store.ErrNotFound) {
				if err := s.Store.Mirrors().SchedulePush(ctx, pm.ID, nil); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			err = s.Store.WithTx(ctx, func(ctx context.Context) error {
				if err := s.Store.Mirrors().SchedulePush(ctx, pm.ID, nextUpdate(now, pm.Interval)); err != nil {
					return err
				}
				return s.Events.Emit(ctx, events.PushMirrorSyncRequested, r.ID, 0,
					events.PushMirrorSync{Repo: EventOf(r), RemoteName: pm.RemoteName})
			})
			if err != nil {
				return err
			}
		}
		if len(due) < batch {
			break
		}
	}
	return nil
}

// PushMirrorInput is a push mirror as its caller asked for it.
type PushMirrorInput struct {
	Address, Username, Password, Interval string
	SyncOnCommit                          bool
}

// remoteNameSuffix is the random part of a push mirror's remote name, as
// the reference's ("remote_mirror_" and ten letters or digits).
func remoteNameSuffix() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// pushAddr splits a push mirror's address into the address without
// credentials and the credentials (the fields win over the address's).
func pushAddr(in PushMirrorInput) (addr, user, secret string, err error) {
	u, err := url.Parse(strings.TrimSpace(in.Address))
	if err != nil {
		return "", "", "", apierr.BadRequest("Invalid Url ")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", "", apierr.BadRequest("Invalid mirror protocol")
	}
	if u.Host == "" {
		return "", "", "", apierr.BadRequest("Invalid Url ")
	}
	if u.User != nil {
		user = u.User.Username()
		secret, _ = u.User.Password()
		u.User = nil
	}
	if in.Username != "" {
		user = in.Username
	}
	if in.Password != "" {
		secret = in.Password
	}
	return u.String(), user, secret, nil
}

// AddPushMirror adds a push mirror to r and queues its first push.
func (s Service) AddPushMirror(ctx context.Context, doer *store.User, r *store.Repository, in PushMirrorInput) (*store.PushMirror, error) {
	if s.Config.Mirrors.Disabled {
		return nil, errMirrorFeatureOff
	}
	if !s.Config.Mirrors.NewPushAllowed() {
		return nil, apierr.BadRequest("New push mirrors are disabled on this server")
	}
	interval, err := time.ParseDuration(strings.TrimSpace(in.Interval))
	if err != nil || interval < 0 || interval != 0 && interval < s.Config.Mirrors.MinInterval {
		return nil, apierr.BadRequest("invalid push mirror interval %q: a duration of at least %s, or 0 for never", in.Interval, s.Config.Mirrors.MinInterval)
	}
	addr, user, secret, err := pushAddr(in)
	if err != nil {
		return nil, err
	}
	if err := s.checkRemoteHost(ctx, addr); err != nil {
		if errors.Is(err, webhook.ErrForbiddenAddress) {
			return nil, apierr.BadRequest("You can not push to disallowed hosts.")
		}
		return nil, err
	}
	suffix, err := remoteNameSuffix()
	if err != nil {
		return nil, err
	}
	pm := &store.PushMirror{RepoID: r.ID, RemoteName: "remote_mirror_" + suffix, RemoteAddress: addr,
		AuthUsername: user, AuthSecret: secret, Interval: interval, SyncOnCommit: in.SyncOnCommit,
		NextUpdate: nextUpdate(s.Clock.Now(), interval)}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Mirrors().CreatePush(ctx, pm); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PushMirrorSyncRequested, r.ID, events.ActorID(doer),
			events.PushMirrorSync{Repo: EventOf(r), RemoteName: pm.RemoteName})
	})
	if err != nil {
		return nil, err
	}
	return pm, nil
}

// DeletePushMirror removes r's push mirror remoteName, with
// PushMirrorDeleted in the same transaction; a push under way ends as it
// would have, and its outcome is recorded nowhere. As the reference's,
// removing it is all: no git remote is kept for it (each push names its
// address).
func (s Service) DeletePushMirror(ctx context.Context, doer *store.User, r *store.Repository, remoteName string) error {
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Mirrors().DeletePush(ctx, r.ID, remoteName); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PushMirrorDeleted, r.ID, events.ActorID(doer),
			events.PushMirrorSync{Repo: EventOf(r), RemoteName: remoteName})
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("push mirror not found")
	}
	return err
}

// RequestPushMirrorSync queues a push of r to every push mirror it has.
func (s Service) RequestPushMirrorSync(ctx context.Context, doer *store.User, r *store.Repository) error {
	if s.Config.Mirrors.Disabled {
		return errMirrorFeatureOff
	}
	return s.Events.Emit(ctx, events.PushMirrorSyncRequested, r.ID, events.ActorID(doer), events.PushMirrorSync{Repo: EventOf(r)})
}

// PushMirrorConsumer is the outbox consumer that pushes repositories to
// their push mirrors: after every ref change to the mirrors that sync on
// commit, and when a push is asked for (added, due, or requested). Each
// push makes the remote's branches and tags the repository's as they are
// now, so repeating one is harmless; its outcome (time, error) is
// recorded on the mirror and a failure waits for the next change or
// interval rather than being retried.
func (s Service) PushMirrorConsumer() events.Consumer {
	return events.Consumer{Name: "push_mirror", Kinds: []events.Kind{events.RefsChanged, events.PushMirrorSyncRequested},
		Ordered: true, Workers: 2,
		Handle: func(ctx context.Context, e events.Event) error {
			if s.Config.Mirrors.Disabled || e.RepoID == 0 {
				return nil
			}
			all, err := s.Store.Mirrors().AllPush(ctx, e.RepoID)
			if err != nil || len(all) == 0 {
				return err
			}
			var todo []*store.PushMirror
			for _, pm := range all {
				switch p := e.Payload.(type) {
				case events.PushMirrorSync:
					if p.RemoteName == "" || p.RemoteName == pm.RemoteName {
						todo = append(todo, pm)
					}
				default:
					if pm.SyncOnCommit {
						todo = append(todo, pm)
					}
				}
			}
			if len(todo) == 0 {
				return nil
			}
			r, err := s.Store.Repos().FindByID(ctx, e.RepoID)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			g, err := s.OpenGit(r)
			if err != nil {
				return err
			}
			for _, pm := range todo {
				perr := s.pushMirror(ctx, g, pm)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				msg := ""
				if perr != nil {
					msg = perr.Error()
					s.Log.WarnContext(ctx, "push mirror failed", "repo", r.FullName(), "remote", pm.RemoteName, "err", perr)
				}
				now := s.Clock.Now()
				if err := s.Store.Mirrors().Pushed(ctx, pm.ID, now, msg, nextUpdate(now, pm.Interval)); err != nil {
					return err
				}
			}
			return nil
		}}
}

func (s Service) pushMirror(ctx context.Context, g *gitstore.GitRepo, pm *store.PushMirror) error {
	ctx, cancel := context.WithTimeout(ctx, mirrorTimeout)
	defer cancel()
	rem, err := s.Remote(ctx, pm.RemoteAddress, pm.AuthUsername, pm.AuthSecret)
	if err != nil {
		return err
	}
	return g.PushMirror(ctx, rem)
}
