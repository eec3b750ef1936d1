package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"repohost/store/objects"
)

// ObjectStores are the stores of each kind of large file. Each kind may
// live in a different place (a directory, a bucket), chosen at start.
type ObjectStores struct {
	// LFS holds Git LFS objects, keyed by their SHA-256 (see impl/lfs).
	LFS objects.Store
	// Packages holds the package registry's blobs under
	// "blobs/ab/cd/<sha256>" (see impl/packages).
	Packages objects.Store
	// Attachments holds release files under "<repo id>/<uuid>" (see
	// impl/release).
	Attachments objects.Store
	// Archives holds generated repository archives under
	// "<repo id>/<commit>/<name>" (see impl/contents).
	Archives objects.Store

	// Direct tells, per kind, whether downloads are redirected to the
	// store's own presigned address (objects.Store.URL) instead of being
	// streamed through the server.
	Direct DirectKinds
}

// DirectKinds are the kinds served straight from their store.
type DirectKinds struct {
	LFS, Packages, Attachments, Archives bool
}

// ObjectKinds are the kinds of large file, as named in the storage
// settings (and as the reference names its storage sections); each is
// also the directory under the data directory, or the base path in a
// shared bucket, that holds the kind.
var ObjectKinds = []string{"lfs", "packages", "attachments", "repo-archive"}

// LocalObjectStores keeps every kind under the data directory, where the
// server has always kept it.
func LocalObjectStores(dataDir string) ObjectStores {
	s, _ := OpenObjectStores(context.Background(), dataDir, StorageSettings{})
	return s
}

// StorageSettings choose where each kind of large file lives: Default
// for every kind that has no entry of its own in Kinds. Each is a
// storage address (ParseStorage); "" is the local data directory.
type StorageSettings struct {
	Default string
	Kinds   map[string]string
	// AccessKey and SecretKey are the credentials of S3 addresses that
	// carry none.
	AccessKey, SecretKey string
}

// StorageFromEnv reads the settings the environment gives besides the
// flags: REPOHOST_STORAGE_ACCESS_KEY_ID and REPOHOST_STORAGE_SECRET_ACCESS_KEY
// (or REPOHOST_STORAGE_SECRET_ACCESS_KEY_FILE, a file holding it).
func StorageFromEnv(s *StorageSettings) error {
	s.AccessKey = os.Getenv("REPOHOST_STORAGE_ACCESS_KEY_ID")
	s.SecretKey = os.Getenv("REPOHOST_STORAGE_SECRET_ACCESS_KEY")
	if file := os.Getenv("REPOHOST_STORAGE_SECRET_ACCESS_KEY_FILE"); file != "" && s.SecretKey == "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("storage secret key: %w", err)
		}
		s.SecretKey = strings.TrimSpace(string(b))
	}
	return nil
}

// StorageAddress is one parsed storage setting.
type StorageAddress struct {
	// S3 is nil for the local disk.
	S3 *objects.S3Config
	// Dir is the local directory ("" for the kind's default).
	Dir         string
	ServeDirect bool
}

// ParseStorage reads a storage address:
//
//   - "" or "local": the kind's directory under the data directory;
//   - "local:/some/dir": that directory;
//   - "http://KEY:SECRET@HOST:PORT/BUCKET[/BASE/PATH][?location=REGION&serve_direct=true]"
//     (https:// for TLS): an S3-compatible service. KEY:SECRET@ may be
//     left out for the credentials of StorageSettings.
//
// kind is the kind being configured; a shared default address keeps each
// kind under its own base path (BASE/PATH/kind/).
func ParseStorage(addr, kind string, shared bool, s StorageSettings) (StorageAddress, error) {
	switch {
	case addr == "" || addr == "local":
		return StorageAddress{}, nil
	case strings.HasPrefix(addr, "local:"):
		dir := strings.TrimPrefix(addr, "local:")
		if shared {
			dir = filepath.Join(dir, kind)
		}
		return StorageAddress{Dir: dir}, nil
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The address may hold a secret: never repeat it.
		return StorageAddress{}, fmt.Errorf("storage for %s: want local, local:DIR or http(s)://HOST/BUCKET[/BASE]", kind)
	}
	parts := strings.SplitN(strings.Trim(u.Path, "/"), "/", 2)
	if parts[0] == "" {
		return StorageAddress{}, fmt.Errorf("storage for %s: the address names no bucket", kind)
	}
	c := &objects.S3Config{Endpoint: u.Host, Bucket: parts[0], UseSSL: u.Scheme == "https",
		AccessKey: s.AccessKey, SecretKey: s.SecretKey}
	if len(parts) == 2 {
		c.BasePath = parts[1]
	}
	if shared {
		c.BasePath = strings.Trim(c.BasePath+"/"+kind, "/")
	}
	if u.User != nil {
		c.AccessKey = u.User.Username()
		c.SecretKey, _ = u.User.Password()
	}
	q := u.Query()
	c.Location = q.Get("location")
	direct := false
	if v := q.Get("serve_direct"); v != "" {
		if direct, err = strconv.ParseBool(v); err != nil {
			return StorageAddress{}, fmt.Errorf("storage for %s: serve_direct=%q is no boolean", kind, v)
		}
	}
	return StorageAddress{S3: c, ServeDirect: direct}, nil
}

// OpenObjectStores opens the store of each kind as the settings say,
// creating buckets that are missing.
func OpenObjectStores(ctx context.Context, dataDir string, s StorageSettings) (ObjectStores, error) {
	var out ObjectStores
	for _, kind := range ObjectKinds {
		addr, shared := s.Kinds[kind], false
		if addr == "" {
			addr, shared = s.Default, true
		}
		a, err := ParseStorage(addr, kind, shared, s)
		if err != nil {
			return out, err
		}
		var st objects.Store
		switch {
		case a.S3 != nil:
			if a.S3.AccessKey == "" || a.S3.SecretKey == "" {
				return out, errors.New("storage for " + kind + ": an S3 address needs an access key and a secret key")
			}
			if st, err = objects.NewS3(ctx, *a.S3); err != nil {
				return out, err
			}
		case a.Dir != "":
			st = objects.Local{Root: a.Dir}
		default:
			st = objects.Local{Root: filepath.Join(dataDir, kind)}
		}
		switch kind {
		case "lfs":
			out.LFS, out.Direct.LFS = st, a.ServeDirect
		case "packages":
			out.Packages, out.Direct.Packages = st, a.ServeDirect
		case "attachments":
			out.Attachments, out.Direct.Attachments = st, a.ServeDirect
		case "repo-archive":
			out.Archives, out.Direct.Archives = st, a.ServeDirect
		}
	}
	return out, nil
}
