package convert

import (
	"repohost/impl/events"
	"repohost/models"
	"repohost/store"
)

// EventConsumer renders a consumer's queue figures.
func EventConsumer(s store.JobStats) *models.EventConsumer {
	return &models.EventConsumer{Name: s.Consumer, Pending: s.Pending, Retrying: s.Retrying, Dead: s.Dead,
		OldestPending: Time(&s.OldestPending)}
}

// DeadLetter renders a job its consumer gave up on.
func DeadLetter(d events.DeadLetter) *models.EventDeadLetter {
	return &models.EventDeadLetter{ID: d.ID, Consumer: d.Consumer, EventID: d.EventID, EventKind: string(d.Kind),
		RepoID: d.RepoID, Attempts: int64(d.Attempts), LastError: d.LastError, CreatedAt: TimeOf(d.At), FailedAt: TimeOf(d.UpdatedAt)}
}
