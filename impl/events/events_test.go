package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"repohost/impl/events"
	"repohost/store"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

func newBus(t *testing.T) (*events.Bus, store.Store, *[]events.Event) {
	t.Helper()
	db, err := sqlstore.Open(sqltest.DSN(t, ""), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus(db, store.SystemClock{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var got []events.Event
	bus.Subscribe(func(_ context.Context, e events.Event) { got = append(got, e) })
	return bus, db, &got
}

func TestEmitInsideATransactionWaitsForCommit(t *testing.T) {
	bus, db, got := newBus(t)
	ctx := context.Background()
	err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := bus.Emit(ctx, events.IssueOpened, 7, 1, events.Issue{ID: 1, Index: 1}); err != nil {
			return err
		}
		if len(*got) != 0 {
			t.Error("event handed out before its transaction committed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 || (*got)[0].Kind != events.IssueOpened || (*got)[0].RepoID != 7 || (*got)[0].ID == 0 {
		t.Fatalf("after commit: %+v", *got)
	}
	stored, err := db.Events().ListAfter(ctx, 0, 10)
	if err != nil || len(stored) != 1 || stored[0].ID != (*got)[0].ID {
		t.Fatalf("outbox: %+v, %v", stored, err)
	}
}

func TestRolledBackTransactionEmitsNothing(t *testing.T) {
	bus, db, got := newBus(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := bus.Emit(ctx, events.RepoCreated, 1, 1, events.Repo{ID: 1}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if len(*got) != 0 {
		t.Fatalf("rolled-back change announced: %+v", *got)
	}
	stored, err := db.Events().ListAfter(ctx, 0, 10)
	if err != nil || len(stored) != 0 {
		t.Fatalf("outbox kept a rolled-back event: %+v, %v", stored, err)
	}
}

func TestEmitOutsideATransactionHandsOutAtOnce(t *testing.T) {
	bus, _, got := newBus(t)
	if err := bus.Emit(context.Background(), events.RefsChanged, 3, 2, events.Refs{}); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 {
		t.Fatalf("got %d events", len(*got))
	}
}

func TestAPanickingConsumerDoesNotStopTheOthers(t *testing.T) {
	bus, _, got := newBus(t)
	bus.Subscribe(func(context.Context, events.Event) { panic("consumer bug") })
	if err := bus.Emit(context.Background(), events.UserCreated, 0, 1, events.Named{ID: 1}); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 {
		t.Fatalf("got %d events", len(*got))
	}
}
