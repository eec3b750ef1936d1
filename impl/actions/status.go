package actions

import (
	"repohost/impl/apierr"
	"repohost/store"
)

// statusFilters maps the API's status filter values to stored statuses,
// as the reference reads them.
var statusFilters = map[string][]store.ActionStatus{
	"requested":       {store.ActionBlocked},
	"pending":         {store.ActionBlocked},
	"waiting":         {store.ActionBlocked},
	"action_required": {store.ActionBlocked},
	"queued":          {store.ActionWaiting},
	"in_progress":     {store.ActionRunning},
	"completed":       {store.ActionSuccess, store.ActionFailure, store.ActionSkipped, store.ActionCancelled},
	"success":         {store.ActionSuccess},
	"failure":         {store.ActionFailure},
	"skipped":         {store.ActionSkipped},
	"neutral":         {store.ActionSkipped},
	"cancelled":       {store.ActionCancelled},
	"timed_out":       {store.ActionCancelled},
}

// ParseStatusFilter reads a status filter ("" filters nothing); an unknown
// value is the reference's 400.
func ParseStatusFilter(s string) ([]store.ActionStatus, error) {
	if s == "" {
		return nil, nil
	}
	st, ok := statusFilters[s]
	if !ok {
		return nil, apierr.BadRequest("Invalid status %s", s)
	}
	return st, nil
}

// APIStatus is the API's status and conclusion for a stored status.
func APIStatus(s store.ActionStatus) (status, conclusion string) {
	switch s {
	case store.ActionWaiting:
		return "queued", ""
	case store.ActionBlocked:
		return "waiting", ""
	case store.ActionRunning:
		return "in_progress", ""
	case store.ActionSuccess:
		return "completed", "success"
	case store.ActionFailure:
		return "completed", "failure"
	case store.ActionCancelled:
		return "completed", "cancelled"
	case store.ActionSkipped:
		return "completed", "skipped"
	}
	return "unknown", ""
}

// aggregate is a run's status from its jobs', as the reference computes
// it: all skipped is skipped, all success or skipped is success, then the
// first of cancelled, running, waiting, failure, blocked that any job has.
func aggregate(jobs []*store.ActionRunJob) store.ActionStatus {
	if len(jobs) == 0 {
		return store.ActionUnknown
	}
	allSkipped, allGood := true, true
	has := map[store.ActionStatus]bool{}
	for _, j := range jobs {
		allSkipped = allSkipped && j.Status == store.ActionSkipped
		allGood = allGood && (j.Status == store.ActionSuccess || j.Status == store.ActionSkipped)
		has[j.Status] = true
	}
	switch {
	case allSkipped:
		return store.ActionSkipped
	case allGood:
		return store.ActionSuccess
	}
	for _, s := range []store.ActionStatus{store.ActionCancelled, store.ActionRunning, store.ActionWaiting, store.ActionFailure, store.ActionBlocked} {
		if has[s] {
			return s
		}
	}
	return store.ActionUnknown
}
