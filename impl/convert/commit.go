package convert

import (
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/strfmt"

	"repohost/impl/signing"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// Verification renders a signature verdict as viewer sees it. The signer
// is the key's owner (their key's verified address, else their address as
// User shows it to viewer) or the instance.
func Verification(base string, v *signing.Verification, viewer *store.User) *models.PayloadCommitVerification {
	if v == nil {
		return nil
	}
	out := &models.PayloadCommitVerification{Verified: v.Verified, Reason: v.Reason, Signature: v.Signature, Payload: v.Payload}
	if s := v.Signer; s != nil {
		signer := &models.PayloadUser{Name: s.Name, Email: strfmt.Email(s.Email)}
		if s.User != nil {
			signer.UserName = s.User.Name
			if s.Email == "" {
				signer.Email = User(base, s.User, viewer).Email
			}
		}
		out.Signer = signer
	}
	return out
}

// CommitExtras is what the commits API adds to a commit's git data, each
// part nil when it was not asked for.
type CommitExtras struct {
	// Author and Committer are the accounts behind the commit's
	// addresses, nil when there is none (or viewer may not see it).
	Author, Committer *store.User
	Verification      *signing.Verification
	Files             []gitstore.FileStatus
	Stats             *models.CommitStats
}

// Commit renders c of r as the commits API shows it.
func Commit(base string, r *store.Repository, c *object.Commit, x CommitExtras, viewer *store.User) *models.Commit {
	id := c.Hash.String()
	api := gitAPIBase(base, r)
	parents := make([]*models.CommitMeta, 0, len(c.ParentHashes))
	for _, p := range c.ParentHashes {
		parents = append(parents, &models.CommitMeta{SHA: p.String(), URL: api + "/git/commits/" + p.String()})
	}
	out := &models.Commit{
		SHA:     id,
		URL:     api + "/git/commits/" + id,
		HTMLURL: gitHTMLBase(base, r) + "/commit/" + id,
		Created: strfmt.DateTime(c.Committer.When.UTC()),
		Parents: parents,
		Commit: &models.RepoCommit{
			URL:       api + "/git/commits/" + id,
			Author:    commitUser(c.Author),
			Committer: commitUser(c.Committer),
			Message:   c.Message,
			Tree: &models.CommitMeta{SHA: c.TreeHash.String(), URL: api + "/git/trees/" + c.TreeHash.String(),
				Created: TimeOf(c.Committer.When)},
			Verification: Verification(base, x.Verification, viewer),
		},
		Author:    User(base, x.Author, viewer),
		Committer: User(base, x.Committer, viewer),
		Stats:     x.Stats,
	}
	if x.Files != nil {
		out.Files = make([]*models.CommitAffectedFiles, 0, len(x.Files))
		for _, f := range x.Files {
			out.Files = append(out.Files, &models.CommitAffectedFiles{Filename: f.Path, Status: f.Status})
		}
	}
	return out
}
