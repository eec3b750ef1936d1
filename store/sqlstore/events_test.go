package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"repohost/store"
)

// TestClaimTakesEachConsumersBatchWithItsEvents: one claim for several
// consumers takes up to n due jobs of each, oldest first, leases them,
// and hands back their events; a job whose event is gone comes without
// one, and a second claim takes what the first left.
func TestClaimTakesEachConsumersBatchWithItsEvents(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	var evs []*store.Event
	for i, consumers := range [][]string{{"a", "b"}, {"a", "b"}, {"a", "b"}, {"b"}, {"c"}} {
		e := &store.Event{Kind: "issue_opened", RepoID: int64(i + 1), ActorID: 7, Payload: []byte(`{"n":1}`),
			CreatedAt: time.Now().UTC().Truncate(time.Second), Consumers: consumers}
		if err := db.Events().Append(ctx, e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	// The second event is gone (as if pruned) while its jobs are left.
	if err := db.ExecRaw(ctx, "DELETE FROM events WHERE id = ?", evs[1].ID); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	jobs, got, err := db.EventJobs().Claim(ctx, []string{"a", "b"}, now, now+60_000, 5, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		consumer string
		event    *store.Event
	}{{"a", evs[0]}, {"b", evs[0]}, {"a", evs[1]}, {"b", evs[1]}}
	if len(jobs) != len(want) {
		t.Fatalf("claimed %d jobs, want %d: %+v", len(jobs), len(want), jobs)
	}
	for i, j := range jobs {
		if j.Consumer != want[i].consumer || j.EventID != want[i].event.ID || j.Token != 5 || j.RunAt != now+60_000 || j.Attempts != 1 {
			t.Errorf("job %d: %+v, want %s's of event %d leased to 5", i, j, want[i].consumer, want[i].event.ID)
		}
	}
	if e := got[evs[0].ID]; e == nil || e.Kind != "issue_opened" || e.RepoID != 1 || e.ActorID != 7 ||
		string(e.Payload) != `{"n":1}` || !e.CreatedAt.Equal(evs[0].CreatedAt) {
		t.Errorf("event %d came back as %+v, want %+v", evs[0].ID, e, evs[0])
	}
	if _, ok := got[evs[1].ID]; ok || len(got) != 1 {
		t.Errorf("events %v: the deleted one is there, or others", got)
	}
	// The rest: a's last, b's last two; c's job is nobody's here.
	jobs, got, err = db.EventJobs().Claim(ctx, []string{"a", "b"}, now, now+60_000, 6, 2, false)
	if err != nil || len(jobs) != 3 || len(got) != 2 {
		t.Fatalf("second claim: %+v, %v, %v", jobs, got, err)
	}
	for _, j := range jobs {
		if j.Consumer == "c" || got[j.EventID] == nil {
			t.Errorf("second claim took %+v", j)
		}
	}
	if jobs, _, err := db.EventJobs().Claim(ctx, []string{"a", "b"}, now, now+60_000, 7, 2, false); err != nil || len(jobs) != 0 {
		t.Errorf("third claim: %+v, %v", jobs, err)
	}
}
