package gitstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// refWriters are go-git's calls that write references.
var refWriters = map[string]bool{
	"SetReference": true, "CheckAndSetReference": true, "RemoveReference": true, "PackRefs": true,
	"CreateTag": true, "DeleteTag": true, "CreateBranch": true, "DeleteBranch": true,
}

// allowedRefWriters are the functions that may call them: the one
// primitive behind Repos.UpdateRefs, and HEAD's symbolic ref.
var allowedRefWriters = map[string]bool{
	"store/gitstore/refupdate.go:casRef":          true,
	"store/gitstore/gitstore.go:SetDefaultBranch": true,
}

// TestOnlyUpdateRefsWritesRefs reads the program's source: no code but
// UpdateRefs' own helpers (and SetDefaultBranch, for HEAD) calls go-git's
// ref writers, so the API test servers' guard on UpdateRefs (apitest's
// refGuard) sees every ref the program moves.
func TestOnlyUpdateRefsWritesRefs(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", "gen", "models", "restapi", "data", ".bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := rel + ":" + fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !refWriters[sel.Sel.Name] {
					return true
				}
				if !allowedRefWriters[where] {
					t.Errorf("%s: %s calls %s; refs move only through Repos.UpdateRefs (impl/refs)",
						fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				seen[where] = true
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The scan found the allowed writers, so it looked where they are.
	for w := range allowedRefWriters {
		if !seen[w] {
			t.Errorf("no ref writer found in %s: update allowedRefWriters", w)
		}
	}
}
