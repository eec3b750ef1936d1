package apierr

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repohost/store"
	"repohost/store/gitstore"
)

// sentinels are the store's and the git store's exported errors, by name.
var sentinels = map[string]error{
	"store.ErrNotFound": store.ErrNotFound, "store.ErrDuplicate": store.ErrDuplicate,
	"store.ErrConflict": store.ErrConflict, "store.ErrInvalid": store.ErrInvalid,
	"store.ErrUnavailable": store.ErrUnavailable,
	"gitstore.ErrBadPath":  gitstore.ErrBadPath, "gitstore.ErrFileExists": gitstore.ErrFileExists,
	"gitstore.ErrPathConflict": gitstore.ErrPathConflict, "gitstore.ErrSHAMismatch": gitstore.ErrSHAMismatch,
	"gitstore.ErrBranchExists": gitstore.ErrBranchExists, "gitstore.ErrTagExists": gitstore.ErrTagExists,
	"gitstore.ErrNotACommit": gitstore.ErrNotACommit, "gitstore.ErrBadName": gitstore.ErrBadName,
	"gitstore.ErrRefused":    gitstore.ErrRefused,
	"gitstore.ErrBadRefName": gitstore.ErrBadRefName, "gitstore.ErrProtocol": gitstore.ErrProtocol,
	"gitstore.ErrTooMuchHistory": gitstore.ErrTooMuchHistory, "gitstore.ErrMergeConflict": gitstore.ErrMergeConflict,
}

// TestSentinelsAreTranslated: every exported Err* of store and
// store/gitstore (read from their source, so a new one cannot be missed)
// answers a 4xx, wrapped or not, also inside a refused ref update; the
// one exception is an unreachable database, which is the server's state,
// not the request's fault, and answers 503.
func TestSentinelsAreTranslated(t *testing.T) {
	t.Parallel()
	for pkg, dir := range map[string]string{"store": "../../store", "gitstore": "../../store/gitstore"} {
		for _, name := range exportedErrors(t, dir) {
			key := pkg + "." + name
			err, ok := sentinels[key]
			if !ok {
				t.Errorf("%s is not in this test's list: add it, and translate it in classify", key)
				continue
			}
			for _, e := range []error{err, fmt.Errorf("context: %w", err), &gitstore.RefError{Reason: "why", Kind: err}} {
				got := (Translator{}).classify(e)
				switch {
				case err == store.ErrUnavailable && got.Status != 503:
					t.Errorf("%s (%v) answers %d, want 503", key, e, got.Status)
				case err != store.ErrUnavailable && got.Status >= 500:
					t.Errorf("%s (%v) answers %d", key, e, got.Status)
				}
			}
		}
	}
}

// exportedErrors lists the package-level exported variables named Err* in
// the non-test files of dir.
func exportedErrors(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Err* variables found in %s", dir)
	}
	return out
}

// A request body that stopped arriving (a read past the stall deadline,
// as net/http reports it) is the client's doing: 408, not a 500.
func TestStalledBodyIsTheClients(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("store the upload: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	if got := (Translator{}).classify(err); got.Status != 408 {
		t.Fatalf("a stalled body answers %d, want 408", got.Status)
	}
}
