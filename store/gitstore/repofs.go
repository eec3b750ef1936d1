package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v6"
)

// repoFS is a repository's directory as go-git sees it, with two
// corrections for a repository that other requests write meanwhile.
//
// Listing a directory survives its entries coming and going. billy's
// ReadDir stats every entry after reading the names and fails the whole
// listing when one vanished in between; go-git takes that failure for the
// directory itself being gone, so a branch list taken while another
// request dropped a "refs/heads/<name>.lock" came back without any branch
// (an API create answered "Git Repository is empty."). Here an entry that
// vanished is left out, and under refs/ the "*.lock" files (git's ref
// locks, never refs: no ref name ends in ".lock") are not listed at all,
// so a walk never reads a lock as an empty ref either.
type repoFS struct {
	billy.Filesystem
	root string
}

func (fsys *repoFS) ReadDir(dir string) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(filepath.Join(fsys.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	underRefs := dir == "refs" || strings.HasPrefix(filepath.ToSlash(dir), "refs/")
	infos := make([]fs.DirEntry, 0, len(entries))
	for _, e := range entries {
		if underRefs && strings.HasSuffix(e.Name(), ".lock") && !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the names were read
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, fs.FileInfoToDirEntry(fi))
	}
	return infos, nil
}

// Capabilities and Chmod pass through what the wrapper would hide.
func (fsys *repoFS) Capabilities() billy.Capability { return billy.Capabilities(fsys.Filesystem) }

func (fsys *repoFS) Chmod(name string, mode os.FileMode) error {
	if c, ok := fsys.Filesystem.(billy.Chmod); ok {
		return c.Chmod(name, mode)
	}
	return nil
}
