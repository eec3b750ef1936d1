package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/cache"
	"github.com/go-git/go-git/v6/storage"
	"github.com/go-git/go-git/v6/storage/filesystem"
	"github.com/go-git/go-git/v6/storage/filesystem/dotgit"

	"github.com/go-git/go-billy/v6/osfs"
)

// quarantine is where a push's objects wait until one of its ref updates
// is accepted, as git's receive-pack keeps them: a temporary object
// directory inside the repository's objects directory (so moving its
// files in is a rename), which git reads with the repository's own objects
// as its alternate (GIT_OBJECT_DIRECTORY and
// GIT_ALTERNATE_OBJECT_DIRECTORIES). Nothing but the push that made it
// reads it; a push whose every update is refused removes it, leaving the
// repository's objects as they were.
type quarantine struct {
	root    string // <repo>/objects/incoming-*: removed at the end
	objects string // root/objects: the object directory git writes
	main    string // the repository's objects directory
	sto     *filesystem.ObjectStorage

	mu       sync.Mutex
	migrated bool
	removed  bool
}

// quarantinePrefix names a quarantine's directory in objects/ (git's own
// receive-pack uses the same prefix, so one sweep covers both).
const quarantinePrefix = "incoming-"

// RemoveQuarantines deletes the quarantines left in the repository at
// dir by pushes that never ended (the process was killed), returning how
// many. The caller must hold the repository with no push under way (the
// maintenance lock), since a live push's quarantine looks the same.
func RemoveQuarantines(dir string) (int, error) {
	objects := filepath.Join(dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), quarantinePrefix) {
			if err := os.RemoveAll(filepath.Join(objects, e.Name())); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// newQuarantine makes an empty quarantine for g's repository.
func (g *GitRepo) newQuarantine() (*quarantine, error) {
	main := filepath.Join(g.path, "objects")
	root, err := os.MkdirTemp(main, quarantinePrefix)
	if err != nil {
		return nil, err
	}
	q := &quarantine{root: root, objects: filepath.Join(root, "objects"), main: main}
	if err := os.MkdirAll(filepath.Join(q.objects, "pack"), 0o755); err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	of := g.formatConfig()
	q.sto = filesystem.NewObjectStorageWithOptions(
		dotgit.NewWithOptions(osfs.New(root), dotgit.Options{ObjectFormat: of, ReadReverseIndex: true, WriteReverseIndex: true}),
		cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{LargeObjectThreshold: streamThreshold, ObjectFormat: of})
	return q, nil
}

// env is what a git process needs to see the quarantined objects with the
// repository's; nil once they are in the repository (or gone).
func (q *quarantine) env() []string {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.migrated || q.removed {
		return nil
	}
	return []string{"GIT_OBJECT_DIRECTORY=" + q.objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + q.main}
}

// active tells whether the quarantine's objects are still only there.
func (q *quarantine) active() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.migrated && !q.removed
}

// migrate moves the quarantined objects into the repository, as git's
// tmp_objdir_migrate does: a file the repository has already stays as it
// is (the new copy is dropped), and in the pack directory the index of a
// pack comes last, so no reader sees an index without its pack.
// Migrating twice is a no-op.
func (q *quarantine) migrate() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.migrated || q.removed {
		return nil
	}
	if err := migrateDir(q.objects, q.main); err != nil {
		return err
	}
	q.migrated = true
	_ = os.RemoveAll(q.root)
	return nil
}

func migrateDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	// Packs before their indexes (".idx" last), directories last.
	rank := func(e fs.DirEntry) int {
		switch {
		case e.IsDir():
			return 3
		case strings.HasSuffix(e.Name(), ".idx"):
			return 2
		case strings.HasSuffix(e.Name(), ".pack"):
			return 0
		}
		return 1
	}
	sort.SliceStable(entries, func(i, j int) bool { return rank(entries[i]) < rank(entries[j]) })
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			if err := migrateDir(from, to); err != nil {
				return err
			}
			continue
		}
		// A hard link never replaces a file that is there already.
		if err := os.Link(from, to); err != nil && !errors.Is(err, fs.ErrExist) {
			if err := os.Rename(from, to); err != nil {
				return fmt.Errorf("move %s into the repository: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// remove drops the quarantine and whatever it still holds.
func (q *quarantine) remove() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.removed {
		q.removed = true
		_ = os.RemoveAll(q.root)
	}
}

// quarantineStorer reads objects from a push's quarantine first, then
// from the repository; everything else (references, configuration) is
// the repository's. Once the quarantine is migrated or removed only the
// repository is read.
type quarantineStorer struct {
	storage.Storer
	q *quarantine
}

// SupportsExtension is the repository's (go-git opens a SHA-256
// repository only through a storage that supports extensions.objectFormat).
func (s quarantineStorer) SupportsExtension(name, value string) bool {
	c, ok := s.Storer.(interface{ SupportsExtension(name, value string) bool })
	return ok && c.SupportsExtension(name, value)
}

func (s quarantineStorer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if s.q.active() {
		if o, err := s.q.sto.EncodedObject(t, h); err == nil {
			return o, nil
		}
	}
	return s.Storer.EncodedObject(t, h)
}

func (s quarantineStorer) HasEncodedObject(h plumbing.Hash) error {
	if s.q.active() && s.q.sto.HasEncodedObject(h) == nil {
		return nil
	}
	return s.Storer.HasEncodedObject(h)
}

func (s quarantineStorer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if s.q.active() {
		if n, err := s.q.sto.EncodedObjectSize(h); err == nil {
			return n, nil
		}
	}
	return s.Storer.EncodedObjectSize(h)
}

// withQuarantine returns a view of g that reads q's objects as well as
// the repository's (go-git and the git processes it runs alike) and
// moves them into the repository before it applies a ref update
// (Store.UpdateRefs).
func (g *GitRepo) withQuarantine(q *quarantine) (*GitRepo, error) {
	q.sto.Reindex()
	r, err := git.Open(quarantineStorer{Storer: g.r.Storer, q: q}, nil)
	if err != nil {
		return nil, err
	}
	v := *g
	v.r, v.q, v.main = r, q, g
	return &v, nil
}

// admit moves a quarantined push's objects into the repository (a no-op
// for a repository opened without one) and lets the repository see them.
func (g *GitRepo) admit() error {
	if g.q == nil {
		return nil
	}
	if err := g.q.migrate(); err != nil {
		return err
	}
	g.main.reindex()
	return nil
}

// reindex makes g see packs added since it was opened.
func (g *GitRepo) reindex() {
	if ri, ok := g.r.Storer.(interface{ Reindex() }); ok {
		ri.Reindex()
	}
}

// gitEnv is the environment of a git process run on g.
func (g *GitRepo) gitEnv(extra ...string) []string {
	env := append(os.Environ(), extra...)
	return append(env, g.q.env()...)
}

// checkConnected tells whether every object the tips reach is in the
// quarantine or the repository, as git's receive-pack checks a push
// before it moves any ref.
func (g *GitRepo) checkConnected(ctx context.Context, tips []plumbing.Hash) error {
	if len(tips) == 0 {
		return nil
	}
	var in strings.Builder
	for _, h := range tips {
		in.WriteString(h.String() + "\n")
	}
	_, _, err := g.run(ctx, strings.NewReader(in.String()), nil, "rev-list", "--objects", "--stdin", "--not", "--all", "--quiet")
	return err
}
