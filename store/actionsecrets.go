package store

import (
	"context"
	"time"
)

// ActionScope is where an Actions secret or variable belongs: a
// repository (RepoID set) or an organization or user (OwnerID set), never
// both. A repository's secrets are not its owner's: the owner's reach the
// repository's tasks only by resolution (ActionSecretStore.ForRepo).
type ActionScope struct {
	OwnerID int64
	RepoID  int64
}

// ActionSecret is a secret as it is listed: its value is written, opened
// for a task and never read back anywhere else.
type ActionSecret struct {
	ID          int64
	Scope       ActionScope
	Name        string // upper case
	Description string
	CreatedAt   time.Time
}

// ActionVariable is an Actions variable; its value is readable by whoever
// may manage its scope.
type ActionVariable struct {
	ID          int64
	Scope       ActionScope
	Name        string // upper case
	Data        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ActionSecretStore keeps Actions secrets, their values sealed with the
// instance secret key.
type ActionSecretStore interface {
	// Put creates the scope's secret called s.Name with value, or replaces
	// the value and description of the one that exists; created tells
	// which.
	Put(ctx context.Context, s *ActionSecret, value string) (created bool, err error)
	// Delete removes the scope's secret name; ErrNotFound when none.
	Delete(ctx context.Context, sc ActionScope, name string) error
	// List pages the scope's secrets by name, without values.
	List(ctx context.Context, sc ActionScope, p Page) ([]*ActionSecret, int64, error)
	// ForRepo opens the values a task of the repository sees: its owner's
	// secrets, overridden by the repository's own of the same name. A
	// value that does not open (sealed under another key) is left out.
	ForRepo(ctx context.Context, ownerID, repoID int64) (map[string]string, error)
}

// ActionVariableStore keeps Actions variables.
type ActionVariableStore interface {
	// Create inserts v; a name the scope has already is ErrDuplicate.
	Create(ctx context.Context, v *ActionVariable) error
	// Find reads the scope's variable name; ErrNotFound when none.
	Find(ctx context.Context, sc ActionScope, name string) (*ActionVariable, error)
	// Update writes v's name, data and description; a name another of
	// the scope's variables has is ErrDuplicate.
	Update(ctx context.Context, v *ActionVariable) error
	// Delete removes the scope's variable name; ErrNotFound when none.
	Delete(ctx context.Context, sc ActionScope, name string) error
	// List pages the scope's variables by name.
	List(ctx context.Context, sc ActionScope, p Page) ([]*ActionVariable, int64, error)
	// ForRepo is what a task of the repository sees: its owner's
	// variables, overridden by the repository's own of the same name.
	ForRepo(ctx context.Context, ownerID, repoID int64) (map[string]string, error)
}
