// Package issue serves issues, comments, labels, milestones, reactions,
// tracked time and projects.
package issue

import "repohost/impl/app"

// Handlers implements restapi.IssueAPI.
type Handlers struct{ *app.Deps }
