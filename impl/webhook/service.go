// Package webhook is the webhook area: the hooks of repositories, owners
// (users and organizations) and the site, the consumer that turns
// committed domain events into deliveries, and the persistent queue that
// sends them, signed, retried and guarded against requests to internal
// addresses.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/rooturl"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// Service is the one place hooks are written. It holds no state of its
// own: handlers build it over the shared dependencies.
type Service struct{ *app.Deps }

// Scope names whose hooks an operation works on: a repository's, an
// owner's (a user or an organization) or, with neither, the site's.
type Scope struct {
	RepoID  int64
	OwnerID int64
}

// contains tells whether h belongs to the scope; a hook of another scope
// is as missing as one that does not exist.
func (sc Scope) contains(h *store.Hook) bool {
	return h.RepoID == sc.RepoID && (sc.RepoID != 0 || h.OwnerID == sc.OwnerID)
}

func (sc Scope) siteWide() bool { return sc.RepoID == 0 && sc.OwnerID == 0 }

// hookTypes are the receivers a hook may name.
var hookTypes = []string{"gitea", "gogs", "slack", "discord", "msteams", "matrix", "telegram", "dingtalk", "feishu", "wechatwork", "packagist"}

// Config keys stored in their own columns; the rest of config is the
// receiver type's own (Meta).
var ownKeys = []string{"url", "content_type", "http_method", "secret", "is_system_webhook"}

var httpMethods = []string{http.MethodPost, http.MethodGet, http.MethodPut, http.MethodPatch}

// Input is a hook to create.
type Input struct {
	Type                string
	Config              map[string]string
	Events              []string
	BranchFilter        string
	AuthorizationHeader string
	Active              bool
	Name                string
	// IsSystem is the older top-level is_system_webhook (admin only).
	IsSystem *bool
}

// Edit is a change to a hook; see the reference's rules in EditHook.
type Edit struct {
	Config              map[string]string
	Events              []string
	BranchFilter        string
	AuthorizationHeader string
	Active              *bool
	Name                *string
}

func validURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apierr.Validation("Invalid url")
	}
	return nil
}

func validContentType(ct string) error {
	if ct != "json" && ct != "form" {
		return apierr.Validation("Invalid content type")
	}
	return nil
}

// validSlackChannel is the reference's rule: a name, or "#" and a name.
func validSlackChannel(name string) bool {
	switch len(strings.TrimSpace(name)) {
	case 0:
		return false
	case 1:
		return name[0] != '#'
	}
	return true
}

// applyConfig moves config's keys into h, checking what it touches.
func applyConfig(h *store.Hook, config map[string]string) error {
	if u, ok := config["url"]; ok {
		if err := validURL(u); err != nil {
			return err
		}
		h.URL = u
	}
	if ct, ok := config["content_type"]; ok {
		if err := validContentType(ct); err != nil {
			return err
		}
		h.ContentType = ct
	}
	if m, ok := config["http_method"]; ok && m != "" {
		m = strings.ToUpper(m)
		if !slices.Contains(httpMethods, m) {
			return apierr.Validation("Invalid http_method: %s", m)
		}
		h.HTTPMethod = m
	}
	if secret, ok := config["secret"]; ok {
		h.Secret = secret
	}
	meta := metaOf(h)
	for k, v := range config {
		if !slices.Contains(ownKeys, k) {
			meta[k] = v
		}
	}
	if h.Type == "slack" {
		if ch, ok := meta["channel"]; ok && !validSlackChannel(ch) {
			return apierr.BadRequest("Invalid slack channel name")
		}
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	h.Meta = string(raw)
	return nil
}

// metaOf decodes h's receiver-specific config.
func metaOf(h *store.Hook) map[string]string {
	meta := map[string]string{}
	if h.Meta != "" {
		_ = json.Unmarshal([]byte(h.Meta), &meta)
	}
	return meta
}

// eventsOf decodes h's event types.
func eventsOf(h *store.Hook) []string {
	var out []string
	_ = json.Unmarshal([]byte(h.Events), &out)
	return out
}

func setEvents(h *store.Hook, names []string) {
	raw, _ := json.Marshal(expandEvents(names))
	h.Events = string(raw)
}

// Create checks in and stores it as a hook of sc, with the reference's
// checks in the reference's order.
func (s Service) Create(ctx context.Context, sc Scope, in Input) (*store.Hook, error) {
	if !slices.Contains(hookTypes, in.Type) {
		return nil, apierr.Validation("Invalid hook type: %s", in.Type)
	}
	for _, k := range []string{"url", "content_type"} {
		if _, ok := in.Config[k]; !ok {
			return nil, apierr.Validation("Missing config option: %s", k)
		}
	}
	if err := validContentType(in.Config["content_type"]); err != nil {
		return nil, err
	}
	if err := validURL(in.Config["url"]); err != nil {
		return nil, err
	}
	h := &store.Hook{RepoID: sc.RepoID, OwnerID: sc.OwnerID, Type: in.Type, HTTPMethod: http.MethodPost,
		BranchFilter: in.BranchFilter, AuthorizationHeader: in.AuthorizationHeader, Active: in.Active, Name: in.Name}
	if sc.siteWide() {
		system := in.IsSystem != nil && *in.IsSystem
		if v, ok := in.Config["is_system_webhook"]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, apierr.Validation("Invalid is_system_webhook value")
			}
			system = b
		}
		h.IsSystem = system
	}
	if h.Type == "slack" {
		if _, ok := in.Config["channel"]; !ok {
			return nil, apierr.Validation("Missing config option: channel")
		}
	}
	if !validBranchFilter(in.BranchFilter) {
		return nil, apierr.Validation("Invalid branch_filter: %s", in.BranchFilter)
	}
	if err := applyConfig(h, in.Config); err != nil {
		return nil, err
	}
	setEvents(h, in.Events)
	if err := s.Store.Hooks().Create(ctx, h); err != nil {
		return nil, err
	}
	return h, nil
}

// Get loads hook id of sc; 404 when it belongs elsewhere.
func (s Service) Get(ctx context.Context, sc Scope, id int64) (*store.Hook, error) {
	h, err := s.Store.Hooks().Find(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sc.contains(h) {
		return nil, apierr.NotFound("hook %d not found", id)
	}
	return h, nil
}

// List pages the hooks of sc; for the site, system picks system (true) or
// default (false) hooks, nil both.
func (s Service) List(ctx context.Context, sc Scope, system *bool, p store.Page) ([]*store.Hook, int64, error) {
	return s.Store.Hooks().List(ctx, store.HookFilter{RepoID: sc.RepoID, OwnerID: sc.OwnerID, SiteWide: sc.siteWide(), System: system}, p)
}

// EditHook applies e with the reference's rules: the event set is
// replaced (none means push), config keys apply when present, active and
// name when given, branch_filter and authorization_header always.
func (s Service) EditHook(ctx context.Context, sc Scope, id int64, e Edit) (*store.Hook, error) {
	h, err := s.Get(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if !validBranchFilter(e.BranchFilter) {
		return nil, apierr.Validation("Invalid branch_filter: %s", e.BranchFilter)
	}
	if sc.siteWide() {
		if v, ok := e.Config["is_system_webhook"]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, apierr.Validation("Invalid is_system_webhook value")
			}
			h.IsSystem = b
		}
	}
	if err := applyConfig(h, e.Config); err != nil {
		return nil, err
	}
	setEvents(h, e.Events)
	h.BranchFilter = e.BranchFilter
	h.AuthorizationHeader = e.AuthorizationHeader
	if e.Active != nil {
		h.Active = *e.Active
	}
	if e.Name != nil {
		h.Name = *e.Name
	}
	h.UpdatedAt = s.Clock.Now()
	if err := s.Store.Hooks().Update(ctx, h); err != nil {
		return nil, err
	}
	return h, nil
}

// Delete removes hook id of sc with its deliveries.
func (s Service) Delete(ctx context.Context, sc Scope, id int64) error {
	if _, err := s.Get(ctx, sc, id); err != nil {
		return err
	}
	return s.Store.Hooks().Delete(ctx, id)
}

// Deliveries pages the deliveries of hook id of sc, newest first.
func (s Service) Deliveries(ctx context.Context, sc Scope, id int64, p store.Page) ([]*store.HookDelivery, int64, error) {
	if _, err := s.Get(ctx, sc, id); err != nil {
		return nil, 0, err
	}
	return s.Store.Hooks().ListDeliveries(ctx, id, p)
}

// Delivery loads one delivery of hook id of sc.
func (s Service) Delivery(ctx context.Context, sc Scope, id, deliveryID int64) (*store.HookDelivery, error) {
	if _, err := s.Get(ctx, sc, id); err != nil {
		return nil, err
	}
	return s.Store.Hooks().FindDelivery(ctx, id, deliveryID)
}

// Redeliver queues a delivery's payload again under the same
// X-Gitea-Delivery, due at once.
func (s Service) Redeliver(ctx context.Context, sc Scope, id, deliveryID int64) (*store.HookDelivery, error) {
	old, err := s.Delivery(ctx, sc, id, deliveryID)
	if err != nil {
		return nil, err
	}
	d := &store.HookDelivery{HookID: old.HookID, UUID: old.UUID, Event: old.Event, EventType: old.EventType,
		Action: old.Action, Payload: old.Payload, IsRedelivery: true, State: store.DeliveryPending,
		CreatedAt: s.Clock.Now()}
	d.NextAttemptAt = s.Clock.Precise().UnixMilli()
	d.QueuedAt = d.NextAttemptAt
	if err := s.Store.Hooks().Enqueue(ctx, []*store.HookDelivery{d}); err != nil {
		return nil, err
	}
	return d, nil
}

// PruneDeliveries deletes finished deliveries older than the configured
// retention; the scheduler runs it as cleanup_hook_task_table.
func (s Service) PruneDeliveries(ctx context.Context) error {
	n, err := s.Store.Hooks().PruneDeliveries(ctx, s.Clock.Now().Add(-s.Config.Webhooks.Retention))
	if err != nil {
		return fmt.Errorf("prune hook deliveries: %w", err)
	}
	s.Log.Info("pruned hook deliveries", "deleted", n)
	return nil
}

// isNotFound reports a missing row.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// TestHook queues a sample push of ref (the default branch when empty) to
// hook id of repository r, whatever the hook's events and state, due at
// once.
func (s Service) TestHook(ctx context.Context, r *store.Repository, doer *store.User, id int64, ref string) error {
	h, err := s.Get(ctx, Scope{RepoID: r.ID}, id)
	if err != nil {
		return err
	}
	if ref == "" {
		ref = r.DefaultBranch
	}
	b := &builder{s: s, base: rooturl.Normalize(s.Config.RootURL), repo: r, sender: doer}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return err
	}
	sha := gitstore.ZeroID(r.ObjectFormat)
	var commits []*models.PayloadCommit
	if g, err := s.OpenGit(r); err == nil {
		if res, err := g.Resolve(ref); err == nil && res.Commit != nil {
			sha = res.Commit.Hash.String()
			if commits, _, err = b.commits(ctx, events.RefChange{Name: "refs/heads/" + ref, Old: sha, New: sha}); err != nil {
				return err
			}
			if len(commits) == 0 {
				one, _, err := b.commits(ctx, events.RefChange{Name: "refs/heads/" + ref, New: sha})
				if err != nil {
					return err
				}
				commits = one[:min(len(one), 1)]
			}
		}
	}
	if commits == nil {
		commits = []*models.PayloadCommit{}
	}
	sender := b.apiSender()
	p := &pushPayload{Ref: "refs/heads/" + ref, Before: sha, After: sha, Commits: commits, TotalCommits: len(commits),
		Repo: repo, Pusher: sender, Sender: sender}
	if len(commits) > 0 {
		p.HeadCommit = commits[0]
	}
	body, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	d := &store.HookDelivery{HookID: h.ID, UUID: uuid.NewString(), Event: "push", EventType: "push", Payload: body,
		State: store.DeliveryPending, CreatedAt: s.Clock.Now()}
	d.NextAttemptAt = s.Clock.Precise().UnixMilli()
	d.QueuedAt = d.NextAttemptAt
	return s.Store.Hooks().Enqueue(ctx, []*store.HookDelivery{d})
}

// CopyDefaultHooks gives the new repository r a copy of every default
// hook, in the transaction of ctx that creates it.
func (s Service) CopyDefaultHooks(ctx context.Context, r *store.Repository) error {
	defaults, err := s.Store.Hooks().Defaults(ctx)
	if err != nil {
		return err
	}
	return s.copyHooks(ctx, defaults, r)
}

// CopyRepoHooks gives r a copy of every hook of repository fromID (a
// template's, when generating with webhooks).
func (s Service) CopyRepoHooks(ctx context.Context, fromID int64, r *store.Repository) error {
	var all []*store.Hook
	for page := 0; ; page++ {
		hs, total, err := s.Store.Hooks().List(ctx, store.HookFilter{RepoID: fromID}, store.Page{Offset: page * 50, Limit: 50})
		if err != nil {
			return err
		}
		all = append(all, hs...)
		if int64(len(all)) >= total || len(hs) == 0 {
			break
		}
	}
	return s.copyHooks(ctx, all, r)
}

func (s Service) copyHooks(ctx context.Context, hooks []*store.Hook, r *store.Repository) error {
	now := s.Clock.Now()
	copies := make([]*store.Hook, 0, len(hooks))
	for _, h := range hooks {
		c := *h
		c.ID, c.RepoID, c.OwnerID, c.IsSystem, c.CreatedAt, c.UpdatedAt = 0, r.ID, 0, false, now, now
		copies = append(copies, &c)
	}
	return s.Store.Hooks().CreateMany(ctx, copies)
}
