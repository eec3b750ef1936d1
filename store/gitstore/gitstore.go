// Package gitstore keeps bare git repositories on disk, one directory per
// repository at <root>/<owner>/<name>.git, all through go-git.
package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/storer"
	"github.com/go-git/go-git/v6/x/fdpool"

	"repohost/store"
)

// Store manages the repositories under one root directory.
type Store struct {
	root string
	// uploadSlots holds a token per stateless upload-pack under way
	// (see uploadPackSlots).
	uploadSlots chan struct{}
	// receiveSlots holds a token per push storing its pack (see
	// GitRepo.unpack); the same bound as uploadSlots, for the same
	// reason: the work is git's, bound by CPU and disk.
	receiveSlots chan struct{}
	// Locker, when set, takes LockRepo's lock in the database instead of
	// on a file: on PostgreSQL, whose processes may serve one shared
	// repository directory from several hosts, where a file lock may
	// not hold (see LockRepo).
	Locker store.Locker
	// packFiles bounds the pack, index and reverse-index files that the
	// repositories opened (one go-git storage per request) keep open:
	// the least recently used beyond its capacity are closed.
	packFiles *fdpool.Pool
}

// New returns a Store rooted at root, creating the directory if needed.
func New(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create repositories root: %w", err)
	}
	return &Store{root: abs, uploadSlots: make(chan struct{}, uploadPackSlots()), receiveSlots: make(chan struct{}, uploadPackSlots()), packFiles: fdpool.New(packFileSlots)}, nil
}

// packFileSlots is the capacity of Store.packFiles. Each request opens
// the repository anew, so a file left open serves no later request: the
// pool only needs to cover the files in use at once (three a pack), and
// bounds the rest.
const packFileSlots = 128

// Root is the directory that holds every repository.
func (s *Store) Root() string { return s.root }

// ErrBadName means a name would leave the repositories root or is not a plain
// path segment. impl validates names first; this is the last line of defence.
var ErrBadName = errors.New("invalid repository path segment")

func segment(name string) (string, error) {
	n := strings.ToLower(name)
	if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`+"\x00") || strings.HasPrefix(n, ".") {
		return "", fmt.Errorf("%q: %w", name, ErrBadName)
	}
	return n, nil
}

// Path is the directory of owner/name. It never points outside the root.
func (s *Store) Path(owner, name string) (string, error) {
	o, err := segment(owner)
	if err != nil {
		return "", err
	}
	n, err := segment(name)
	if err != nil {
		return "", err
	}
	p := filepath.Join(s.root, o, n+".git")
	if !strings.HasPrefix(p, s.root+string(filepath.Separator)) {
		return "", ErrBadName
	}
	return p, nil
}

// InitOptions shape a new repository.
type InitOptions struct {
	DefaultBranch string
	ObjectFormat  string // "sha1" (default) or "sha256"
	// Files, when not empty, become the first commit on DefaultBranch.
	Files         map[string]string
	CommitMessage string
	Author        object.Signature
	// Signer, when set, signs the first commit.
	Signer CommitSigner
}

// CommitSigner signs the commits the server writes (the instance key):
// Sign sets c's signature over the rest of c.
type CommitSigner interface {
	Sign(c *object.Commit) error
}

// writeCommit stores c, first signed by signer when there is one.
func writeCommit(s storer.EncodedObjectStorer, c *object.Commit, signer CommitSigner) (plumbing.Hash, error) {
	if signer != nil {
		if err := signer.Sign(c); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("sign commit: %w", err)
		}
	}
	obj := s.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// Create makes a bare repository whose HEAD names opts.DefaultBranch. With
// opts.Files it also writes them as a root commit and returns that commit,
// which no branch points at yet: impl/refs creates the branch. It fails
// with store.ErrDuplicate if the directory already exists, and leaves
// nothing behind when it fails.
func (s *Store) Create(owner, name string, opts InitOptions) (initial plumbing.Hash, err error) {
	if err := s.create(owner, name, opts); err != nil {
		return plumbing.ZeroHash, err
	}
	if len(opts.Files) == 0 {
		return plumbing.ZeroHash, nil
	}
	defer func() {
		if err != nil {
			_ = s.Delete(owner, name)
		}
	}()
	g, err := s.OpenGit(owner, name)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return commitFiles(g.r, opts)
}

// create makes the empty bare repository.
func (s *Store) create(owner, name string, opts InitOptions) (err error) {
	path, err := s.Path(owner, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create owner directory: %w", err)
	}
	// Mkdir, not a Stat beforehand, claims the path: it fails when anything
	// is already there, so two concurrent creates cannot both proceed and the
	// cleanup below never removes a directory someone else made.
	if err := os.Mkdir(path, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("repository directory %s/%s: %w", owner, name, store.ErrDuplicate)
		}
		return fmt.Errorf("create repository directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(path)
		}
	}()
	if opts.ObjectFormat == FormatSHA256 {
		return initSHA256(path, opts.DefaultBranch)
	}
	repo, err := git.PlainInit(path, true, git.WithDefaultBranch(plumbing.NewBranchReferenceName(opts.DefaultBranch)))
	if err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	return allowHTTPPush(repo)
}

// allowHTTPPush marks the repository as served over smart HTTP.
func allowHTTPPush(repo *git.Repository) error {
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	cfg.Raw.Section("http").SetOption("receivepack", "true")
	return repo.Storer.SetConfig(cfg)
}

// commitFiles writes opts.Files as a single root commit.
func commitFiles(repo *git.Repository, opts InitOptions) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for name, content := range opts.Files {
		obj := repo.Storer.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write([]byte(content)); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := repo.Storer.SetEncodedObject(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	sortTreeEntries(entries)
	tree := &object.Tree{Entries: entries}
	treeObj := repo.Storer.NewEncodedObject()
	if err := tree.Encode(treeObj); err != nil {
		return plumbing.ZeroHash, err
	}
	treeHash, err := repo.Storer.SetEncodedObject(treeObj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// The caller's clock dates the commit (opts.Author.When).
	sig := opts.Author
	commit := &object.Commit{Author: sig, Committer: sig, Message: opts.CommitMessage, TreeHash: treeHash}
	return writeCommit(repo.Storer, commit, opts.Signer)
}

// sortTreeEntries orders entries as git requires for plain files (by name).
func sortTreeEntries(e []object.TreeEntry) {
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j-1].Name > e[j].Name; j-- {
			e[j-1], e[j] = e[j], e[j-1]
		}
	}
}

// Delete removes the repository directory; a missing one is not an error.
func (s *Store) Delete(owner, name string) error {
	path, err := s.Path(owner, name)
	if err != nil {
		return err
	}
	return os.RemoveAll(path)
}

// Reinit replaces owner/name with a new empty repository (see
// Repos.Reinit); it refuses, with store.ErrConflict, a repository that
// has a ref.
func (s *Store) Reinit(owner, name string, opts InitOptions) error {
	g, err := s.OpenGit(owner, name)
	if err != nil {
		return err
	}
	refs, err := g.r.Storer.IterReferences()
	if err != nil {
		return err
	}
	hasRef := false
	if err := refs.ForEach(func(r *plumbing.Reference) error {
		hasRef = hasRef || r.Type() == plumbing.HashReference
		return nil
	}); err != nil {
		return err
	}
	if hasRef {
		return fmt.Errorf("reinit %s/%s: the repository has refs: %w", owner, name, store.ErrConflict)
	}
	if err := s.Delete(owner, name); err != nil {
		return err
	}
	return s.create(owner, name, opts)
}

// Rename moves a repository to a new owner and/or name.
func (s *Store) Rename(owner, name, newOwner, newName string) error {
	from, err := s.Path(owner, name)
	if err != nil {
		return err
	}
	to, err := s.Path(newOwner, newName)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("repository directory %s/%s: %w", newOwner, newName, store.ErrDuplicate)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	// A concurrent move (two transfers of one repository) can take the
	// source away or fill the target between the check and the move.
	err = os.Rename(from, to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("repository directory %s/%s: %w", owner, name, store.ErrNotFound)
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, fs.ErrExist):
		return fmt.Errorf("repository directory %s/%s: %w", newOwner, newName, store.ErrDuplicate)
	}
	return err
}

// RenameOwner moves every repository of an owner after the owner is renamed.
func (s *Store) RenameOwner(owner, newOwner string) error {
	o, err := segment(owner)
	if err != nil {
		return err
	}
	n, err := segment(newOwner)
	if err != nil {
		return err
	}
	from, to := filepath.Join(s.root, o), filepath.Join(s.root, n)
	if from == to {
		return nil
	}
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("owner directory %s: %w", newOwner, store.ErrDuplicate)
	}
	return os.Rename(from, to)
}

// SetDefaultBranch points HEAD at branch.
func (s *Store) SetDefaultBranch(owner, name, branch string) error {
	path, err := s.Path(owner, name)
	if err != nil {
		return err
	}
	repo, err := git.PlainOpen(path)
	if err != nil {
		return fmt.Errorf("open repository: %w", err)
	}
	head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))
	return repo.Storer.SetReference(head)
}

// HasBranch tells whether the branch exists; a name no branch can have
// does not.
func (s *Store) HasBranch(owner, name, branch string) (bool, error) {
	g, err := s.OpenGit(owner, name)
	if err != nil {
		return false, err
	}
	h, err := g.BranchHash(branch)
	return !h.IsZero(), err
}
