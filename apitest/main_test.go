package apitest_test

import (
	"fmt"
	"os"
	"testing"

	"repohost/apitest"
)

// TestMain says once which database this run uses, so a log of
// `make test` shows that the second pass really ran on PostgreSQL.
func TestMain(m *testing.M) {
	fmt.Fprintf(os.Stderr, "apitest: database %s\n", apitest.Database())
	os.Exit(m.Run())
}
