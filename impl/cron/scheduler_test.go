package cron

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	got, err := ParseSettings(" git_gc_repos=@every 24h; update_checker=off;archive_cleanup=on; x=0 0 1,15 * *;")
	if err != nil {
		t.Fatal(err)
	}
	if s := got["git_gc_repos"]; s.Schedule != "@every 24h" || s.Enabled == nil || !*s.Enabled {
		t.Errorf("git_gc_repos: %+v", s)
	}
	if s := got["update_checker"]; s.Schedule != "" || s.Enabled == nil || *s.Enabled {
		t.Errorf("update_checker: %+v", s)
	}
	if s := got["archive_cleanup"]; s.Enabled == nil || !*s.Enabled {
		t.Errorf("archive_cleanup: %+v", s)
	}
	if s := got["x"]; s.Schedule != "0 0 1,15 * *" {
		t.Errorf("cron list: %+v", s)
	}
	for _, bad := range []string{"git_gc_repos", "=@hourly", "a=", "a=@every", "a=61 * * * *", "a=@sometimes"} {
		if _, err := ParseSettings(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRegisterChecksNamesAndSchedules(t *testing.T) {
	settings, _ := ParseSettings("known=@hourly;typo=off")
	s := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Settings: settings})
	run := func(context.Context) error { return nil }
	if err := s.Register(Task{Name: "known", Schedule: "@midnight", Run: run}); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(Task{Name: "known", Schedule: "@midnight", Run: run}); err == nil {
		t.Error("a second task of the same name registered")
	}
	if err := s.Register(Task{Name: "broken", Schedule: "every day", Enabled: true, Run: run}); err == nil {
		t.Error("a bad default schedule registered")
	}
	if err := s.CheckSettings(); err == nil || !strings.Contains(err.Error(), "typo") {
		t.Errorf("unknown task in the settings: %v", err)
	}
	if e := s.byName["known"]; e.spec != "@hourly" || e.schedule == nil {
		t.Errorf("setting not applied: %+v", e)
	}
	if err := s.RunNow("nothing"); err != ErrUnknownTask {
		t.Errorf("RunNow of an unknown task: %v", err)
	}
}
