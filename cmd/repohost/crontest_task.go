//go:build crontest

package main

import (
	"context"

	"repohost/impl/cron"
)

// The two-process test (TestCronTwoProcesses) builds the binary with the
// crontest tag: crontest_block holds its lease until the process ends, so
// the test can kill the holder and watch the other process take over.
func init() {
	testCronTasks = append(testCronTasks, cron.Task{Name: "crontest_block", Schedule: "@every 1s", Enabled: false,
		Run: func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}})
}
