package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
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
//
// And it records the temporary files go-git creates. go-git's pack writer
// leaves its "objects/pack/tmp_pack_*" behind when a pack does not arrive
// whole (a client that hangs up, a body cut at its bound), so an aborted
// push of any size would cost its size in disk for good; ReadPush removes
// what the failed write left. One opened GitRepo serves one request, so
// the files recorded are this request's own and never another writer's.
type repoFS struct {
	billy.Filesystem
	root  string
	mu    sync.Mutex
	temps []string
}

func (fsys *repoFS) ReadDir(dir string) ([]os.FileInfo, error) {
	entries, err := os.ReadDir(filepath.Join(fsys.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	underRefs := dir == "refs" || strings.HasPrefix(filepath.ToSlash(dir), "refs/")
	infos := make([]os.FileInfo, 0, len(entries))
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
		infos = append(infos, fi)
	}
	return infos, nil
}

func (fsys *repoFS) TempFile(dir, prefix string) (billy.File, error) {
	f, err := fsys.Filesystem.TempFile(dir, prefix)
	if err == nil {
		fsys.mu.Lock()
		fsys.temps = append(fsys.temps, f.Name())
		fsys.mu.Unlock()
	}
	return f, err
}

// Capabilities and Chmod pass through what the wrapper would hide.
func (fsys *repoFS) Capabilities() billy.Capability { return billy.Capabilities(fsys.Filesystem) }

func (fsys *repoFS) Chmod(name string, mode os.FileMode) error {
	if c, ok := fsys.Filesystem.(billy.Chmod); ok {
		return c.Chmod(name, mode)
	}
	return nil
}

// mark is the point removeTempsSince later cleans up after.
func (fsys *repoFS) mark() int {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	return len(fsys.temps)
}

// removeTempsSince removes the temporary files created after mark that
// are still there (a completed pack was renamed away from its name).
func (fsys *repoFS) removeTempsSince(mark int) {
	fsys.mu.Lock()
	names := append([]string(nil), fsys.temps[mark:]...)
	fsys.mu.Unlock()
	for _, n := range names {
		_ = fsys.Remove(n)
	}
}
