package convert

import (
	"fmt"
	"strings"

	"repohost/models"
	"repohost/store"
)

// PullHTMLURL is the web address of pull request number index of r.
func PullHTMLURL(base string, r *store.Repository, index int64) string {
	return fmt.Sprintf("%s%s/pulls/%d", base, r.FullName(), index)
}

// wipPrefixes mark a pull request as a draft by its title, as the
// reference's default settings do.
var wipPrefixes = []string{"WIP:", "[WIP]"}

// IsWorkInProgress tells whether a pull request's title marks it a draft.
func IsWorkInProgress(title string) bool {
	t := strings.ToUpper(strings.TrimSpace(title))
	for _, p := range wipPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// PullSide is one side of a pull request as rendered: the repository
// (nil when it was deleted) and the branch and commit.
type PullSide struct {
	Repo   *models.Repository
	Branch string
	Sha    string
}

// branchInfo renders one side; its label is the bare branch name, as the
// reference sends it for the base and for a head in a fork alike.
func branchInfo(s PullSide) *models.PRBranchInfo {
	out := &models.PRBranchInfo{Name: s.Branch, Ref: s.Branch, Sha: s.Sha, Repo: s.Repo}
	if s.Repo != nil {
		out.RepoID = s.Repo.ID
	}
	return out
}

// PullAttrs is what rendering one pull request needs besides its issue.
type PullAttrs struct {
	Base, Head         PullSide
	MergedBy           *models.User
	RequestedReviewers []*models.User
	RequestedTeams     []*models.Team
	ReviewComments     int64
}

// Pull renders pr from its rendered issue.
func Pull(base string, r *store.Repository, is *models.Issue, pr *store.PullRequest, a PullAttrs) *models.PullRequest {
	api := repoAPI(base, r)
	out := &models.PullRequest{
		ID:                      is.ID,
		URL:                     fmt.Sprintf("%s/pulls/%d", api, is.Index),
		HTMLURL:                 PullHTMLURL(base, r, is.Index),
		DiffURL:                 PullHTMLURL(base, r, is.Index) + ".diff",
		PatchURL:                PullHTMLURL(base, r, is.Index) + ".patch",
		Index:                   is.Index,
		User:                    is.User,
		Title:                   is.Title,
		Body:                    is.Body,
		Labels:                  is.Labels,
		Milestone:               is.Milestone,
		Assignee:                is.Assignee,
		Assignees:               is.Assignees,
		State:                   is.State,
		IsLocked:                is.IsLocked,
		PinOrder:                is.PinOrder,
		Comments:                is.Comments,
		ContentVersion:          is.ContentVersion,
		Created:                 is.Created,
		Updated:                 is.Updated,
		Closed:                  is.Closed,
		Deadline:                is.Deadline,
		Draft:                   IsWorkInProgress(is.Title),
		Additions:               pr.Additions,
		Deletions:               pr.Deletions,
		ChangedFiles:            pr.ChangedFiles,
		AllowMaintainerEdit:     pr.AllowMaintainerEdit,
		Mergeable:               pr.Status == store.PullMergeable && !pr.HasMerged,
		HasMerged:               pr.HasMerged,
		Merged:                  Time(pr.MergedAt),
		MergedBy:                a.MergedBy,
		MergeBase:               pr.MergeBase,
		Base:                    branchInfo(a.Base),
		Head:                    branchInfo(a.Head),
		RequestedReviewers:      a.RequestedReviewers,
		RequestedReviewersTeams: a.RequestedTeams,
		ReviewComments:          a.ReviewComments,
	}
	if out.Labels == nil {
		out.Labels = []*models.Label{}
	}
	if out.Assignees == nil {
		out.Assignees = []*models.User{}
	}
	if out.RequestedReviewers == nil {
		out.RequestedReviewers = []*models.User{}
	}
	if out.RequestedReviewersTeams == nil {
		out.RequestedReviewersTeams = []*models.Team{}
	}
	if pr.HasMerged {
		out.MergedCommitID = &pr.MergedCommitID
	}
	return out
}

// Review renders a review of pull request index of r; headSha tells
// whether it is stale (made on an older head).
func Review(base string, r *store.Repository, index int64, rv *store.Review, reviewer *models.User, team *models.Team, comments int64, headSha string) *models.PullReview {
	pullURL := PullHTMLURL(base, r, index)
	out := &models.PullReview{
		ID:                rv.ID,
		User:              reviewer,
		Team:              team,
		State:             rv.State,
		Body:              rv.Body,
		CommitID:          rv.CommitID,
		Stale:             rv.CommitID != "" && rv.CommitID != headSha,
		Official:          rv.Official,
		Dismissed:         rv.Dismissed,
		CodeCommentsCount: comments,
		Submitted:         Time(rv.SubmittedAt),
		Updated:           TimeOf(rv.UpdatedAt),
		HTMLURL:           fmt.Sprintf("%s#issuecomment-%d", pullURL, rv.ID),
		HTMLPullURL:       pullURL,
	}
	if rv.State == store.ReviewRequest || rv.State == store.ReviewPending {
		out.Submitted = nil
	}
	return out
}

// ReviewComment renders a line comment of a review.
func ReviewComment(base string, r *store.Repository, index int64, c *store.ReviewComment, poster *models.User) *models.PullReviewComment {
	pullURL := PullHTMLURL(base, r, index)
	return &models.PullReviewComment{
		ID:           c.ID,
		ReviewID:     c.ReviewID,
		User:         poster,
		Body:         c.Body,
		Path:         c.Path,
		CommitID:     c.CommitID,
		OrigCommitID: c.OriginalCommitID,
		DiffHunk:     c.DiffHunk,
		LineNum:      uint64(max(c.Line, 0)),
		OldLineNum:   uint64(max(c.OldLine, 0)),
		Created:      TimeOf(c.CreatedAt),
		Updated:      TimeOf(c.UpdatedAt),
		HTMLURL:      fmt.Sprintf("%s#issuecomment-%d", pullURL, c.ID),
		HTMLPullURL:  pullURL,
	}
}
