package store

import (
	"context"
	"time"
)

// AccessMode is a level of access to a repository or one of its units, in
// increasing order; the names are the reference's.
type AccessMode int

const (
	AccessNone AccessMode = iota
	AccessRead
	AccessWrite
	AccessAdmin
	AccessOwner
)

var accessModeNames = [...]string{TeamAccessNone, TeamAccessRead, TeamAccessWrite, TeamAccessAdmin, TeamAccessOwner}

func (m AccessMode) String() string {
	if m < 0 || int(m) >= len(accessModeNames) {
		return TeamAccessNone
	}
	return accessModeNames[m]
}

// ParseAccessMode reads "none", "read", "write", "admin" or "owner".
func ParseAccessMode(s string) (AccessMode, bool) {
	for i, n := range accessModeNames {
		if n == s {
			return AccessMode(i), true
		}
	}
	return AccessNone, false
}

// TeamUser makes a user a member of a team. OrgID repeats the team's
// organization so that "the teams of this user in that organization" reads
// one index.
type TeamUser struct {
	TeamID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64 `gorm:"primaryKey;autoIncrement:false"`
	OrgID  int64
}

// Collaboration gives a user direct access to one repository.
type Collaboration struct {
	RepoID    int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Mode      AccessMode
	CreatedAt time.Time
}

// Collaborator is a collaboration with its user.
type Collaborator struct {
	User *User
	Mode AccessMode
}

// Grantee is a user with a grant on one repository: a collaboration
// (AccessNone when there is none) and the ids of its teams that have it.
type Grantee struct {
	User          *User
	Collaboration AccessMode
	TeamIDs       []int64
}

// RepoTransfer is a pending change of a repository's owner, waiting for the
// recipient to accept or reject it.
type RepoTransfer struct {
	RepoID      int64 `gorm:"primaryKey;autoIncrement:false"`
	DoerID      int64
	RecipientID int64
	TeamIDs     []int64 `gorm:"serializer:json"`
	CreatedAt   time.Time
}

// Grants is what a user was given on some repositories beyond ownership:
// every team the user belongs to in the organizations concerned, which of
// those teams were given which of the repositories, and the user's
// collaborations on them. impl/access turns it into permissions.
type Grants struct {
	Teams []*Team
	// TeamRepos holds, per repository id, the ids of the caller's teams
	// given that repository (teams with IncludesAllRepositories aside).
	TeamRepos map[int64][]int64
	// Collaborations maps a repository id to the user's collaborator mode.
	Collaborations map[int64]AccessMode
}

// AccessStore reads and writes what gives users access to repositories
// they do not own: collaborations, and pending transfers.
type AccessStore interface {
	// Grants loads userID's grants on repoIDs, whose owning organizations
	// are orgIDs (no team is read when orgIDs is nil), in at most two
	// statements whatever the number of repositories and teams.
	Grants(ctx context.Context, userID int64, orgIDs, repoIDs []int64) (*Grants, error)

	// SetCollaborator adds or changes a collaboration.
	SetCollaborator(ctx context.Context, c *Collaboration) error
	// RemoveCollaborator ends one; ErrNotFound when there is none.
	RemoveCollaborator(ctx context.Context, repoID, userID int64) error
	FindCollaborator(ctx context.Context, repoID, userID int64) (*Collaboration, error)
	// ListCollaborators lists a repository's collaborators by name.
	ListCollaborators(ctx context.Context, repoID int64, p Page) ([]*Collaborator, int64, error)
	// ListGrantees lists, by name, every user with a collaboration on
	// repoID or a membership of a team of orgID (0 for a user-owned
	// repository) that has the repository, with those teams; for the
	// assignee and reviewer lists, which judge each with impl/access.
	ListGrantees(ctx context.Context, repoID, orgID int64) ([]*Grantee, []*Team, error)

	CreateTransfer(ctx context.Context, t *RepoTransfer) error
	FindTransfer(ctx context.Context, repoID int64) (*RepoTransfer, error)
	DeleteTransfer(ctx context.Context, repoID int64) error
}
