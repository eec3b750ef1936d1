package app

import (
	"path/filepath"

	"repohost/store/objects"
)

// ObjectStores are the stores of each kind of large file. Each kind may
// live in a different place (a directory, a bucket), chosen at start.
type ObjectStores struct {
	// LFS holds Git LFS objects, keyed by their SHA-256 (see impl/lfs).
	LFS objects.Store
}

// LocalObjectStores keeps every kind under the data directory.
func LocalObjectStores(dataDir string) ObjectStores {
	return ObjectStores{
		LFS: objects.Local{Root: filepath.Join(dataDir, "lfs")},
	}
}
