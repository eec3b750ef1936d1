package contents

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"repohost/store/gitstore"
)

// Archives of a whole commit are kept under Deps.ArchiveDir once made, one
// directory per repository id, so the next download of the same commit is
// a file copy instead of a walk of the tree (the reference keeps its
// repo-archive files the same way). The cron tasks archive_cleanup and
// delete_repo_archives remove them; a kept file is never changed, only
// replaced whole by rename, so a reader never sees half of one.

// archivePath is where the archive of commit in format, with every path
// under prefix, is kept. The prefix (the repository's name) is part of the
// key: a renamed repository's archives differ.
func archivePath(dir string, repoID int64, commit string, format gitstore.ArchiveFormat, prefix string) string {
	sum := sha256.Sum256([]byte(prefix))
	name := commit + "-" + hex.EncodeToString(sum[:4]) + "." + string(format)
	return filepath.Join(dir, strconv.FormatInt(repoID, 10), name)
}

// cachedArchive writes the kept archive at path to w when there is one;
// otherwise it writes build's output to w and keeps a copy. Failing to keep
// a copy (a full disk) never fails the download.
func cachedArchive(w io.Writer, path string, build func(io.Writer) error) error {
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return build(w)
	}
	tmp, err := newTempBeside(path)
	if err != nil {
		return build(w)
	}
	keep := true
	defer func() {
		if keep {
			keep = tmp.Close() == nil && os.Rename(tmp.Name(), path) == nil
		}
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// Written to both as it is made; a copy that fails to write is
	// dropped, the client's stream goes on.
	err = build(io.MultiWriter(w, &dropOnError{w: tmp, keeping: &keep}))
	if err != nil {
		keep = false
	}
	return err
}

func newTempBeside(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return os.OpenFile(path+".tmp-"+hex.EncodeToString(b), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

// dropOnError writes to w until a write fails, then swallows the rest and
// clears *keeping (the copy is not kept).
type dropOnError struct {
	w       io.Writer
	keeping *bool
}

func (d *dropOnError) Write(p []byte) (int, error) {
	if *d.keeping {
		if _, err := d.w.Write(p); err != nil {
			*d.keeping = false
		}
	}
	return len(p), nil
}
