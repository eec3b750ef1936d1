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

// Runner turns committed events into deliveries and sends them. Every
// server process runs one; they share the queue in the database.
//
// Events reach it two ways: the events bus hands it each event this
// process commits, at once; and a sweep over the outbox (at start and then
// every PollInterval) picks up events no process turned into deliveries,
// such as those committed just before a crash. A mark written in the same
// transaction as the deliveries makes each event count once, whichever
// way and whichever process gets to it first.
type Runner struct {
	s     Service
	cfg   app.WebhookConfig
	allow *AllowList
	http  *http.Client
	log   func(msg string, args ...any)

	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	unsubscribe func()

	events chan *store.Event
	wake   chan struct{}

	mu       sync.Mutex
	inflight map[int64]bool // events handed over by the bus, not yet handled
	swept    bool           // the first sweep (which takes every event) ran

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
}, pullKinds...)

// sweepPage is how many outbox events a sweep reads at a time.
const sweepPage = 1000

// sweepGrace is how old an unmarked event must be before a sweep takes it
// from the process that committed it (which is handling it already).
const sweepGrace = 3 * time.Second

// positionLag is how old the events a sweep moves the outbox position past
// must be: a transaction still open can commit an event with a lower id
// than one already committed, and the position must not pass it by.
// Transactions here never wait on git or the network, so they are short.
const positionLag = 10 * time.Second

// Start subscribes to d's events and starts the delivery workers. Stop
// ends them.
func Start(d *app.Deps) (*Runner, error) {
	allow, err := ParseAllowList(d.Config.Webhooks.AllowedHosts)
	if err != nil {
		return nil, err
	}
	cfg := d.Config.Webhooks
	ctx, cancel := context.WithCancel(store.Background(context.Background()))
	r := &Runner{
		s: Service{Deps: d}, cfg: cfg, allow: allow, ctx: ctx, cancel: cancel,
		events: make(chan *store.Event, 8192), wake: make(chan struct{}, 1),
		inflight: map[int64]bool{}, log: d.Log.Error,
	}
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
	r.unsubscribe = d.Events.Subscribe(r.consume)
	r.wg.Add(2)
	go r.outboxLoop()
	go r.deliveryLoop()
	return r, nil
}

// Stop ends the workers: deliveries under way are cut off and go back to
// the queue unattempted, for this or another process to send.
func (r *Runner) Stop() {
	r.unsubscribe()
	r.cancel()
	r.wg.Wait()
	r.http.CloseIdleConnections()
}

// consume is the bus consumer: it only queues the event, so the request
// that committed it is never slowed by hooks.
func (r *Runner) consume(_ context.Context, e events.Event) {
	if !slices.Contains(relevant, e.Kind) {
		return
	}
	raw, err := json.Marshal(e.Payload)
	if err != nil {
		return
	}
	ev := &store.Event{ID: e.ID, Kind: string(e.Kind), RepoID: e.RepoID, ActorID: e.ActorID, Payload: raw, CreatedAt: e.At}
	r.mu.Lock()
	r.inflight[e.ID] = true
	r.mu.Unlock()
	select {
	case r.events <- ev:
	default:
		// Full: the sweep will find it in the outbox.
		r.mu.Lock()
		delete(r.inflight, e.ID)
		r.mu.Unlock()
	}
}

func (r *Runner) notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// eventHandlers is how many events this process turns into deliveries at
// once; rendering a payload is mostly reading, which runs side by side.
const eventHandlers = 4

func (r *Runner) outboxLoop() {
	defer r.wg.Done()
	r.sweep()
	var handlers sync.WaitGroup
	for range eventHandlers {
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			for {
				select {
				case <-r.ctx.Done():
					return
				case ev := <-r.events:
					if err := r.handle(r.ctx, ev); err != nil && r.ctx.Err() == nil {
						r.log("webhook: handle event", "event", ev.ID, "err", err)
					}
					r.mu.Lock()
					delete(r.inflight, ev.ID)
					r.mu.Unlock()
				}
			}
		}()
	}
	defer handlers.Wait()
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
			r.sweep()
		}
	}
}

// sweep handles the outbox events nobody has handled and moves the
// position past those every process is done with.
func (r *Runner) sweep() {
	ctx := r.ctx
	hooks := r.s.Store.Hooks()
	pos, err := hooks.Position(ctx)
	if err != nil {
		r.log("webhook: outbox position", "err", err)
		return
	}
	now := time.Now()
	first := !r.swept
	r.swept = true
	for {
		list, marked, err := hooks.PendingEvents(ctx, pos, sweepPage)
		if err != nil {
			if ctx.Err() == nil {
				r.log("webhook: read outbox", "err", err)
			}
			return
		}
		advance, blocked := pos, false
		for _, ev := range list {
			done := marked[ev.ID] || !slices.Contains(relevant, events.Kind(ev.Kind))
			if !done {
				r.mu.Lock()
				busy := r.inflight[ev.ID]
				r.mu.Unlock()
				if !busy && (first || now.Sub(ev.CreatedAt) >= sweepGrace) {
					if err := r.handle(ctx, ev); err != nil {
						if ctx.Err() == nil {
							r.log("webhook: handle event", "event", ev.ID, "err", err)
						}
					} else {
						done = true
					}
				}
			}
			if !done || now.Sub(ev.CreatedAt) < positionLag {
				blocked = true
			}
			if !blocked {
				advance = ev.ID
			}
		}
		if advance > pos {
			if err := hooks.SetPosition(ctx, advance); err != nil {
				r.log("webhook: move outbox position", "err", err)
				return
			}
		}
		if len(list) < sweepPage {
			return
		}
		pos = list[len(list)-1].ID
	}
}

// handle turns one committed event into deliveries, once across all
// processes.
func (r *Runner) handle(ctx context.Context, ev *store.Event) error {
	n, err := r.s.enqueueEvent(ctx, ev)
	if n > 0 {
		r.notify()
	}
	return err
}

// enqueueEvent writes the deliveries of ev with ev's mark; it returns how
// many.
func (s Service) enqueueEvent(ctx context.Context, ev *store.Event) (int, error) {
	kind := events.Kind(ev.Kind)
	st := s.Store.Hooks()
	if kind == events.UserDeleted || kind == events.OrgDeleted {
		// The account's own hooks go with it.
		var p events.Named
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return 0, err
		}
		return 0, s.Store.WithTx(ctx, func(ctx context.Context) error {
			if first, err := st.MarkEvent(ctx, ev.ID); err != nil || !first {
				return err
			}
			return st.DeleteByOwner(ctx, p.ID)
		})
	}
	hooks, built, err := s.reach(ctx, ev)
	if err != nil {
		return 0, err
	}
	deliveries, err := s.deliveriesFor(ev, hooks, built)
	if err != nil {
		return 0, err
	}
	if len(deliveries) == 0 && kind != events.RepoDeleted {
		// The mark alone is one statement: no transaction needed (most
		// events reach no hook).
		_, err := st.MarkEvent(ctx, ev.ID)
		return 0, err
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		first, err := st.MarkEvent(ctx, ev.ID)
		if err != nil || !first {
			deliveries = nil
			return err
		}
		if kind == events.RepoDeleted {
			if err := st.DeleteByRepo(ctx, ev.RepoID); err != nil {
				return err
			}
		}
		return st.Enqueue(ctx, deliveries)
	})
	return len(deliveries), err
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
	due := time.Now().UnixMilli()
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

// Drain waits until every event the bus has handed this runner so far is
// turned into deliveries (or ctx ends): hooks created afterwards are sure
// not to receive those events.
func (r *Runner) Drain(ctx context.Context) error {
	for {
		r.mu.Lock()
		n := len(r.inflight)
		r.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
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
