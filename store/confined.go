package store

import "context"

type confinedKey struct{}

// ConfinedTo marks ctx for writes confined to repository repoID: whatever
// a statement made with it writes to the issue tracker's tables (issues,
// comments, labels and their links, milestones, assignees, mentions, pull
// requests, projects, reactions) is a row of that repository. Such a write
// retires what the store's read cache read from those tables as any write
// does, but for a watch (Watch.Repo) only the answers read from repoID's
// rows: a kept list of another repository stays. A marked statement that
// writes any other watched table counts as a write not confined to one
// repository, so marking too much costs kept answers, never their
// correctness; marking a write of another repository's rows would, so
// mark only what writes the one repository's rows.
func ConfinedTo(ctx context.Context, repoID int64) context.Context {
	return context.WithValue(ctx, confinedKey{}, repoID)
}

// ConfinedRepo is the repository ctx was marked for by ConfinedTo.
func ConfinedRepo(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(confinedKey{}).(int64)
	return id, ok
}
