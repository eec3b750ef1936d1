package store

import "context"

type countersMayLagKey struct{}

// CountersMayLag marks ctx for reads whose caller does not show a
// repository's counters (issues, pulls, forks, releases): it checks access
// or names the repository. Such a read may be served a cached repository
// whose counters have moved since, which a busy tracker's issue creates
// otherwise make every lookup of that repository miss. Everything but the
// counters is as current as for any other read.
func CountersMayLag(ctx context.Context) context.Context {
	return context.WithValue(ctx, countersMayLagKey{}, true)
}

// CountersLag tells whether ctx was marked by CountersMayLag.
func CountersLag(ctx context.Context) bool {
	b, _ := ctx.Value(countersMayLagKey{}).(bool)
	return b
}
