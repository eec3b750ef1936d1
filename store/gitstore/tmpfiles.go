package gitstore

import (
	"os"
	"sync"

	"github.com/go-git/go-billy/v5"
)

// tmpTracking is a repository's file system as go-git sees it, recording
// the temporary files go-git creates. go-git's pack writer leaves its
// "objects/pack/tmp_pack_*" behind when a pack does not arrive whole (a
// client that hangs up, a body cut at its bound), so an aborted push of
// any size would cost its size in disk for good; ReadPush removes what the
// failed write left. One opened GitRepo serves one request, so the files
// recorded are this request's own and never another writer's.
type tmpTracking struct {
	billy.Filesystem
	mu    sync.Mutex
	temps []string
}

func (fs *tmpTracking) TempFile(dir, prefix string) (billy.File, error) {
	f, err := fs.Filesystem.TempFile(dir, prefix)
	if err == nil {
		fs.mu.Lock()
		fs.temps = append(fs.temps, f.Name())
		fs.mu.Unlock()
	}
	return f, err
}

// Capabilities and Chmod pass through what the wrapper would hide.
func (fs *tmpTracking) Capabilities() billy.Capability { return billy.Capabilities(fs.Filesystem) }

func (fs *tmpTracking) Chmod(name string, mode os.FileMode) error {
	if c, ok := fs.Filesystem.(billy.Chmod); ok {
		return c.Chmod(name, mode)
	}
	return nil
}

// mark is the point removeTempsSince later cleans up after.
func (fs *tmpTracking) mark() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.temps)
}

// removeTempsSince removes the temporary files created after mark that
// are still there (a completed pack was renamed away from its name).
func (fs *tmpTracking) removeTempsSince(mark int) {
	fs.mu.Lock()
	names := append([]string(nil), fs.temps[mark:]...)
	fs.mu.Unlock()
	for _, n := range names {
		_ = fs.Remove(n)
	}
}
