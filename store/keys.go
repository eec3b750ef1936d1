package store

import (
	"context"
	"time"
)

// PublicKey is an SSH key of a user: it authenticates git over SSH as its
// owner.
type PublicKey struct {
	ID      int64
	OwnerID int64
	Name    string
	// Fingerprint is the key's SHA-256 fingerprint ("SHA256:..."), unique
	// among user keys.
	Fingerprint string
	// Content is the key as one authorized_keys line ("type base64").
	Content    string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// DeployKey is an SSH key that reaches one repository only, for fetching
// or, unless ReadOnly, pushing too. The same key may serve several
// repositories, one row each.
type DeployKey struct {
	ID          int64
	RepoID      int64
	Name        string
	Fingerprint string
	Content     string
	ReadOnly    bool
	CreatedAt   time.Time
}

// GPGKeyEmail is the address of one of a GPG key's identities; Verified
// when it is an activated address of the key's owner.
type GPGKeyEmail struct {
	Email    string `json:"email"`
	Verified bool   `json:"verified"`
}

// GPGKey is an OpenPGP public key of a user, or one of its subkeys
// (PrimaryKeyID set). A primary key row keeps the armored key it came
// from; every row keeps its own public key packet (Content, base64).
type GPGKey struct {
	ID                int64
	OwnerID           int64
	KeyID             string // 16 upper-case hex digits, unique
	PrimaryKeyID      string // "" for a primary key
	Content           string
	Armored           string
	Emails            []GPGKeyEmail `gorm:"serializer:json"`
	CanSign           bool
	CanCertify        bool
	CanEncryptComms   bool
	CanEncryptStorage bool
	// Verified: the owner proved they hold the private key (a signed
	// token) or one of the identities is an activated address of theirs.
	Verified  bool
	CreatedAt time.Time // the key's own creation time
	ExpiresAt *time.Time
	AddedAt   time.Time
	Subkeys   []*GPGKey `gorm:"-"`
}

// KeyStore reads and writes SSH keys, deploy keys and GPG keys.
type KeyStore interface {
	// CreatePublicKey fails with ErrDuplicate when the fingerprint or the
	// owner's title is taken.
	CreatePublicKey(ctx context.Context, k *PublicKey) error
	FindPublicKey(ctx context.Context, ownerID, id int64) (*PublicKey, error)
	FindPublicKeyByFingerprint(ctx context.Context, fingerprint string) (*PublicKey, error)
	// ListPublicKeys lists ownerID's keys, newest first; fingerprint, when
	// not empty, keeps the one key that has it.
	ListPublicKeys(ctx context.Context, ownerID int64, fingerprint string, p Page) ([]*PublicKey, int64, error)
	DeletePublicKey(ctx context.Context, ownerID, id int64) error
	// TouchPublicKey records that the key has just authenticated.
	TouchPublicKey(ctx context.Context, id int64, at time.Time) error

	// CreateDeployKey fails with ErrDuplicate when the repository has the
	// key or the title already.
	CreateDeployKey(ctx context.Context, k *DeployKey) error
	FindDeployKey(ctx context.Context, repoID, id int64) (*DeployKey, error)
	// FindDeployKeysByFingerprint lists every repository's deploy key with
	// that fingerprint.
	FindDeployKeysByFingerprint(ctx context.Context, fingerprint string) ([]*DeployKey, error)
	// ListDeployKeys lists repoID's deploy keys, newest first, optionally
	// only the one with id keyID or with the fingerprint.
	ListDeployKeys(ctx context.Context, repoID, keyID int64, fingerprint string, p Page) ([]*DeployKey, int64, error)
	DeleteDeployKey(ctx context.Context, repoID, id int64) error

	// CreateGPGKey stores k and its Subkeys; ErrDuplicate when one of
	// their key ids is registered already.
	CreateGPGKey(ctx context.Context, k *GPGKey) error
	// FindGPGKey finds ownerID's primary key id with its subkeys.
	FindGPGKey(ctx context.Context, ownerID, id int64) (*GPGKey, error)
	// FindGPGKeyByKeyID finds the key or subkey with keyID (any owner);
	// a subkey comes back as its primary key, subkeys loaded.
	FindGPGKeyByKeyID(ctx context.Context, keyID string) (*GPGKey, error)
	// FindGPGKeysByKeyIDs finds the primary keys (any owner, subkeys
	// loaded) that have one of keyIDs as their own id or a subkey's, in a
	// fixed number of statements.
	FindGPGKeysByKeyIDs(ctx context.Context, keyIDs []string) ([]*GPGKey, error)
	// ListGPGKeys lists ownerID's primary keys, newest first, with their
	// subkeys.
	ListGPGKeys(ctx context.Context, ownerID int64, p Page) ([]*GPGKey, int64, error)
	// DeleteGPGKey removes ownerID's primary key id and its subkeys.
	DeleteGPGKey(ctx context.Context, ownerID, id int64) error
	// MarkGPGKeyVerified sets Verified on ownerID's primary key id.
	MarkGPGKeyVerified(ctx context.Context, ownerID, id int64) error
}
