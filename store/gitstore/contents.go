package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	formatcfg "github.com/go-git/go-git/v6/plumbing/format/config"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v6/osfs"
	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/cache"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/storage/filesystem"

	"repohost/store"
)

// Errors of file changes that are the caller's fault; impl answers 422.
var (
	ErrBadPath       = errors.New("invalid file path")
	ErrFileExists    = errors.New("a file already exists at this path")
	ErrPathConflict  = errors.New("the path crosses or names a non-file entry")
	ErrSHAMismatch   = errors.New("sha does not match the file's current sha")
	ErrBranchExists  = errors.New("branch already exists")
	ErrTagExists     = errors.New("tag already exists")
	ErrNotACommit    = errors.New("the reference does not name a commit")
	errEmptyPathPart = errors.New("empty path segment")
)

// GitRepo is one opened repository, so a request that reads several things
// opens it once.
type GitRepo struct {
	r    *git.Repository
	path string
	fs   *repoFS
	// inspectLimit overrides maxInspectCommits (tests).
	inspectLimit int
	// receiveSlots is its Store's bound on pushes unpacking at once (nil:
	// none).
	receiveSlots chan struct{}
	// q, on the view of a push being received, is its quarantine, and
	// main the repository opened without it (see withQuarantine).
	q    *quarantine
	main *GitRepo
	// format is the object format (FormatSHA1 or FormatSHA256).
	format string
}

// Memory bounds of one opened repository (one request): objects larger
// than streamThreshold (blobs, in practice) stream from disk; the others
// are cached up to objectCacheSize, enough for the trees and commits a
// history walk rereads. Without them go-git loads every object whole and
// caches up to 96 MiB per open, so parallel downloads of a large file
// held a copy of it each.
const (
	streamThreshold = 1 << 20
	objectCacheSize = 16 * cache.MiByte
)

// OpenGit opens owner/name; a missing directory is store.ErrNotFound.
func (s *Store) OpenGit(owner, name string) (*GitRepo, error) {
	p, err := s.Path(owner, name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	// As git.PlainOpen does for a bare repository, but with ref reads that
	// survive a concurrent ref update (see retryRefs and repoFS), and
	// bounded memory: an object over streamThreshold is read from disk as
	// it is consumed, never loaded or cached whole, and the cache of the
	// others is small.
	fs := &repoFS{Filesystem: osfs.New(p), root: p}
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{LargeObjectThreshold: streamThreshold, Pool: s.packFiles})
	r, err := git.Open(retryRefs{Storage: st, dir: p}, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	// The storage read extensions.objectFormat when it was made: the ids
	// it computes tell the format without reading the config again.
	format := FormatSHA1
	if st.NewEncodedObject().Hash().Size() == formatcfg.SHA256Size {
		format = FormatSHA256
	}
	return &GitRepo{r: r, path: p, fs: fs, receiveSlots: s.receiveSlots, format: format}, nil
}

// formatName is FormatSHA256 for go-git's SHA-256, else FormatSHA1.
func formatName(of formatcfg.ObjectFormat) string {
	if of == formatcfg.SHA256 {
		return FormatSHA256
	}
	return FormatSHA1
}

// ObjectFormat is the repository's object format: FormatSHA1 or
// FormatSHA256.
func (g *GitRepo) ObjectFormat() string { return g.format }

// formatConfig is the repository's object format as go-git names it.
func (g *GitRepo) formatConfig() formatcfg.ObjectFormat {
	if g.format == FormatSHA256 {
		return formatcfg.SHA256
	}
	return formatcfg.SHA1
}

// hexSize is the number of hexadecimal digits of the repository's object
// ids: 40 or 64.
func (g *GitRepo) hexSize() int {
	if g.format == FormatSHA256 {
		return 64
	}
	return 40
}

// notFound maps go-git's many "missing" errors to store.ErrNotFound, so a
// missing ref or path never becomes a 500.
func notFound(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, plumbing.ErrObjectNotFound),
		errors.Is(err, object.ErrFileNotFound), errors.Is(err, object.ErrDirectoryNotFound),
		errors.Is(err, object.ErrEntryNotFound), errors.Is(err, git.ErrRepositoryNotExists):
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	case errors.Is(err, plumbing.ErrInvalidType), errors.Is(err, object.ErrUnsupportedObject):
		return fmt.Errorf("%s: %w", what, ErrNotACommit)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// CleanTreePath checks a path inside a repository: slash-separated
// segments, none of them empty, ".", ".." or ".git", no control character
// (NUL to 0x1f, DEL) and no backslash, and nothing else go-git refuses to
// look up in a tree (".git" as NTFS or HFS+ would read it, "git~1"), so a
// path it accepts can be read and written without a go-git error. Leading
// and trailing slashes are ignored; "" is the root.
func CleanTreePath(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", fmt.Errorf("%q: %w", p, ErrBadPath)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.EqualFold(seg, ".git") {
			return "", fmt.Errorf("%q: %w", p, ErrBadPath)
		}
	}
	// Looking the path up in an empty tree touches no storage; it fails
	// with "not found" exactly when go-git accepts the path at all.
	if _, err := new(object.Tree).FindEntry(p); !errors.Is(err, object.ErrEntryNotFound) && !errors.Is(err, object.ErrDirectoryNotFound) {
		return "", fmt.Errorf("%q: %w", p, ErrBadPath)
	}
	return p, nil
}

// RefKind tells what a ref name turned out to be.
type RefKind string

const (
	RefBranch RefKind = "branch"
	RefTag    RefKind = "tag"
	RefCommit RefKind = "commit"
)

// Resolved is a ref name resolved to a commit.
type Resolved struct {
	Name   string // the branch or tag name, or the full commit id
	Kind   RefKind
	Commit *object.Commit
}

// DefaultBranch is the branch HEAD names ("" if HEAD is not symbolic).
func (g *GitRepo) DefaultBranch() string {
	head, err := g.r.Storer.Reference(plumbing.HEAD)
	if err != nil || head.Type() != plumbing.SymbolicReference || !head.Target().IsBranch() {
		return ""
	}
	return head.Target().Short()
}

// IsEmpty tells whether the repository has no branch at all.
func (g *GitRepo) IsEmpty() (bool, error) {
	it, err := g.r.Branches()
	if err != nil {
		return false, err
	}
	defer it.Close()
	_, err = it.Next()
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// peel follows annotated tags to the commit they name.
func (g *GitRepo) peel(h plumbing.Hash) (*object.Commit, error) {
	for i := 0; i < 10; i++ {
		obj, err := g.r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return object.DecodeCommit(g.r.Storer, obj)
		case plumbing.TagObject:
			t, err := object.DecodeTag(g.r.Storer, obj)
			if err != nil {
				return nil, err
			}
			h = t.Target
		default:
			return nil, ErrNotACommit
		}
	}
	return nil, ErrNotACommit
}

// Peel is the commit h names, following annotated tags (a pushed tag's
// new id may be a tag object).
func (g *GitRepo) Peel(h plumbing.Hash) (*object.Commit, error) {
	c, err := g.peel(h)
	if err != nil {
		return nil, notFound(err, "commit "+h.String())
	}
	return c, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// Resolve turns a branch, tag or commit id (full or abbreviated to at least
// 4 digits) into a commit; "" means the default branch. Branches win over
// tags, and both over commit ids, as in the reference.
func (g *GitRepo) Resolve(ref string) (*Resolved, error) {
	if ref == "" {
		ref = g.DefaultBranch()
		if ref == "" {
			return nil, fmt.Errorf("default branch: %w", store.ErrNotFound)
		}
	}
	if ValidRefName(plumbing.NewBranchReferenceName(ref)) == nil {
		if r, err := g.r.Storer.Reference(plumbing.NewBranchReferenceName(ref)); err == nil {
			c, err := g.peel(r.Hash())
			if err != nil {
				return nil, notFound(err, "branch "+ref)
			}
			return &Resolved{Name: ref, Kind: RefBranch, Commit: c}, nil
		}
		if r, err := g.r.Storer.Reference(plumbing.NewTagReferenceName(ref)); err == nil {
			c, err := g.peel(r.Hash())
			if err != nil {
				return nil, notFound(err, "tag "+ref)
			}
			return &Resolved{Name: ref, Kind: RefTag, Commit: c}, nil
		}
	}
	if len(ref) >= 4 && len(ref) <= g.hexSize() && isHex(ref) {
		var h plumbing.Hash
		if len(ref) == g.hexSize() {
			h = plumbing.NewHash(strings.ToLower(ref))
		} else {
			// Abbreviated ids are looked up by go-git's revision parser, fed
			// only hex digits, so no other revision syntax gets through.
			p, err := g.r.ResolveRevision(plumbing.Revision(strings.ToLower(ref)))
			if err != nil {
				return nil, notFound(plumbing.ErrObjectNotFound, "commit "+ref)
			}
			h = *p
		}
		c, err := g.r.CommitObject(h)
		if err != nil {
			return nil, notFound(err, "commit "+ref)
		}
		return &Resolved{Name: c.Hash.String(), Kind: RefCommit, Commit: c}, nil
	}
	return nil, fmt.Errorf("ref %q: %w", ref, store.ErrNotFound)
}

// SplitRefPath reads "<ref>/<path>" the way the reference reads raw-file
// paths without a ref parameter: the shortest leading part that names a
// branch, else one that names a tag, else a leading commit id. ok is false
// when no prefix is a ref.
func (g *GitRepo) SplitRefPath(p string) (ref, rest string, ok bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for _, kind := range []func(string) plumbing.ReferenceName{plumbing.NewBranchReferenceName, plumbing.NewTagReferenceName} {
		for i := 1; i < len(segs); i++ {
			cand := strings.Join(segs[:i], "/")
			name := kind(cand)
			if ValidRefName(name) != nil {
				continue
			}
			if _, err := g.r.Storer.Reference(name); err == nil {
				return cand, strings.Join(segs[i:], "/"), true
			}
		}
	}
	if len(segs) > 1 && len(segs[0]) >= 7 && len(segs[0]) <= 64 && isHex(segs[0]) {
		if res, err := g.Resolve(segs[0]); err == nil && res.Kind == RefCommit {
			return segs[0], strings.Join(segs[1:], "/"), true
		}
	}
	return "", "", false
}

// EntryType is the kind of a tree entry as the contents API names it.
type EntryType string

const (
	EntryFile      EntryType = "file"
	EntryDir       EntryType = "dir"
	EntrySymlink   EntryType = "symlink"
	EntrySubmodule EntryType = "submodule"
)

// Entry is one file, directory, symlink or submodule in a tree.
type Entry struct {
	Path string // full path from the root; "" for the root itself
	Name string
	Type EntryType
	Mode filemode.FileMode
	Hash plumbing.Hash
	Size int64 // blobs only
}

func entryType(m filemode.FileMode) EntryType {
	switch m {
	case filemode.Dir:
		return EntryDir
	case filemode.Symlink:
		return EntrySymlink
	case filemode.Submodule:
		return EntrySubmodule
	}
	return EntryFile
}

func (g *GitRepo) newEntry(dir string, te object.TreeEntry) (*Entry, error) {
	e := &Entry{Path: path.Join(dir, te.Name), Name: te.Name, Type: entryType(te.Mode), Mode: te.Mode, Hash: te.Hash}
	if e.Type == EntryFile || e.Type == EntrySymlink {
		size, err := g.r.Storer.EncodedObjectSize(te.Hash)
		if err != nil {
			return nil, notFound(err, "blob "+e.Path)
		}
		e.Size = size
	}
	return e, nil
}

// Lookup finds p ("" for the root) in c's tree.
func (g *GitRepo) Lookup(c *object.Commit, p string) (*Entry, error) {
	root, err := c.Tree()
	if err != nil {
		return nil, notFound(err, "tree")
	}
	if p == "" {
		return &Entry{Type: EntryDir, Mode: filemode.Dir, Hash: root.Hash}, nil
	}
	te, err := root.FindEntry(p)
	if err != nil {
		return nil, notFound(err, "path "+p)
	}
	return g.newEntry(path.Dir(p), *te)
}

// ReadDir lists the directory dir ("" for the root) of c, in tree order.
func (g *GitRepo) ReadDir(c *object.Commit, dir string) ([]*Entry, error) {
	t, err := g.dirTree(c, dir)
	if err != nil {
		return nil, err
	}
	out := make([]*Entry, 0, len(t.Entries))
	for _, te := range t.Entries {
		e, err := g.newEntry(dir, te)
		if err != nil {
			return nil, err
		}
		if dir == "" {
			e.Path = te.Name
		}
		out = append(out, e)
	}
	return out, nil
}

func (g *GitRepo) dirTree(c *object.Commit, dir string) (*object.Tree, error) {
	root, err := c.Tree()
	if err != nil {
		return nil, notFound(err, "tree")
	}
	if dir == "" {
		return root, nil
	}
	t, err := root.Tree(dir)
	if err != nil {
		return nil, notFound(err, "directory "+dir)
	}
	return t, nil
}

// Blob opens a blob for reading.
func (g *GitRepo) Blob(h plumbing.Hash) (io.ReadCloser, int64, error) {
	b, err := g.r.BlobObject(h)
	if err != nil {
		return nil, 0, notFound(err, "blob")
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, 0, err
	}
	return rd, b.Size, nil
}

// ReadBlob reads a whole blob.
func (g *GitRepo) ReadBlob(h plumbing.Hash) ([]byte, error) {
	rd, _, err := g.Blob(h)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// maxHistoryWalk bounds the commits LastCommits inspects, so one request
// cannot walk an enormous history; entries not settled by then get none.
const maxHistoryWalk = 5000

// LastCommits finds, for each name in directory dir, the newest commit on
// the first-parent history of head that changed it. One walk serves the
// whole directory, however many entries it lists.
func (g *GitRepo) LastCommits(head *object.Commit, dir string, names []string) (map[string]*object.Commit, error) {
	out := make(map[string]*object.Commit, len(names))
	pending := make(map[string]bool, len(names))
	for _, n := range names {
		pending[n] = true
	}
	entriesOf := func(c *object.Commit) map[string]object.TreeEntry {
		t, err := g.dirTree(c, dir)
		if err != nil {
			return nil
		}
		m := make(map[string]object.TreeEntry, len(t.Entries))
		for _, e := range t.Entries {
			m[e.Name] = e
		}
		return m
	}
	c := head
	cur := entriesOf(c)
	for steps := 0; c != nil && len(pending) > 0 && steps < maxHistoryWalk; steps++ {
		var parent *object.Commit
		var prev map[string]object.TreeEntry
		if c.NumParents() > 0 {
			p, err := c.Parent(0)
			if err != nil {
				return nil, notFound(err, "parent commit")
			}
			parent = p
			prev = entriesOf(p)
		}
		for n := range pending {
			now, ok := cur[n]
			if !ok {
				// Absent here although present at head: only a merge can do
				// that; the first-parent walk cannot place it.
				delete(pending, n)
				continue
			}
			before, had := prev[n]
			if !had || before.Hash != now.Hash || before.Mode != now.Mode {
				out[n] = c
				delete(pending, n)
			}
		}
		c, cur = parent, prev
	}
	return out, nil
}

// FileOp is the change ChangeFile makes.
type FileOp int

const (
	OpCreate FileOp = iota
	OpUpdate
	OpDelete
)

// FileChange describes one commit that creates, updates or deletes a file.
type FileChange struct {
	Op FileOp
	// Branch is the branch to build on ("" for the default branch).
	Branch string
	// NewBranch, when set, is the branch meant to receive the commit
	// instead of Branch; it must not exist unless Force is set.
	NewBranch string
	Force     bool
	Path      string // cleaned with CleanTreePath
	// FromPath, for an update, is the file's current path when it moves.
	FromPath string
	Content  []byte
	// SHA is the blob id the caller believes the file has (update, delete).
	SHA       string
	Author    object.Signature
	Committer object.Signature
	Message   string
	// Signer, when set, signs the commit.
	Signer CommitSigner
}

// ChangeResult is the commit ChangeFile wrote and the ref update that
// would publish it.
type ChangeResult struct {
	Commit *object.Commit
	// Branch receives the commit: NewBranch, else Branch.
	Branch string
	// Old is where Branch pointed when the commit was built (zero when
	// it is to be created): the old value of the compare-and-swap.
	Old plumbing.Hash
	// Entry is the file after the change; nil after a delete.
	Entry *Entry
	// WasEmpty tells that the commit is the repository's first.
	WasEmpty bool
}

// Update is the ref update that publishes the commit on Branch.
func (res *ChangeResult) Update() *RefUpdate {
	return &RefUpdate{Name: plumbing.NewBranchReferenceName(res.Branch), Old: res.Old, New: res.Commit.Hash}
}

// ChangeFile writes a single commit with one file added, replaced, moved or
// removed, on top of the branch's tip. It writes objects only: the branch
// is moved by impl/refs, with a compare-and-swap from res.Old, so a branch
// that moved meanwhile loses nothing.
func (g *GitRepo) ChangeFile(fc FileChange) (*ChangeResult, error) {
	if fc.Path == "" {
		return nil, ErrBadPath
	}
	base := fc.Branch
	if base == "" {
		base = g.DefaultBranch()
	}
	target := base
	if fc.NewBranch != "" {
		target = fc.NewBranch
	}
	res := &ChangeResult{Branch: target}

	var parent *object.Commit
	var baseTree *object.Tree
	baseRef, err := g.r.Storer.Reference(plumbing.NewBranchReferenceName(base))
	switch {
	case err == nil:
		if parent, err = g.r.CommitObject(baseRef.Hash()); err != nil {
			return nil, notFound(err, "branch "+base)
		}
		if baseTree, err = parent.Tree(); err != nil {
			return nil, notFound(err, "tree")
		}
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		empty, eErr := g.IsEmpty()
		if eErr != nil {
			return nil, eErr
		}
		// Only the first commit of an empty repository may start from
		// nothing; elsewhere a missing branch is a missing branch.
		if !empty || fc.Op != OpCreate {
			return nil, fmt.Errorf("branch %s: %w", base, store.ErrNotFound)
		}
		res.WasEmpty = true
	default:
		return nil, err
	}

	if target == base {
		if baseRef != nil {
			res.Old = baseRef.Hash()
		}
	} else {
		cur, err := g.r.Storer.Reference(plumbing.NewBranchReferenceName(target))
		switch {
		case err == nil:
			if !fc.Force {
				return nil, fmt.Errorf("branch %s: %w", target, ErrBranchExists)
			}
			res.Old = cur.Hash()
		case !errors.Is(err, plumbing.ErrReferenceNotFound):
			return nil, err
		}
	}

	treeHash, entry, err := g.applyChange(baseTree, fc)
	if err != nil {
		return nil, err
	}
	msg := fc.Message
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	commit := &object.Commit{Author: fc.Author, Committer: fc.Committer, Message: msg, TreeHash: treeHash}
	if parent != nil {
		commit.ParentHashes = []plumbing.Hash{parent.Hash}
	}
	h, err := writeCommit(g.r.Storer, commit, fc.Signer)
	if err != nil {
		return nil, err
	}
	if res.Commit, err = g.r.CommitObject(h); err != nil {
		return nil, err
	}
	res.Entry = entry
	return res, nil
}

// applyChange checks fc against tree (nil: empty) and writes the new tree.
func (g *GitRepo) applyChange(tree *object.Tree, fc FileChange) (plumbing.Hash, *Entry, error) {
	find := func(p string) (*object.TreeEntry, error) {
		if tree == nil {
			return nil, object.ErrEntryNotFound
		}
		return tree.FindEntry(p)
	}
	var err error
	switch fc.Op {
	case OpCreate:
		if err := g.mustBeFree(find, fc.Path); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	case OpUpdate, OpDelete:
		from := fc.Path
		if fc.Op == OpUpdate && fc.FromPath != "" {
			from = fc.FromPath
		}
		te, ferr := find(from)
		if ferr != nil {
			return plumbing.ZeroHash, nil, notFound(ferr, "file "+from)
		}
		if te.Mode == filemode.Dir || te.Mode == filemode.Submodule {
			return plumbing.ZeroHash, nil, fmt.Errorf("%s: %w", from, ErrPathConflict)
		}
		if !strings.EqualFold(te.Hash.String(), fc.SHA) {
			return plumbing.ZeroHash, nil, fmt.Errorf("%s [given: %s, expected: %s]: %w", from, fc.SHA, te.Hash, ErrSHAMismatch)
		}
		if fc.Op == OpDelete {
			h, _, err := g.editTree(tree, strings.Split(from, "/"), nil)
			return h, nil, err
		}
		mode := te.Mode
		if from != fc.Path {
			if err := g.mustBeFree(find, fc.Path); err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if tree, err = g.treeAfter(tree, from); err != nil {
				return plumbing.ZeroHash, nil, err
			}
		}
		return g.putBlob(tree, fc.Path, mode, fc.Content)
	}
	return g.putBlob(tree, fc.Path, filemode.Regular, fc.Content)
}

// mustBeFree fails unless nothing exists at p.
func (g *GitRepo) mustBeFree(find func(string) (*object.TreeEntry, error), p string) error {
	te, err := find(p)
	switch {
	case err == nil && te.Mode == filemode.Dir:
		return fmt.Errorf("%s: %w", p, ErrPathConflict)
	case err == nil:
		return fmt.Errorf("%s: %w", p, ErrFileExists)
	}
	return nil
}

// treeAfter is tree with p removed, as a tree object.
func (g *GitRepo) treeAfter(tree *object.Tree, p string) (*object.Tree, error) {
	h, _, err := g.editTree(tree, strings.Split(p, "/"), nil)
	if err != nil {
		return nil, err
	}
	return g.r.TreeObject(h)
}

func (g *GitRepo) putBlob(tree *object.Tree, p string, mode filemode.FileMode, content []byte) (plumbing.Hash, *Entry, error) {
	obj := g.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	blob, err := g.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	leaf := &object.TreeEntry{Mode: mode, Hash: blob}
	h, _, err := g.editTree(tree, strings.Split(p, "/"), leaf)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return h, &Entry{Path: p, Name: path.Base(p), Type: entryType(mode), Mode: mode, Hash: blob, Size: int64(len(content))}, nil
}

// editTree stores a copy of tree (nil: empty) in which parts names leaf,
// or nothing when leaf is nil, and returns its id; empty tells that the
// resulting tree has no entries (an emptied subdirectory disappears).
func (g *GitRepo) editTree(tree *object.Tree, parts []string, leaf *object.TreeEntry) (h plumbing.Hash, empty bool, err error) {
	if len(parts) == 0 || parts[0] == "" {
		return plumbing.ZeroHash, false, errEmptyPathPart
	}
	var entries []object.TreeEntry
	if tree != nil {
		entries = append(entries, tree.Entries...)
	}
	idx := -1
	for i := range entries {
		if entries[i].Name == parts[0] {
			idx = i
			break
		}
	}
	remove := func() { entries = append(entries[:idx], entries[idx+1:]...) }
	if len(parts) == 1 {
		switch {
		case leaf == nil && idx < 0:
			return plumbing.ZeroHash, false, fmt.Errorf("%s: %w", parts[0], store.ErrNotFound)
		case leaf == nil:
			remove()
		case idx >= 0:
			entries[idx] = object.TreeEntry{Name: parts[0], Mode: leaf.Mode, Hash: leaf.Hash}
		default:
			entries = append(entries, object.TreeEntry{Name: parts[0], Mode: leaf.Mode, Hash: leaf.Hash})
		}
	} else {
		var sub *object.Tree
		if idx >= 0 {
			if entries[idx].Mode != filemode.Dir {
				return plumbing.ZeroHash, false, fmt.Errorf("%s is not a directory: %w", parts[0], ErrPathConflict)
			}
			if sub, err = g.r.TreeObject(entries[idx].Hash); err != nil {
				return plumbing.ZeroHash, false, notFound(err, "tree")
			}
		} else if leaf == nil {
			return plumbing.ZeroHash, false, fmt.Errorf("%s: %w", parts[0], store.ErrNotFound)
		}
		subHash, subEmpty, err := g.editTree(sub, parts[1:], leaf)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		switch {
		case subEmpty && idx >= 0:
			remove()
		case subEmpty:
		case idx >= 0:
			entries[idx].Hash = subHash
		default:
			entries = append(entries, object.TreeEntry{Name: parts[0], Mode: filemode.Dir, Hash: subHash})
		}
	}
	// Git orders entries by name, comparing a directory as if its name
	// ended in "/".
	sort.Slice(entries, func(i, j int) bool { return treeSortKey(entries[i]) < treeSortKey(entries[j]) })
	t := &object.Tree{Entries: entries}
	obj := g.r.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err = g.r.Storer.SetEncodedObject(obj)
	return h, len(entries) == 0, err
}

func treeSortKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// SymlinkTarget reads a symlink entry's target.
func (g *GitRepo) SymlinkTarget(e *Entry) (string, error) {
	b, err := g.ReadBlob(e.Hash)
	return string(bytes.TrimRight(b, "\n")), err
}
