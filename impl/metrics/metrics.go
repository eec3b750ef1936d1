// Package metrics is what an operator scrapes from GET /metrics (the
// Prometheus text format): requests by route template and status, their
// latency, the database pool, git operations, cron runs and the depth of
// whatever queues the areas register. Every method is a no-op on a nil
// *Metrics, so the code that counts never asks whether metrics are on.
package metrics

import (
	"crypto/subtle"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "repohost"

// Metrics holds the server's collectors in a registry of its own (no
// package-level state: tests run several servers in one process).
type Metrics struct {
	registry     *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	gitOps       *prometheus.CounterVec
	cronRuns     *prometheus.CounterVec
	cronDuration *prometheus.HistogramVec
}

// New builds the collectors, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route template (never the raw path), method and status."},
			[]string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route template and method.", Buckets: prometheus.DefBuckets},
			[]string{"route", "method"}),
		gitOps: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "git_operations_total",
			Help: "Git operations served or run, by operation and result."}, []string{"operation", "result"}),
		cronRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cron_runs_total",
			Help: "Runs of maintenance tasks by this process, by task and result."}, []string{"task", "result"}),
		cronDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "cron_run_duration_seconds",
			Help: "Duration of maintenance task runs, by task.", Buckets: []float64{.01, .1, 1, 10, 60, 600, 3600}}, []string{"task"}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.gitOps, m.cronRuns, m.cronDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchDB exports the connection pool's statistics (open, in use, idle,
// waits) under repohost_db_*.
func (m *Metrics) WatchDB(db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	prometheus.WrapRegistererWithPrefix(namespace+"_", m.registry).MustRegister(collectors.NewDBStatsCollector(db, "main"))
}

// ObserveRequest counts one answered request. route is the template the
// router matched ("GET /api/v1/repos/{owner}/{repo}"), or a fixed word
// for a request that matched none, so the label set stays bounded.
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(took.Seconds())
}

// GitOperation counts a git operation ("upload-pack", "receive-pack",
// "gc", "fsck", …) and whether it failed.
func (m *Metrics) GitOperation(op string, err error) {
	if m == nil {
		return
	}
	m.gitOps.WithLabelValues(op, result(err)).Inc()
}

// CronRun counts a finished run of a maintenance task.
func (m *Metrics) CronRun(task string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.cronRuns.WithLabelValues(task, result(err)).Inc()
	m.cronDuration.WithLabelValues(task).Observe(took.Seconds())
}

// RegisterQueue exports the depth of a queue (webhook deliveries, actions
// jobs, …) as repohost_queue_depth{queue="name"}; depth is asked at each
// scrape, so it should be one cheap count.
func (m *Metrics) RegisterQueue(name string, depth func() float64) {
	if m == nil {
		return
	}
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "queue_depth",
		Help: "Items waiting in a queue.", ConstLabels: prometheus.Labels{"queue": name}}, depth))
}

// RegisterGauge adds the gauge repohost_<name>{labels} read from value at
// each scrape, for an area's own figures (the webhook queue's counts and
// delays).
func (m *Metrics) RegisterGauge(name, help string, labels map[string]string, value func() float64) {
	if m == nil {
		return
	}
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: name,
		Help: help, ConstLabels: labels}, value))
}

func result(err error) string {
	if err != nil {
		return "failure"
	}
	return "success"
}

// Handler serves the registry in the Prometheus text format. With a token,
// a scrape must send "Authorization: Bearer <token>" (the reference's
// [metrics] TOKEN), or it is answered 401.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
