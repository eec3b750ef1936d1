package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// RefInfo is one ref with the id and type of the object it points at.
type RefInfo struct {
	Name plumbing.ReferenceName
	ID   plumbing.Hash
	// Type is "commit", "tag", "tree" or "blob".
	Type string
}

// Refs lists the refs whose full name starts with prefix (every ref when
// it is empty), sorted by name; symbolic refs (HEAD) are left out, as
// git for-each-ref does.
func (g *GitRepo) Refs(prefix string) ([]RefInfo, error) {
	it, err := g.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var out []RefInfo
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || !strings.HasPrefix(ref.Name().String(), "refs/") ||
			!strings.HasPrefix(ref.Name().String(), prefix) {
			return nil
		}
		typ := "commit"
		if obj, err := g.r.Storer.EncodedObject(plumbing.AnyObject, ref.Hash()); err == nil {
			typ = obj.Type().String()
		}
		out = append(out, RefInfo{Name: ref.Name(), ID: ref.Hash(), Type: typ})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// TreeEntryInfo is one entry of a tree listing: Path is relative to the
// listed tree (a subtree's entries carry their directory).
type TreeEntryInfo struct {
	Path string
	Mode filemode.FileMode
	ID   plumbing.Hash
	// Type is "blob", "tree" or "commit" (a submodule).
	Type string
	// Size is a blob's size, 0 for the others.
	Size int64
}

// ResolveTree finds the tree rev names: a tree id, or a commit id or ref
// whose tree it is (a tag is peeled to its commit).
func (g *GitRepo) ResolveTree(rev string) (*object.Tree, error) {
	if isHex(rev) && len(rev) == g.hexSize() {
		if t, err := g.r.TreeObject(plumbing.NewHash(strings.ToLower(rev))); err == nil {
			return t, nil
		}
	}
	res, err := g.Resolve(rev)
	if err != nil {
		return nil, err
	}
	t, err := res.Commit.Tree()
	if err != nil {
		return nil, notFound(err, "tree")
	}
	return t, nil
}

// TreeEntries lists t's entries in git's order (ls-tree), with those of
// its subtrees after each subtree when recursive is set (ls-tree -r -t).
// Blob sizes are read from the object headers only.
func (g *GitRepo) TreeEntries(t *object.Tree, recursive bool) ([]TreeEntryInfo, error) {
	var out []TreeEntryInfo
	var walk func(t *object.Tree, dir string) error
	walk = func(t *object.Tree, dir string) error {
		for _, e := range t.Entries {
			info := TreeEntryInfo{Path: dir + e.Name, Mode: e.Mode, ID: e.Hash}
			switch e.Mode {
			case filemode.Dir:
				info.Type = "tree"
			case filemode.Submodule:
				info.Type = "commit"
			default:
				info.Type = "blob"
				size, err := g.r.Storer.EncodedObjectSize(e.Hash)
				if err != nil {
					return notFound(err, "blob "+e.Hash.String())
				}
				info.Size = size
			}
			out = append(out, info)
			if recursive && info.Type == "tree" {
				sub, err := g.r.TreeObject(e.Hash)
				if err != nil {
					return notFound(err, "tree "+e.Hash.String())
				}
				if err := walk(sub, info.Path+"/"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(t, "")
}

// BlobByID reads the blob with id h whole when it is at most max bytes
// (content nil when larger) and tells its size.
func (g *GitRepo) BlobByID(h plumbing.Hash, max int64) (content []byte, size int64, err error) {
	b, err := g.r.BlobObject(h)
	if err != nil {
		return nil, 0, notFound(err, "blob "+h.String())
	}
	if b.Size > max {
		return nil, b.Size, nil
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, 0, err
	}
	defer rd.Close()
	content, err = io.ReadAll(rd)
	return content, b.Size, err
}

// AnnotatedTag reads the tag object with id h and the commit it finally
// points at (nil when it points at something else).
func (g *GitRepo) AnnotatedTag(h plumbing.Hash) (*object.Tag, *object.Commit, error) {
	t, err := g.r.TagObject(h)
	if err != nil {
		if errors.Is(err, plumbing.ErrInvalidType) {
			err = plumbing.ErrObjectNotFound
		}
		return nil, nil, notFound(err, "tag object "+h.String())
	}
	c, err := g.peel(t.Target)
	if err != nil && !errors.Is(err, ErrNotACommit) {
		return nil, nil, notFound(err, "tag target")
	}
	return t, c, nil
}

// WriteCommitDiff writes c as git shows it against its first parent
// (against the empty tree for a root commit): git diff's unified diff
// when patch is false, else git format-patch's mail.
func (g *GitRepo) WriteCommitDiff(ctx context.Context, w io.Writer, c *object.Commit, patch bool) error {
	var args []string
	switch {
	case patch && c.NumParents() == 0:
		args = []string{"format-patch", "--no-signature", "--stdout", "--root", "-1", c.Hash.String()}
	case patch:
		args = []string{"format-patch", "--no-signature", "--stdout", c.ParentHashes[0].String() + ".." + c.Hash.String()}
	case c.NumParents() == 0:
		// Everything the root commit adds, without its header.
		args = []string{"show", "--format=", "-M", "--no-color", "--no-ext-diff", c.Hash.String()}
	default:
		args = []string{"diff", "-M", "--no-color", "--no-ext-diff", c.ParentHashes[0].String(), c.Hash.String()}
	}
	out, _, err := g.run(ctx, nil, nil, append(args, "--")...)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	_, err = w.Write(out)
	return err
}

// ParseID reads a full object id (40 hexadecimal digits for SHA-1, 64 for
// SHA-256); ok is false for anything else.
func ParseID(s string) (plumbing.Hash, bool) {
	if (len(s) != 40 && len(s) != 64) || !isHex(s) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(strings.ToLower(s)), true
}
