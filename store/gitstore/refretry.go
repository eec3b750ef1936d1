package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/storer"
	"github.com/go-git/go-git/v6/storage/filesystem"
	"github.com/go-git/go-git/v6/storage/filesystem/dotgit"
)

// refReadAttempts bounds how long a reader waits out a ref being rewritten
// (about 1 ms per attempt).
const refReadAttempts = 200

// retryRefs is the repository storage with one correction: go-git rewrites
// a loose ref in place (truncate, then write) under a lock that readers do
// not take, so a concurrent reader can find the file empty. Branches and
// tags no longer are (casRef renames a complete lock file over them), but
// HEAD still is (SetDefaultBranch), and so is whatever another program
// writes that way. go-git then
// falls back to packed-refs and reports the ref missing (or, when listing,
// fails with dotgit.ErrEmptyRefFile). Reads through retryRefs wait for the
// writer instead of turning a busy branch into a 404 or a 500.
type retryRefs struct {
	*filesystem.Storage
	dir string
}

// beingWritten tells whether a ref that read as missing has a loose file,
// that is, whether the read raced a rewrite.
func (s retryRefs) beingWritten(name plumbing.ReferenceName) bool {
	fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(string(name))))
	return err == nil && fi.Mode().IsRegular()
}

// Reference reads one ref. A name go-git refuses to look up (one that
// would leave refs/, or holds a control character: "refs/heads/..",
// "refs/heads/a\x00b") cannot name an existing ref, so it reads as
// missing instead of failing.
func (s retryRefs) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	for i := 1; ; i++ {
		ref, err := s.Storage.Reference(name)
		if errors.Is(err, dotgit.ErrReferenceNameEscape) {
			return nil, fmt.Errorf("%w: %v", plumbing.ErrReferenceNotFound, err)
		}
		retry := errors.Is(err, dotgit.ErrEmptyRefFile) ||
			(errors.Is(err, plumbing.ErrReferenceNotFound) && s.beingWritten(name))
		if !retry || i == refReadAttempts {
			return ref, err
		}
		time.Sleep(time.Millisecond)
	}
}

func (s retryRefs) IterReferences() (storer.ReferenceIter, error) {
	for i := 1; ; i++ {
		it, err := s.Storage.IterReferences()
		if !errors.Is(err, dotgit.ErrEmptyRefFile) || i == refReadAttempts {
			return it, err
		}
		time.Sleep(time.Millisecond)
	}
}
