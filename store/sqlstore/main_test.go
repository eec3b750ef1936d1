package sqlstore_test

import (
	"fmt"
	"os"
	"testing"

	"repohost/store/sqlstore/sqltest"
)

// TestMain says once which database the store tests run on.
func TestMain(m *testing.M) {
	fmt.Fprintf(os.Stderr, "sqlstore: database %s\n", sqltest.Database())
	os.Exit(m.Run())
}
