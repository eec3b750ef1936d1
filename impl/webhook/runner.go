package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/metrics"
	"repohost/store"
)

// Runner sends webhook deliveries. Every server process runs one; they
// share the delivery queue in the database. Its Consumer turns committed
// events into deliveries, as one of the outbox's durable consumers (see
// impl/events): the deliveries are written in the same transaction as the
// end of the event's job, so each event counts once, whichever process
// takes it.
type Runner struct {
	s     Service
	cfg   app.WebhookConfig
	allow *AllowList
	http  *http.Client
	log   func(msg string, args ...any)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	wake chan struct{}

	stats statsRecorder
}

// relevant are the domain events that can become hook events.
var relevant = append([]events.Kind{
	events.RefsChanged, events.RepoCreated, events.RepoDeleted,
	events.IssueOpened, events.IssueEdited, events.IssueClosed, events.IssueReopened,
	events.IssueLabelsChanged, events.IssueMilestoned, events.IssueAssigned,
	events.CommentCreated, events.CommentEdited, events.CommentDeleted,
	events.ReleasePublished, events.ReleaseEdited, events.ReleaseDeleted,
	events.UserDeleted, events.OrgDeleted,
	events.PackageCreated, events.PackageDeleted,
	events.ActionsRunCreated, events.ActionsRunStatus, events.ActionsJobStatus,
	events.StatusCreated,
}, pullKinds...)

// eventHandlers is how many events this process turns into deliveries at
// once; rendering a payload is mostly reading, which runs side by side.
const eventHandlers = 4

// NewRunner makes d's runner; Start starts its delivery workers. A process
// that only emits events (the command line) makes one for its Consumer.
func NewRunner(d *app.Deps) *Runner {
	return &Runner{s: Service{Deps: d}, wake: make(chan struct{}, 1), log: d.Log.Error}
}

// Start starts the delivery workers with d's configuration as it is now.
// Stop ends them.
func (r *Runner) Start() error {
	d := r.s.Deps
	allow, err := ParseAllowList(d.Config.Webhooks.AllowedHosts)
	if err != nil {
		return err
	}
	cfg := d.Config.Webhooks
	r.cfg, r.allow = cfg, allow
	r.ctx, r.cancel = context.WithCancel(store.Background(context.Background()))
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	r.http = &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         allow.DialContext(dialer),
			MaxIdleConnsPerHost: cfg.Workers,
			IdleConnTimeout:     90 * time.Second,
		},
		Timeout: cfg.Timeout,
		// Each redirect dials again through the guard; ten hops at most.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
	r.watch(d.Metrics)
	r.wg.Add(1)
	go r.deliveryLoop()
	return nil
}

// Stop ends the workers: deliveries under way are cut off and go back to
// the queue unattempted, for this or another process to send.
func (r *Runner) Stop() {
	if r.cancel == nil {
		return // never started
	}
	r.cancel()
	r.wg.Wait()
	r.http.CloseIdleConnections()
}

// Consumer is the outbox consumer that turns events into deliveries.
func (r *Runner) Consumer() events.Consumer {
	// Quick: it writes the deliveries; the delivery loop sends them.
	return events.Consumer{Name: "webhooks", Kinds: relevant, Workers: eventHandlers, Quick: true,
		Handle: func(ctx context.Context, e events.Event) error {
			n, err := r.s.enqueueEvent(ctx, e)
			if n > 0 {
				r.notify()
			}
			return err
		}}
}

func (r *Runner) notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// enqueueEvent writes the deliveries of e, ending its job in the same
// transaction (events.Complete); it returns how many.
func (s Service) enqueueEvent(ctx context.Context, e events.Event) (int, error) {
	st := s.Store.Hooks()
	if e.Kind == events.UserDeleted || e.Kind == events.OrgDeleted {
		// The account's own hooks go with it.
		p, _ := e.Payload.(events.Named)
		return 0, st.DeleteByOwner(ctx, p.ID)
	}
	// The payload renderers read the outbox's form of the event.
	raw, err := json.Marshal(e.Payload)
	if err != nil {
		return 0, err
	}
	ev := &store.Event{ID: e.ID, Kind: string(e.Kind), RepoID: e.RepoID, ActorID: e.ActorID, Payload: raw, CreatedAt: e.At}
	hooks, built, err := s.reach(ctx, ev)
	if err != nil {
		return 0, err
	}
	deliveries, err := s.deliveriesFor(ev, hooks, built)
	if err != nil {
		return 0, err
	}
	if len(deliveries) == 0 && e.Kind != events.RepoDeleted {
		return 0, nil // most events reach no hook
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := events.Complete(ctx); err != nil {
			return err
		}
		if e.Kind == events.RepoDeleted {
			if err := st.DeleteByRepo(ctx, e.RepoID); err != nil {
				return err
			}
		}
		return st.Enqueue(ctx, deliveries)
	})
	if err != nil {
		return 0, err
	}
	return len(deliveries), nil
}

// reach is the hooks ev may reach and the hook events it turns into
// (rendered only when some hook may hear them).
func (s Service) reach(ctx context.Context, ev *store.Event) ([]*store.Hook, []hookEvent, error) {
	kind := events.Kind(ev.Kind)
	if kind == events.PackageCreated || kind == events.PackageDeleted {
		// A package belongs to an owner first, to a repository only
		// when linked to one.
		return s.packageEvent(ctx, ev)
	}
	repo, err := s.eventRepo(ctx, ev)
	if err != nil || repo == nil {
		return nil, nil, err
	}
	var forkHooks []*store.Hook
	var forked []hookEvent
	if kind == events.RepoCreated && repo.IsFork && repo.ForkID != 0 {
		// The parent's hooks hear of the fork.
		if forkHooks, forked, err = s.forkEvent(ctx, ev, repo); err != nil {
			return nil, nil, err
		}
		for i := range forked {
			forked[i].Hooks = forkHooks
		}
	}
	hooks, err := s.Store.Hooks().ForRepo(ctx, repo.ID, repo.OwnerID)
	if err != nil {
		return nil, nil, err
	}
	if kind == events.RepoDeleted {
		// The repository's own hooks went with it.
		hooks = slices.DeleteFunc(hooks, func(h *store.Hook) bool { return h.RepoID != 0 })
	}
	if len(hooks) == 0 {
		return nil, forked, nil
	}
	if kind != events.RepoDeleted {
		// Read with its counters current: the payloads show them.
		if repo, err = s.Store.Repos().FindByID(ctx, repo.ID); isNotFound(err) {
			return nil, forked, nil
		} else if err != nil {
			return nil, nil, err
		}
	}
	built, err := s.payloads(ctx, ev, repo)
	return hooks, append(built, forked...), err
}

// eventRepo loads the repository ev is about, nil when it is about none;
// a deleted repository is described from the event itself.
func (s Service) eventRepo(ctx context.Context, ev *store.Event) (*store.Repository, error) {
	if ev.RepoID == 0 {
		return nil, nil
	}
	if events.Kind(ev.Kind) == events.RepoDeleted {
		var p events.Repo
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return nil, err
		}
		owner, err := s.Store.Users().FindByName(ctx, p.Owner)
		if err != nil {
			if isNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		return &store.Repository{ID: p.ID, OwnerID: owner.ID, Owner: owner, Name: p.Name, LowerName: p.Name, IsPrivate: p.Private}, nil
	}
	// Its counters may lag (the event itself may have moved them): they
	// matter only to payloads, for which reach reads it again.
	repo, err := s.Store.Repos().FindByID(store.CountersMayLag(ctx), ev.RepoID)
	if isNotFound(err) {
		return nil, nil
	}
	return repo, err
}

// deliveriesFor matches built hook events against hooks: event type,
// branch filter, and one delivery per pair.
func (s Service) deliveriesFor(ev *store.Event, hooks []*store.Hook, built []hookEvent) ([]*store.HookDelivery, error) {
	var out []*store.HookDelivery
	now := s.Clock.Now()
	due := s.Clock.Precise().UnixMilli()
	for _, he := range built {
		var body []byte
		targets := hooks
		if he.Hooks != nil {
			targets = he.Hooks
		}
		for _, h := range targets {
			// A hook hears what happens once it exists (an event
			// found late by a sweep is not news to a newer hook).
			if h.CreatedAt.After(ev.CreatedAt) || !hasEvent(eventsOf(h), he.Type) || !branchMatches(h.BranchFilter, he.Branch) {
				continue
			}
			if body == nil {
				var err error
				if body, err = json.MarshalIndent(he.Payload, "", "  "); err != nil {
					return nil, err
				}
			}
			out = append(out, &store.HookDelivery{HookID: h.ID, UUID: uuid.NewString(), EventID: ev.ID,
				Event: headerEvent(he.Type), EventType: he.Type, Action: he.Action, Payload: body,
				State: store.DeliveryPending, NextAttemptAt: due, QueuedAt: due, CreatedAt: now})
		}
	}
	return out, nil
}

// watch publishes the queue's figures to the operator's metrics: its
// depth, the deliveries by outcome and this process's recent delays.
func (r *Runner) watch(m *metrics.Metrics) {
	if m == nil {
		return
	}
	read := func(pick func(Stats) float64) func() float64 {
		return func() float64 {
			st, err := r.Stats(r.ctx)
			if err != nil {
				return math.NaN()
			}
			return pick(st)
		}
	}
	m.RegisterQueue("webhook", read(func(s Stats) float64 { return float64(s.Pending) }))
	for state, pick := range map[string]func(Stats) float64{
		"pending":   func(s Stats) float64 { return float64(s.Pending) },
		"delivered": func(s Stats) float64 { return float64(s.Delivered) },
		"failed":    func(s Stats) float64 { return float64(s.Failed) },
	} {
		m.RegisterGauge("webhook_deliveries", "Webhook deliveries kept, by state (all processes).",
			map[string]string{"state": state}, read(pick))
	}
	m.RegisterGauge("webhook_delay_seconds", "Delay from an event to its receiver's answer over this process's latest deliveries.",
		map[string]string{"quantile": "0.5"}, read(func(s Stats) float64 { return s.LatencyP50.Seconds() }))
	m.RegisterGauge("webhook_delay_seconds", "Delay from an event to its receiver's answer over this process's latest deliveries.",
		map[string]string{"quantile": "0.99"}, read(func(s Stats) float64 { return s.LatencyP99.Seconds() }))
}
