package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"repohost/store"
)

// notRegular are the modes whose "size" is not data the repository holds.
const notRegular = fs.ModeSymlink | fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// Size is the disk use of owner/name in bytes: the sum of the sizes of the
// regular files under its directory (objects, packs, refs, config), which
// is what the reference reports as a repository's size (it stores bytes
// and answers KiB). A file removed while the directory is walked (a lock,
// a temporary pack) is left out rather than failing the walk. It reads the
// whole directory tree, so callers store the result instead of asking for
// it on every request.
func (s *Store) Size(owner, name string) (int64, error) {
	p, err := s.Path(owner, name)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	var size int64
	err = filepath.WalkDir(p, func(_ string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.Mode()&notRegular == 0 {
			size += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return size, nil
}
