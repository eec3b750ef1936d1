package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCronClaims: of several processes claiming a due task at once exactly
// one gets it; the lease keeps it from the others (on demand too) until
// it is given back or runs out; a run is counted and dated.
func TestCronClaims(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	cron := db.Cron()
	t0 := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	if err := cron.Ensure(ctx, "task", "@every 1s", &t0); err != nil {
		t.Fatal(err)
	}
	// Ensure again with the same schedule changes nothing.
	later := t0.Add(time.Hour)
	if err := cron.Ensure(ctx, "task", "@every 1s", &later); err != nil {
		t.Fatal(err)
	}

	// Eight claimers race for the due run.
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := cron.ClaimDue(ctx, "task", fmt.Sprintf("p%d", i), t0, t0.Add(time.Second), t0.Add(10*time.Second))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claimers won the same run", won.Load())
	}
	rows, err := cron.List(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	holder := rows[0].LeaseHolder
	if !rows[0].NextRun.Equal(t0.Add(time.Second)) {
		t.Fatalf("next run %v", rows[0].NextRun)
	}

	// Due again one second later, but leased: nobody else gets it.
	t1 := t0.Add(1500 * time.Millisecond)
	if ok, _ := cron.ClaimDue(ctx, "task", "other", t1, t1.Add(time.Second), t1.Add(10*time.Second)); ok {
		t.Fatal("claimed a leased task")
	}
	if ok, _ := cron.ClaimNow(ctx, "task", "other", t1, t1.Add(10*time.Second)); ok {
		t.Fatal("ran a leased task on demand")
	}
	if ok, _ := cron.Renew(ctx, "task", "other", t1.Add(time.Minute)); ok {
		t.Fatal("renewed another's lease")
	}
	if ok, _ := cron.Renew(ctx, "task", holder, t0.Add(5*time.Second)); !ok {
		t.Fatal("holder could not renew")
	}

	// The holder dies; its lease (renewed to t0+5s) runs out exactly then.
	if ok, _ := cron.ClaimDue(ctx, "task", "other", t0.Add(4999*time.Millisecond), t0.Add(6*time.Second), t0.Add(20*time.Second)); ok {
		t.Fatal("claimed before the lease ran out")
	}
	t5 := t0.Add(5 * time.Second)
	if ok, err := cron.ClaimDue(ctx, "task", "other", t5, t5.Add(time.Second), t5.Add(10*time.Second)); !ok || err != nil {
		t.Fatalf("lease ran out, yet not claimed: %v", err)
	}
	if err := cron.Finish(ctx, "task", "other", t5, "boom"); err != nil {
		t.Fatal(err)
	}
	// The dead holder's run is counted too, but cannot give the lease back.
	if err := cron.Finish(ctx, "task", holder, t0, ""); err != nil {
		t.Fatal(err)
	}
	rows, _ = cron.List(ctx)
	r := rows[0]
	if r.ExecTimes != 2 || r.PrevRun == nil || !r.PrevRun.Equal(t5) || r.LeaseHolder != "" || r.LastError != "" {
		t.Fatalf("after two runs: %+v (prev %v)", r, r.PrevRun)
	}
	// Free now: a run on demand gets it.
	if ok, _ := cron.ClaimNow(ctx, "task", "third", t5, t5.Add(time.Second)); !ok {
		t.Fatal("free task not claimed on demand")
	}

	// Rescheduled: the next run follows the new spec.
	if err := cron.Ensure(ctx, "task", "@hourly", &later); err != nil {
		t.Fatal(err)
	}
	rows, _ = cron.List(ctx)
	if rows[0].Schedule != "@hourly" || !rows[0].NextRun.Equal(later) {
		t.Fatalf("rescheduled: %+v", rows[0])
	}
}
