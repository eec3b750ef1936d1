package store

import (
	"context"
	"time"
)

// UserBlock records that a user or organization (BlockerID) blocked a user.
type UserBlock struct {
	BlockerID int64 `gorm:"primaryKey;autoIncrement:false"`
	BlockeeID int64 `gorm:"primaryKey;autoIncrement:false"`
	Note      string
	CreatedAt time.Time
}

// PeopleStore keeps the links between people and what they pay attention
// to: stars on repositories, follows between users, and blocks. Each change
// reports whether it changed anything, and moves the counters it summarises
// (repositories.num_stars, users.num_stars, users.num_followers,
// users.num_following) by SQL arithmetic in the same statement's
// transaction, so they stay exact under concurrent changes.
type PeopleStore interface {
	// Star marks repoID as starred by userID; false if it already was.
	Star(ctx context.Context, userID, repoID int64, at time.Time) (bool, error)
	// Unstar removes the mark; false if there was none.
	Unstar(ctx context.Context, userID, repoID int64) (bool, error)
	IsStarred(ctx context.Context, userID, repoID int64) (bool, error)
	// UnstarOwnedBy removes userID's stars from the repositories ownerID
	// owns (a block), reporting how many went.
	UnstarOwnedBy(ctx context.Context, userID, ownerID int64) (int64, error)

	// Follow records that userID follows followID; false if it already did.
	Follow(ctx context.Context, userID, followID int64, at time.Time) (bool, error)
	// Unfollow removes the follow; false if there was none.
	Unfollow(ctx context.Context, userID, followID int64) (bool, error)
	IsFollowing(ctx context.Context, userID, followID int64) (bool, error)

	// Block records that blockerID blocks blockeeID; false if it already did.
	Block(ctx context.Context, b *UserBlock) (bool, error)
	// Unblock removes the block; false if there was none.
	Unblock(ctx context.Context, blockerID, blockeeID int64) (bool, error)
	// IsBlocked tells whether either of a and b blocked the other.
	IsBlocked(ctx context.Context, a, b int64) (bool, error)
	// FindBlock is blockerID's block of blockeeID.
	FindBlock(ctx context.Context, blockerID, blockeeID int64) (*UserBlock, error)
	// Ties are what userID has on ownerID's side that a block between
	// the two ends (see Ties).
	Ties(ctx context.Context, userID, ownerID int64) (*Ties, error)
}

// Ties are one user's links to another's repositories that a block
// between the two undoes, beyond stars, watches and follows.
type Ties struct {
	// Assigned are the issues and pull requests of the owner's
	// repositories the user is assigned to.
	Assigned []IssueRef
	// Collaborations are the owner's repositories the user collaborates
	// on, by id.
	Collaborations []int64
	// Transfers are the repositories, owned by the owner or whose
	// transfer the owner started, waiting for the user to accept them.
	Transfers []int64
}

// IssueRef names an issue by its repository and number.
type IssueRef struct {
	RepoID int64
	Index  int64
}
