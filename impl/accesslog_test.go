package impl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/requestid"
)

func noRoutes(*http.Request) string { return "" }

// records collects log records.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func attr(rec slog.Record, key string) slog.Value {
	var v slog.Value
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// TestCancelledRequestIsLoggedAs499: a request whose client went away, and
// whose statement the database driver therefore interrupted, is the
// client's doing: it is logged at info with status 499, and no "internal
// error" appears.
func TestCancelledRequestIsLoggedAs499(t *testing.T) {
	t.Parallel()
	got := &records{}
	log := slog.New(got)
	tr := apierr.Translator{Log: log}
	// What the store returns for a statement its context interrupted.
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.Write(w, fmt.Errorf("list issues: %w (sqlite3: interrupted)", context.Canceled))
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/repos/a/b/issues", nil).WithContext(ctx)
	observeRequests(&app.Deps{Log: log, Config: app.Config{AccessLogEvery: 1}}, noRoutes, failing).ServeHTTP(httptest.NewRecorder(), req)
	var access *slog.Record
	for i, rec := range got.list {
		if rec.Level >= slog.LevelWarn {
			t.Errorf("logged at %v: %s", rec.Level, rec.Message)
		}
		if rec.Message == "request" {
			access = &got.list[i]
		}
	}
	if access == nil {
		t.Fatal("no access-log line")
	}
	if s := attr(*access, "status").Int64(); s != 499 {
		t.Errorf("status %d, want 499", s)
	}
}

func TestAccessLogCanBeOffOrSampled(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, c := range []struct {
		setting string
		lines   int
	}{{"on", 12}, {"", 12}, {"off", 0}, {"sample:1", 12}, {"sample:4", 3}, {"sample:100", 1}} {
		every, err := ParseAccessLog(c.setting)
		if err != nil {
			t.Fatalf("%q: %v", c.setting, err)
		}
		got := &records{}
		h := observeRequests(&app.Deps{Log: slog.New(got), Config: app.Config{AccessLogEvery: every}}, noRoutes, ok)
		for i := 0; i < 12; i++ {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/version", nil))
		}
		if len(got.list) != c.lines {
			t.Errorf("%q: %d lines for 12 requests, want %d", c.setting, len(got.list), c.lines)
		}
	}
	for _, bad := range []string{"sample:0", "sample:x", "sample:", "yes", "sample:-2"} {
		if _, err := ParseAccessLog(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRequestIDOnEveryLine: the answer carries X-Request-ID, and the
// access-log line, a line the handler logs with the request's context and
// an internal error's line all carry the same id; a proxy's id is kept
// when it is tame and replaced when not.
func TestRequestIDOnEveryLine(t *testing.T) {
	t.Parallel()
	got := &records{}
	log := slog.New(requestid.Handler(got))
	tr := apierr.Translator{Log: log}
	h := observeRequests(&app.Deps{Log: log, Config: app.Config{AccessLogEvery: 1}}, noRoutes,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.InfoContext(r.Context(), "working")
			tr.Write(w, errors.New("disk on fire"))
		}))
	for _, c := range []struct{ sent, want string }{
		{"", ""}, {"edge-42.abc_Z", "edge-42.abc_Z"}, {"bad id\nforged", ""}, {strings.Repeat("x", 65), ""},
	} {
		got.list = nil
		req := httptest.NewRequest(http.MethodGet, "/api/v1/version", nil)
		if c.sent != "" {
			req.Header.Set(requestid.Header, c.sent)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		id := rec.Header().Get(requestid.Header)
		if id == "" || (c.want != "" && id != c.want) || (c.want == "" && id == c.sent) {
			t.Errorf("sent %q: X-Request-ID %q", c.sent, id)
		}
		if len(got.list) != 3 {
			t.Fatalf("%d lines, want working, internal error and request", len(got.list))
		}
		for _, l := range got.list {
			if v := attr(l, "request_id").String(); v != id {
				t.Errorf("line %q: request_id %q, want %q", l.Message, v, id)
			}
		}
	}
}
