package store

// GitData bundles the stores of data kept beside the git repositories:
// branch protection rules, topics and teams.
type GitData interface {
}
