package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// TemplateContent is what a generated repository takes from its template.
type TemplateContent struct {
	// Commit, when not nil, is the template commit whose tree becomes the
	// new repository's first and only commit on InitOptions.DefaultBranch.
	Commit *object.Commit
	// Hooks copies the template's hooks directory.
	Hooks bool
	// Omit lists file paths of the tree left out of the copy.
	Omit map[string]bool
	// Rewrite, when set, sees every regular file's path and content and
	// may return new content (changed true) to store instead.
	Rewrite func(path string, content []byte) (out []byte, changed bool)
}

// CreateFromTemplate makes owner/name from src: an empty repository, then
// the template tree as a fresh root commit by opts.Author with
// opts.CommitMessage, then the hooks. It returns that commit (zero without
// content.Commit), which no branch points at yet: impl/refs creates
// opts.DefaultBranch. Like Create it refuses an existing directory, and it
// leaves nothing behind when it fails.
func (s *Store) CreateFromTemplate(src *GitRepo, owner, name string, opts InitOptions, content TemplateContent) (initial plumbing.Hash, err error) {
	opts.Files = nil
	if err := s.create(owner, name, opts); err != nil {
		return plumbing.ZeroHash, err
	}
	defer func() {
		if err != nil {
			_ = s.Delete(owner, name)
		}
	}()
	dst, err := s.OpenGit(owner, name)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if content.Commit != nil {
		tree := content.Commit.TreeHash
		if content.Rewrite == nil && len(content.Omit) == 0 {
			err = copyTree(src, dst, tree)
		} else {
			tree, _, err = rewriteTree(src, dst, tree, "", content)
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("copy template tree: %w", err)
		}
		sig := opts.Author
		c := &object.Commit{Author: sig, Committer: sig, Message: opts.CommitMessage, TreeHash: tree}
		if initial, err = writeCommit(dst.r.Storer, c, opts.Signer); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if content.Hooks {
		if err := copyHooks(filepath.Join(src.path, "hooks"), filepath.Join(dst.path, "hooks")); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("copy template hooks: %w", err)
		}
	}
	return initial, nil
}

// copyTree copies the tree and everything below it that dst lacks. Objects
// are content-addressed, so the copy has the same hash.
func copyTree(src, dst *GitRepo, tree plumbing.Hash) error {
	seen := map[plumbing.Hash]bool{}
	var walk func(h plumbing.Hash, isTree bool) error
	walk = func(h plumbing.Hash, isTree bool) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		if dst.r.Storer.HasEncodedObject(h) == nil {
			return nil
		}
		obj, err := src.r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return notFound(err, "object "+h.String())
		}
		if _, err := dst.r.Storer.SetEncodedObject(obj); err != nil {
			return err
		}
		if !isTree {
			return nil
		}
		t, err := object.DecodeTree(src.r.Storer, obj)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			switch e.Mode {
			case filemode.Submodule:
				// A gitlink names a commit of another repository;
				// there is nothing to copy.
			case filemode.Dir:
				if err := walk(e.Hash, true); err != nil {
					return err
				}
			default:
				if err := walk(e.Hash, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(tree, true)
}

// maxRewrite bounds the files Rewrite is shown; bigger ones are copied as
// they are.
const maxRewrite = 10 << 20

// rewriteTree copies the tree at dir like copyTree, leaving out
// content.Omit and storing what content.Rewrite changes. A directory left
// empty is dropped (empty is true). Entry names do not change, so the
// source's order stays valid.
func rewriteTree(src, dst *GitRepo, tree plumbing.Hash, dir string, content TemplateContent) (h plumbing.Hash, empty bool, err error) {
	t, err := src.r.TreeObject(tree)
	if err != nil {
		return plumbing.ZeroHash, false, notFound(err, "tree "+dir)
	}
	entries := make([]object.TreeEntry, 0, len(t.Entries))
	for _, e := range t.Entries {
		p := e.Name
		if dir != "" {
			p = dir + "/" + e.Name
		}
		if content.Omit[p] {
			continue
		}
		switch e.Mode {
		case filemode.Dir:
			sub, subEmpty, err := rewriteTree(src, dst, e.Hash, p, content)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if subEmpty {
				continue
			}
			e.Hash = sub
		case filemode.Submodule:
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			h, err := rewriteBlob(src, dst, e.Hash, p, content.Rewrite)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			e.Hash = h
		default: // symbolic links: blobs, copied as they are
			if err := copyBlobObject(src, dst, e.Hash); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 && dir != "" {
		return plumbing.ZeroHash, true, nil
	}
	obj := dst.r.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err = dst.r.Storer.SetEncodedObject(obj)
	return h, false, err
}

// rewriteBlob copies one file, through rewrite when it changes it.
func rewriteBlob(src, dst *GitRepo, h plumbing.Hash, p string, rewrite func(string, []byte) ([]byte, bool)) (plumbing.Hash, error) {
	if rewrite != nil {
		if size, err := src.r.Storer.EncodedObjectSize(h); err == nil && size <= maxRewrite {
			data, err := src.ReadBlob(h)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if out, changed := rewrite(p, data); changed {
				obj := dst.r.Storer.NewEncodedObject()
				obj.SetType(plumbing.BlobObject)
				w, err := obj.Writer()
				if err != nil {
					return plumbing.ZeroHash, err
				}
				if _, err := w.Write(out); err != nil {
					return plumbing.ZeroHash, err
				}
				if err := w.Close(); err != nil {
					return plumbing.ZeroHash, err
				}
				return dst.r.Storer.SetEncodedObject(obj)
			}
		}
	}
	return h, copyBlobObject(src, dst, h)
}

// copyBlobObject copies one object that is not a tree.
func copyBlobObject(src, dst *GitRepo, h plumbing.Hash) error {
	if dst.r.Storer.HasEncodedObject(h) == nil {
		return nil
	}
	obj, err := src.r.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return notFound(err, "object "+h.String())
	}
	_, err = dst.r.Storer.SetEncodedObject(obj)
	return err
}

// copyHooks copies the regular files under from into to, keeping their
// modes. Symbolic links are skipped, so a template cannot make the new
// repository point outside itself.
func copyHooks(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == from {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
