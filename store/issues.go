package store

// IssueTracker bundles the stores of the issue tracker: issues, comments,
// labels, milestones, reactions, tracked time and projects.
type IssueTracker interface {
}
