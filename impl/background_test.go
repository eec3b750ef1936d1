package impl

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// TestConsumersRegisteredOnce: the outbox's consumers are registered by
// RegisterConsumers and nowhere else. Building the handlers, the services
// and the cron tasks registers none (as a side effect they would be
// registered twice, or only in some processes), and no other source file
// calls the bus's Register.
func TestConsumersRegisteredOnce(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlstore.Open(sqltest.DSN(t, dir), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := app.New(db, dir, auth.Hasher{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewHandler(d); err != nil {
		t.Fatal(err)
	}
	NewServices(d)
	if err := NewCron(d); err != nil {
		t.Fatal(err)
	}
	if got := d.Events.Consumers(); len(got) != 0 {
		t.Fatalf("building the server registered consumers: %v", got)
	}
	RegisterConsumers(d)
	if got, want := d.Events.Consumers(), []string{"log", "webhooks", "pull_refresh", "actions", "repo_size", "auto_merge", "repo_migrate", "mirror_sync", "push_mirror", "notifications", "commit_refs"}; !slices.Equal(got, want) {
		t.Fatalf("consumers %v, want %v", got, want)
	}

	// No call of a Register method whose argument is an events.Consumer
	// outside this package's RegisterConsumers.
	root := filepath.Join("..")
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case "gen", "models", "restapi", ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if ok && fn.Name.Name == "RegisterConsumers" && filepath.Base(path) == "background.go" && f.Name.Name == "impl" {
				return false // the one place
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Register" || len(call.Args) != 1 {
				return true
			}
			if registersConsumer(call.Args[0]) {
				t.Errorf("%s: a consumer is registered outside impl.RegisterConsumers", path)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// registersConsumer tells whether arg looks like an events.Consumer: a
// literal of it, or a call of something named Consumer or ending in
// Consumer (Service.Consumer(), RefreshConsumer(), events.Logger is
// named explicitly).
func registersConsumer(arg ast.Expr) bool {
	switch a := arg.(type) {
	case *ast.CompositeLit:
		if sel, ok := a.Type.(*ast.SelectorExpr); ok {
			return sel.Sel.Name == "Consumer"
		}
	case *ast.CallExpr:
		name := ""
		switch f := a.Fun.(type) {
		case *ast.SelectorExpr:
			name = f.Sel.Name
		case *ast.Ident:
			name = f.Name
		}
		return strings.HasSuffix(name, "Consumer") || name == "Logger"
	}
	return false
}
