package contents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strconv"

	"repohost/impl/app"
	"repohost/store/gitstore"
	"repohost/store/objects"
)

// Archives of a whole commit are kept in Deps.Objects.Archives once made,
// under their repository's id, so the next download of the same commit is
// a copy instead of a walk of the tree (the reference keeps its
// repo-archive files the same way). The cron tasks archive_cleanup and
// delete_repo_archives remove them; a kept archive is never changed, only
// put whole, so a reader never sees half of one.

// archiveKey is where the archive of commit in format, with every path
// under prefix, is kept. The prefix (the repository's name) is part of the
// key: a renamed repository's archives differ.
func archiveKey(repoID int64, commit string, format gitstore.ArchiveFormat, prefix string) string {
	sum := sha256.Sum256([]byte(prefix))
	name := commit + "-" + hex.EncodeToString(sum[:4]) + "." + string(format)
	return strconv.FormatInt(repoID, 10) + "/" + name
}

// cachedArchive writes the kept archive at key to w when there is one;
// otherwise it writes build's output to w and keeps a copy (staged in a
// temporary file, then put in the store once the archive is complete).
// Failing to keep a copy (a full disk, an unreachable store) never fails
// the download.
func cachedArchive(ctx context.Context, d *app.Deps, w io.Writer, key string, build func(io.Writer) error) error {
	st := d.Objects.Archives
	if o, err := st.Open(ctx, key); err == nil {
		defer o.Close()
		_, err = io.Copy(w, o)
		return err
	} else if !objects.IsNotExist(err) {
		return build(w)
	}
	tmp, err := d.TempFile()
	if err != nil {
		return build(w)
	}
	defer os.Remove(tmp.Name()) // gone already when moved into place
	keep := true
	// Written to both as it is made; a copy that fails to write is
	// dropped, the client's stream goes on.
	err = build(io.MultiWriter(w, &dropOnError{w: tmp, keeping: &keep}))
	if cerr := tmp.Close(); cerr != nil {
		keep = false
	}
	if err == nil && keep {
		if perr := objects.PutFile(context.WithoutCancel(ctx), st, key, tmp.Name()); perr != nil {
			d.Log.WarnContext(ctx, "keep repository archive", "key", key, "err", perr)
		}
	}
	return err
}

// keptArchiveURL is the presigned address of the archive kept at key,
// named name, when the archives' store serves downloads direct and has it;
// "" otherwise (the archive is then streamed, and kept if it was not).
func keptArchiveURL(ctx context.Context, d *app.Deps, key, name string) string {
	if !d.Objects.Direct.Archives {
		return ""
	}
	if _, err := d.Objects.Archives.Stat(ctx, key); err != nil {
		return ""
	}
	u, err := d.Objects.Archives.URL(ctx, key, name, app.PresignTTL)
	if err != nil {
		d.Log.WarnContext(ctx, "presign a kept archive", "key", key, "err", err)
		return ""
	}
	return u
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
