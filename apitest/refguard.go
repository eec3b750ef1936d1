package apitest

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/store/gitstore"
)

// refsPackage is the one package allowed to move refs (see impl/refs).
const refsPackage = "repohost/impl/refs"

// refGuard wraps the git store of every test server and fails the test when
// anything but impl/refs moves a ref: UpdateRefs, the store's only ref
// writer, must be called from a frame of that package, and the calls that
// create repositories must leave them without branches (their first branch
// is impl/refs' to create).
type refGuard struct {
	gitstore.Repos
	t       testing.TB
	updates atomic.Int64
}

func (g *refGuard) UpdateRefs(repo *gitstore.GitRepo, updates []*gitstore.RefUpdate, decide func([]*gitstore.RefUpdate)) {
	g.updates.Add(1)
	if caller, ok := calledFrom(refsPackage); !ok {
		names := make([]string, 0, len(updates))
		for _, u := range updates {
			names = append(names, u.Name.String())
		}
		g.t.Errorf("refs %v moved outside %s, by %s", names, refsPackage, caller)
	}
	g.Repos.UpdateRefs(repo, updates, decide)
}

func (g *refGuard) Create(owner, name string, opts gitstore.InitOptions) (initial plumbing.Hash, err error) {
	initial, err = g.Repos.Create(owner, name, opts)
	if err == nil {
		g.expectNoBranch("Create", owner, name)
	}
	return initial, err
}

func (g *refGuard) CreateFromTemplate(src *gitstore.GitRepo, owner, name string, opts gitstore.InitOptions, content gitstore.TemplateContent) (initial plumbing.Hash, err error) {
	initial, err = g.Repos.CreateFromTemplate(src, owner, name, opts, content)
	if err == nil {
		g.expectNoBranch("CreateFromTemplate", owner, name)
	}
	return initial, err
}

func (g *refGuard) expectNoBranch(call, owner, name string) {
	// ReadHeads reads repositories of either object format.
	heads, err := g.Repos.ReadHeads(owner, name)
	if err != nil {
		g.t.Errorf("%s %s/%s: read heads: %v", call, owner, name, err)
		return
	}
	if len(heads.Branches) > 0 {
		g.t.Errorf("%s %s/%s wrote branches %v: only %s creates refs", call, owner, name, heads.Branches, refsPackage)
	}
}

// calledFrom tells whether the call stack has a frame of package pkg, and
// otherwise names the nearest caller outside this file.
func calledFrom(pkg string) (string, bool) {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	first := ""
	for {
		f, more := frames.Next()
		if first == "" {
			first = f.Function
		}
		// The function name is the package path, a dot, then the
		// function or method ("repohost/impl/refs.(*Service).Apply").
		if rest, ok := strings.CutPrefix(f.Function, pkg+"."); ok && rest != "" {
			return f.Function, true
		}
		if !more {
			return first, false
		}
	}
}

// RefWrites is the number of UpdateRefs calls the server made, so a test
// can check that the guard saw its writes.
func (e *Env) RefWrites() int64 { return e.guard.updates.Load() }

func (g *refGuard) CreateFork(ctx context.Context, src *gitstore.GitRepo, owner, name string, opts gitstore.InitOptions, tips []plumbing.Hash) error {
	err := g.Repos.CreateFork(ctx, src, owner, name, opts, tips)
	if err == nil {
		g.expectNoBranch("CreateFork", owner, name)
	}
	return err
}
