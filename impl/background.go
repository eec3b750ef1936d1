package impl

import (
	"repohost/impl/actions"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/issue"
	"repohost/impl/notification"
	"repohost/impl/pulls"
	"repohost/impl/refs"
	"repohost/impl/repo"
	"repohost/impl/webhook"
)

// Background is what a server process runs besides answering requests:
// the workers of the outbox's consumers and the webhook deliveries.
type Background struct {
	d *app.Deps
	// Hooks sends the webhook deliveries.
	Hooks *webhook.Runner
}

// RegisterConsumers registers every consumer of the outbox on d.Events.
// This is the one place that does (TestConsumersRegisteredOnce), and every
// process that emits events calls it, the command line included: an event
// gets a job for each consumer registered in the process that emits it,
// and a server process takes them.
func RegisterConsumers(d *app.Deps) *Background {
	hooks := webhook.NewRunner(d)
	d.Events.Register(events.Logger(d.Log))
	d.Events.Register(hooks.Consumer())
	d.Events.Register(pulls.Service{Deps: d}.RefreshConsumer())
	d.Events.Register(actions.Service{Deps: d}.Consumer())
	d.Events.Register(refs.New(d).SizeConsumer())
	d.Events.Register(pulls.Service{Deps: d}.AutoMergeConsumer())
	d.Events.Register(repo.Service{Deps: d}.MigrateConsumer())
	d.Events.Register(repo.Service{Deps: d}.MirrorSyncConsumer())
	d.Events.Register(repo.Service{Deps: d}.PushMirrorConsumer())
	d.Events.Register(notification.Service{Deps: d}.Consumer())
	d.Events.Register(issue.Service{Deps: d}.CommitRefsConsumer())
	return &Background{d: d, Hooks: hooks}
}

// Start starts the deliveries and the consumers' workers, with d's
// configuration as it is now.
func (b *Background) Start() error {
	if err := b.Hooks.Start(); err != nil {
		return err
	}
	if err := b.d.Events.Start(); err != nil {
		b.Hooks.Stop()
		return err
	}
	b.d.Metrics.WatchConsumers(b.d.Events.Stats)
	return nil
}

// Stop ends them: work under way is handed back, for the next start or
// another process.
func (b *Background) Stop() {
	b.d.Events.Stop()
	b.Hooks.Stop()
}
