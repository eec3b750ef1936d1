package gitstore

// SetInspectLimit lowers the bound on the commits one push check loads, so
// a test reaches it cheaply.
func SetInspectLimit(g *GitRepo, n int) { g.inspectLimit = n }
