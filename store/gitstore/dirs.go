package gitstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"repohost/store"
)

// RepoDirs lists every "<owner>/<name>.git" directory under the root, sorted,
// as lower-case names without the suffix. Symbolic links and hidden entries
// are skipped at both levels, so the walk never leaves the root.
func (s *Store) RepoDirs() ([]store.RepoDir, error) {
	owners, err := os.ReadDir(s.root)
	if err != nil {
		return nil, err
	}
	var out []store.RepoDir
	for _, o := range owners {
		if !o.IsDir() || strings.HasPrefix(o.Name(), ".") {
			continue // ReadDir reports a symlink as a symlink, not a dir
		}
		repos, err := os.ReadDir(filepath.Join(s.root, o.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile
			}
			return nil, err
		}
		for _, r := range repos {
			name, ok := strings.CutSuffix(r.Name(), ".git")
			if !r.IsDir() || !ok || name == "" || strings.HasPrefix(name, ".") {
				continue
			}
			out = append(out, store.RepoDir{Owner: o.Name(), Name: name})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// IsRepoDir tells whether owner/name is a real directory (not a symbolic
// link, at either level) under the root.
func (s *Store) IsRepoDir(owner, name string) (bool, error) {
	p, err := s.Path(owner, name)
	if err != nil {
		return false, err
	}
	for _, dir := range []string{filepath.Dir(p), p} {
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.IsDir() {
			return false, nil
		}
	}
	return true, nil
}

// DeleteStray removes the directory of owner/name, which has no repository
// row. The directory is first moved aside (an atomic rename inside the
// owner's directory); only if stillStray then confirms that no repository
// claimed the name meanwhile is it removed, otherwise it is moved back. So a
// concurrent adoption never loses its files.
func (s *Store) DeleteStray(owner, name string, stillStray func() (bool, error)) error {
	ok, err := s.IsRepoDir(owner, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("repository directory %s/%s: %w", owner, name, store.ErrNotFound)
	}
	p, _ := s.Path(owner, name)
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	// A leading dot keeps the parked directory out of RepoDirs and of any
	// name Path can produce.
	parked := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".deleting-"+hex.EncodeToString(suffix))
	if err := os.Rename(p, parked); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("repository directory %s/%s: %w", owner, name, store.ErrNotFound)
		}
		return err
	}
	stray, err := stillStray()
	if err != nil || !stray {
		if rbErr := os.Rename(parked, p); rbErr != nil {
			return fmt.Errorf("restore %s/%s after an aborted delete: %w", owner, name, rbErr)
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("repository %s/%s was adopted meanwhile: %w", owner, name, store.ErrConflict)
	}
	return os.RemoveAll(parked)
}
