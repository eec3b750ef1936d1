package gitstore

import (
	"context"
	"io"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/store"
)

// Repos is the bare-repository store as the rest of the program sees it
// (app.Deps.Git). *Store implements it; tests wrap it to watch what the
// program does to repositories.
//
// UpdateRefs is the only method that moves a branch, tag or other ref, and
// only impl/refs calls it. The rest writes whole repositories (create,
// delete, rename), objects without refs (Create and CreateFromTemplate
// return their first commit for impl/refs to publish), or HEAD's symbolic
// ref (SetDefaultBranch). An opened GitRepo reads, and writes objects only.
type Repos interface {
	// Root is the directory that holds every repository.
	Root() string
	// Path is the directory of owner/name, never outside Root.
	Path(owner, name string) (string, error)
	// SupportsObjectFormat tells whether "sha1" or "sha256" repositories
	// can be created.
	SupportsObjectFormat(format string) bool

	Create(owner, name string, opts InitOptions) (initial plumbing.Hash, err error)
	CreateFromTemplate(src *GitRepo, owner, name string, opts InitOptions, content TemplateContent) (initial plumbing.Hash, err error)
	// CreateFork makes a bare repository with the objects of src reachable
	// from tips and no ref.
	CreateFork(ctx context.Context, src *GitRepo, owner, name string, opts InitOptions, tips []plumbing.Hash) error
	Delete(owner, name string) error
	// Reinit replaces owner/name, which must hold no ref, with a new
	// empty repository made as opts says (a migration taking its
	// source's object format).
	Reinit(owner, name string, opts InitOptions) error
	Rename(owner, name, newOwner, newName string) error
	RenameOwner(owner, newOwner string) error
	SetDefaultBranch(owner, name, branch string) error
	HasBranch(owner, name, branch string) (bool, error)
	// Size is the repository's disk use in bytes (see Store.Size); it
	// walks the directory, so its result is stored, not asked per request.
	Size(owner, name string) (int64, error)
	OpenGit(owner, name string) (*GitRepo, error)
	// ReadHeads reads a directory's object format, HEAD and branches,
	// whatever its format (OpenGit opens only SHA-1 repositories).
	ReadHeads(owner, name string) (Heads, error)
	// UploadPack serves a fetch with git's own upload-pack (see
	// Store.UploadPack); it only reads.
	UploadPack(ctx context.Context, owner, name string, mode UploadPackMode, protocol string, in io.Reader, out, clientErr io.Writer) error

	RepoDirs() ([]store.RepoDir, error)
	IsRepoDir(owner, name string) (bool, error)
	DeleteStray(owner, name string, stillStray func() (bool, error)) error

	// LockRepo keeps maintenance (exclusive) and ref changes (shared) of
	// one repository apart, across processes (see Store.LockRepo).
	LockRepo(ctx context.Context, owner, name string, exclusive bool) (unlock func(), err error)

	// UpdateRefs is the one primitive that moves refs (see Store.UpdateRefs).
	UpdateRefs(g *GitRepo, updates []*RefUpdate, decide func(open []*RefUpdate))
}

var _ Repos = (*Store)(nil)
