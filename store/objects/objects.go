// Package objects keeps large opaque files by key: LFS objects, package
// blobs, release files, repository archives, avatars. A kind of object
// lives either on the local disk (the default) or in S3-compatible object
// storage, which several server processes can share. Rows in the database
// say what an object is; this package only holds its bytes.
package objects

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Store holds objects under keys: slash-separated relative paths such as
// "ab/cd/abcdef…", never "..", never absolute.
type Store interface {
	// Put stores the size bytes r yields under key, replacing any object
	// there. It streams (memory does not grow with size) and is all or
	// nothing: a failed or short put leaves no object behind.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Open reads the object under key; an error wrapping fs.ErrNotExist
	// when there is none.
	Open(ctx context.Context, key string) (Object, error)
	// Stat is the object's size; an error wrapping fs.ErrNotExist when
	// there is none.
	Stat(ctx context.Context, key string) (int64, error)
	// Delete removes the object; deleting a missing one is no error.
	Delete(ctx context.Context, key string) error
	// Walk calls fn with every object whose key starts with prefix, in no
	// particular order; an error from fn stops the walk and is returned.
	Walk(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error
	// URL is an address a client may fetch the object from directly for
	// ttl, served with name as its download file name; "" when the
	// backend has none (the local disk), and the server streams instead.
	URL(ctx context.Context, key, name string, ttl time.Duration) (string, error)
}

// Object is an open object: seekable, so that ranges and conditional
// requests can be served from it (http.ServeContent).
type Object interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// ErrBadKey is the answer to a key that is not a plain relative path.
var ErrBadKey = errors.New("objects: invalid key")

// ErrShort is the answer to a Put whose reader ended before size bytes,
// or went on after them.
var ErrShort = errors.New("objects: size does not match the content")

// checkKey refuses keys that could leave the store's root.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || strings.ContainsRune(key, 0) {
		return ErrBadKey
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return ErrBadKey
		}
	}
	return nil
}

// IsNotExist tells whether err says there is no such object.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// filePutter is a store that can take a finished local file whole (the
// local disk renames it into place instead of copying it).
type filePutter interface {
	PutFile(ctx context.Context, key, path string) error
}

// PutFile stores the local file at path under key. The file may be gone
// afterwards (moved into the store); the caller removes it if it is not.
func PutFile(ctx context.Context, s Store, key, path string) error {
	if fp, ok := s.(filePutter); ok {
		return fp.PutFile(ctx, key, path)
	}
	return putFromFile(ctx, s, key, path)
}

// putFromFile streams the file at path into s under key.
func putFromFile(ctx context.Context, s Store, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return s.Put(ctx, key, f, st.Size())
}

// DeletePrefix removes every object whose key starts with prefix (all of
// a repository's files, say). The keys are gathered first, so the store's
// listing is never changed while it is read.
func DeletePrefix(ctx context.Context, s Store, prefix string) error {
	var keys []string
	err := s.Walk(ctx, prefix, func(key string, _ int64, _ time.Time) error {
		keys = append(keys, key)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}
