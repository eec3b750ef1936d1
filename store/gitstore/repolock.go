package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"repohost/store"
)

// repoLockFile is the file in a repository's directory that LockRepo
// locks. Git ignores files it does not know in a bare repository.
const repoLockFile = "repohost.lock"

// LockRepo takes the lock that keeps maintenance (git gc and the like,
// exclusive) and ref changes with the objects they bring (shared) of
// owner/name apart, and returns its release. Shared holders run together;
// an exclusive one waits for them all and keeps them waiting until it
// releases. It waits until ctx ends.
//
// Without a Locker it is an flock(2) lock on a file in the repository's
// directory, so it holds between goroutines and between processes of one
// host alike, and the kernel releases the lock of a process that dies. With
// one (PostgreSQL: processes on several hosts may share the repository
// directory over a network file system, where flock may be local to each
// host or refused) it is the database's advisory lock on the repository's
// name, held on a connection of its own while git works (no transaction).
func (s *Store) LockRepo(ctx context.Context, owner, name string, exclusive bool) (unlock func(), err error) {
	dir, err := s.Path(owner, name)
	if err != nil {
		return nil, err
	}
	if s.Locker != nil {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
		}
		return s.Locker.Lock(ctx, "repo:"+strings.ToLower(owner)+"/"+strings.ToLower(name), !exclusive)
	}
	f, err := os.OpenFile(filepath.Join(dir, repoLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	// Non-blocking attempts, so that waiting ends with ctx; the pause
	// grows to a quarter second, short against a gc's duration.
	pause := 5 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s/%s: %w", owner, name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
	// Closing the file releases the lock.
	return func() { f.Close() }, nil
}
