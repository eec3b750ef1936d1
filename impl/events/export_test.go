package events

// GatherCommits is gatherCommits, for the external tests.
const GatherCommits = gatherCommits
