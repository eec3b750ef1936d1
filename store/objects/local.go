package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Local keeps objects as files under a directory: each put is written to
// a temporary file beside them and renamed into place, so a reader never
// sees half an object.
type Local struct {
	Root string
}

// tmpDir is where puts are written before they are renamed into place; a
// key never starts with it, since keys are never hidden names.
func (l Local) tmpDir() string { return filepath.Join(l.Root, ".tmp") }

func (l Local) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if strings.HasPrefix(key, ".tmp/") || key == ".tmp" {
		return "", ErrBadKey
	}
	return filepath.Join(l.Root, filepath.FromSlash(key)), nil
}

func (l Local) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	final, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.tmpDir(), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(l.tmpDir(), "put-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone already once renamed
	n, err := io.Copy(f, io.LimitReader(r, size+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%w: %d bytes, want %d", ErrShort, n, size)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return placeFile(f.Name(), final)
}

// placeFile renames the file at tmp to final, making final's directory.
// A Delete may remove that directory, emptied, in between: then it is
// made again.
func placeFile(tmp, final string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			return err
		}
		if err = os.Rename(tmp, final); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if _, serr := os.Stat(tmp); serr != nil {
			return err // the source is gone, not the directory
		}
	}
	return err
}

// localObject is an open file with the size and time it had when opened.
type localObject struct {
	*os.File
	size int64
	mod  time.Time
}

func (o localObject) Size() int64        { return o.size }
func (o localObject) ModTime() time.Time { return o.mod }

func (l Local) Open(_ context.Context, key string) (Object, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return localObject{File: f, size: st.Size(), mod: st.ModTime()}, nil
}

func (l Local) Stat(_ context.Context, key string) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	if st.IsDir() {
		return 0, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return st.Size(), nil
}

func (l Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Directories the removal left empty go too, up to the root (a
	// removal fails, as meant, while a directory holds anything).
	for dir := filepath.Dir(p); dir != l.Root && strings.HasPrefix(dir, l.Root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

func (l Local) Walk(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error {
	// Only the directory holding the prefix's last complete part is read.
	start := l.Root
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		dir, err := l.path(prefix[:i])
		if err != nil {
			return err
		}
		start = dir
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the root does not exist yet, or went meanwhile
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(l.Root, p)
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if key == ".tmp" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return fn(key, info.Size(), info.ModTime())
	})
	return err
}

// URL is always "": files on the local disk are streamed by the server.
func (Local) URL(context.Context, string, string, time.Duration) (string, error) { return "", nil }

// RemoveStaleTemp removes puts left behind by a process that died while
// writing, older than age.
func (l Local) RemoveStaleTemp(age time.Duration, now time.Time) error {
	entries, err := os.ReadDir(l.tmpDir())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < age {
			continue
		}
		if err := os.Remove(filepath.Join(l.tmpDir(), e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// PutFile moves the file at path into place when it is on the same file
// system as the store, and copies it otherwise.
func (l Local) PutFile(ctx context.Context, key, path string) error {
	final, err := l.path(key)
	if err != nil {
		return err
	}
	if err := placeFile(path, final); err == nil {
		return nil
	}
	return putFromFile(ctx, l, key, path)
}
