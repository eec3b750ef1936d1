package convert

import (
	"fmt"

	"github.com/go-openapi/strfmt"

	"repohost/models"
	"repohost/store"
)

// RepoWatch is the caller's watch of r, as the reference renders it: dated
// by the repository's creation, managed at its subscription address.
func RepoWatch(base string, r *store.Repository) *models.WatchInfo {
	return &models.WatchInfo{Subscribed: true, CreatedAt: strfmt.DateTime(r.CreatedAt.UTC()),
		URL: repoAPI(base, r) + "/subscription", RepositoryURL: repoAPI(base, r)}
}

// IssueWatch is whether the caller is subscribed to is (of r), dated by the
// issue's creation as the reference does.
func IssueWatch(base string, r *store.Repository, is *store.Issue, subscribed bool) *models.WatchInfo {
	return &models.WatchInfo{Subscribed: subscribed, Ignored: !subscribed, CreatedAt: strfmt.DateTime(is.CreatedAt.UTC()),
		URL:           fmt.Sprintf("%s/issues/%d/subscriptions", repoAPI(base, r), is.Index),
		RepositoryURL: repoAPI(base, r)}
}
