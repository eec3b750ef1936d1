package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"repohost/store"
)

// WatchConsumers exports the outbox consumers' queues, read once per
// scrape with read: jobs pending (waiting or under way), retrying (failed
// at least once), dead letters, and the age of the oldest pending one, each
// labelled by consumer.
func (m *Metrics) WatchConsumers(read func(context.Context) ([]store.JobStats, error)) {
	if m == nil {
		return
	}
	m.registry.MustRegister(consumerCollector{read: read})
}

var (
	consumerPending = prometheus.NewDesc(namespace+"_event_jobs_pending",
		"Outbox events a consumer has still to handle (all processes).", []string{"consumer"}, nil)
	consumerRetrying = prometheus.NewDesc(namespace+"_event_jobs_retrying",
		"Pending outbox events whose handling failed at least once.", []string{"consumer"}, nil)
	consumerDead = prometheus.NewDesc(namespace+"_event_jobs_dead",
		"Outbox events a consumer gave up on after its last retry (dead letters).", []string{"consumer"}, nil)
	consumerOldest = prometheus.NewDesc(namespace+"_event_jobs_oldest_pending_age_seconds",
		"Age of the oldest outbox event a consumer has still to handle (0 when none).", []string{"consumer"}, nil)
)

type consumerCollector struct {
	read func(context.Context) ([]store.JobStats, error)
}

func (c consumerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- consumerPending
	ch <- consumerRetrying
	ch <- consumerDead
	ch <- consumerOldest
}

func (c consumerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(store.Background(context.Background()), 5*time.Second)
	defer cancel()
	stats, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(consumerPending, err)
		return
	}
	for _, s := range stats {
		age := 0.0
		if !s.OldestPending.IsZero() {
			age = max(time.Since(s.OldestPending).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(consumerPending, prometheus.GaugeValue, float64(s.Pending), s.Consumer)
		ch <- prometheus.MustNewConstMetric(consumerRetrying, prometheus.GaugeValue, float64(s.Retrying), s.Consumer)
		ch <- prometheus.MustNewConstMetric(consumerDead, prometheus.GaugeValue, float64(s.Dead), s.Consumer)
		ch <- prometheus.MustNewConstMetric(consumerOldest, prometheus.GaugeValue, age, s.Consumer)
	}
}
