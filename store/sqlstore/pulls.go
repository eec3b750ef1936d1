package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

func (d *DB) Pulls() store.PullStore { return pullStore{d} }

type pullStore struct{ d *DB }

func (s pullStore) Create(ctx context.Context, pr *store.PullRequest) error {
	return translateRef(s.d.conn(ctx).Create(pr).Error, "create pull request")
}

func (s pullStore) FindByIssueID(ctx context.Context, issueID int64) (*store.PullRequest, error) {
	var pr store.PullRequest
	if err := s.d.conn(ctx).Where("issue_id = ?", issueID).Take(&pr).Error; err != nil {
		return nil, translate(err, "find pull request")
	}
	return &pr, nil
}

func (s pullStore) ForIssues(ctx context.Context, issueIDs []int64) (map[int64]*store.PullRequest, error) {
	out := make(map[int64]*store.PullRequest, len(issueIDs))
	if len(issueIDs) == 0 {
		return out, nil
	}
	var list []*store.PullRequest
	if err := s.d.conn(ctx).Where("issue_id IN ?", issueIDs).Find(&list).Error; err != nil {
		return nil, translate(err, "find pull requests")
	}
	for _, pr := range list {
		out[pr.IssueID] = pr
	}
	return out, nil
}

// betweenBranches selects the pull requests from head into base.
func (s pullStore) betweenBranches(ctx context.Context, headRepoID int64, headBranch string, baseRepoID int64, baseBranch string) *gorm.DB {
	return s.d.conn(ctx).Model(&store.PullRequest{}).
		Where("pull_requests.head_repo_id = ? AND pull_requests.head_branch = ? AND pull_requests.base_repo_id = ? AND pull_requests.base_branch = ?",
			headRepoID, headBranch, baseRepoID, baseBranch)
}

func (s pullStore) FindOpen(ctx context.Context, headRepoID int64, headBranch string, baseRepoID int64, baseBranch string) (*store.PullRequest, error) {
	var pr store.PullRequest
	err := s.betweenBranches(ctx, headRepoID, headBranch, baseRepoID, baseBranch).
		Joins("JOIN issues ON issues.id = pull_requests.issue_id").
		Where("issues.is_closed = ? AND pull_requests.has_merged = ?", false, false).
		Select("pull_requests.*").Take(&pr).Error
	if err != nil {
		return nil, translate(err, "find open pull request")
	}
	return &pr, nil
}

func (s pullStore) FindNewest(ctx context.Context, headRepoID int64, headBranch string, baseRepoID int64, baseBranch string) (*store.PullRequest, error) {
	var pr store.PullRequest
	err := s.betweenBranches(ctx, headRepoID, headBranch, baseRepoID, baseBranch).Order("pull_requests.id DESC").Take(&pr).Error
	if err != nil {
		return nil, translate(err, "find pull request")
	}
	return &pr, nil
}

func (s pullStore) OpenWithBranch(ctx context.Context, repoID int64, branch string) ([]*store.PullRequest, error) {
	var list []*store.PullRequest
	err := s.d.conn(ctx).Model(&store.PullRequest{}).
		Joins("JOIN issues ON issues.id = pull_requests.issue_id").
		Where("((pull_requests.head_repo_id = ? AND pull_requests.head_branch = ?) OR (pull_requests.base_repo_id = ? AND pull_requests.base_branch = ?))",
			repoID, branch, repoID, branch).
		Where("issues.is_closed = ? AND pull_requests.has_merged = ?", false, false).
		Select("pull_requests.*").Order("pull_requests.id").Find(&list).Error
	return list, translate(err, "list pull requests of a branch")
}

func (s pullStore) Update(ctx context.Context, pr *store.PullRequest, columns ...string) error {
	return affected(s.d.conn(ctx).Model(pr).Select(columns).Updates(pr), "update pull request")
}

func (s pullStore) UpdateState(ctx context.Context, pr *store.PullRequest, columns ...string) error {
	res := s.d.conn(ctx).Model(pr).Where("status <> ?", store.PullMerging).Select(columns).Updates(pr)
	return translate(res.Error, "update pull request")
}

func (s pullStore) ClaimMerge(ctx context.Context, id int64, now, staleBefore time.Time) (bool, error) {
	res := s.d.conn(ctx).Model(&store.PullRequest{}).
		Where("id = ? AND has_merged = ? AND (status <> ? OR updated_at < ?)", id, false, store.PullMerging, staleBefore).
		UpdateColumns(map[string]any{"status": store.PullMerging, "updated_at": now})
	if res.Error != nil {
		return false, translate(res.Error, "claim pull request merge")
	}
	return res.RowsAffected == 1, nil
}

func (s pullStore) ReleaseMerge(ctx context.Context, id int64, status int) error {
	err := s.d.conn(ctx).Model(&store.PullRequest{}).Where("id = ? AND status = ? AND has_merged = ?", id, store.PullMerging, false).
		UpdateColumn("status", status).Error
	return translate(err, "release pull request merge")
}

func (s pullStore) MarkMerged(ctx context.Context, pr *store.PullRequest) (bool, error) {
	// The condition on has_merged makes the merge count once however many
	// requests race for it.
	res := s.d.conn(ctx).Model(&store.PullRequest{}).Where("id = ? AND has_merged = ?", pr.ID, false).
		UpdateColumns(map[string]any{"has_merged": true, "merged_at": pr.MergedAt, "merger_id": pr.MergerID,
			"merged_commit_id": pr.MergedCommitID, "head_commit_id": pr.HeadCommitID, "base_commit_id": pr.BaseCommitID,
			"merge_base": pr.MergeBase, "status": pr.Status, "updated_at": pr.UpdatedAt})
	if res.Error != nil {
		return false, translate(res.Error, "merge pull request")
	}
	return res.RowsAffected == 1, nil
}

// pullSorts are the list's orders by the API's sort names, over issues.
var pullSorts = map[string]string{
	"":             "issues.created_at DESC, issues.id DESC",
	"oldest":       "issues.created_at ASC, issues.id ASC",
	"recentupdate": "issues.updated_at DESC, issues.id DESC",
	"leastupdate":  "issues.updated_at ASC, issues.id ASC",
	"recentclose":  "issues.closed_at DESC, issues.id DESC",
	"mostcomment":  "issues.num_comments DESC, issues.id DESC",
	"leastcomment": "issues.num_comments ASC, issues.id ASC",
	// The reference ranks by its own priority field, which this server
	// has not: newest first then, as for the default.
	"priority": "issues.created_at DESC, issues.id DESC",
}

func (s pullStore) List(ctx context.Context, f store.PullFilter, p store.Page) ([]*store.PullRequest, map[int64]*store.Issue, int64, error) {
	// Every pull issue has its pull_requests row: the list reads issues
	// by their indexes and looks the rows up afterwards (ForIssues), so
	// only a filter on the branch touches pull_requests, by issue id.
	db := s.d.conn(ctx).Model(&store.Issue{}).
		Where("issues.repo_id = ? AND issues.is_pull = ?", f.RepoID, true)
	if f.IsClosed != nil {
		db = db.Where("issues.is_closed = ?", *f.IsClosed)
	}
	if f.BaseBranch != "" {
		db = db.Where("issues.id IN (SELECT pr.issue_id FROM pull_requests pr WHERE pr.base_repo_id = ? AND pr.base_branch = ?)",
			f.RepoID, f.BaseBranch)
	}
	if f.MilestoneID != 0 {
		db = db.Where("issues.milestone_id = ?", f.MilestoneID)
	}
	if f.PosterID != 0 {
		db = db.Where("issues.poster_id = ?", f.PosterID)
	}
	for _, id := range f.LabelIDs {
		db = db.Where("EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = issues.id AND il.label_id = ?)", id)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, nil, 0, translate(err, "count pull requests")
	}
	order, ok := pullSorts[f.Sort]
	if !ok {
		order = pullSorts[""]
	}
	issues, err := readPage[store.Issue](db.Select("issues.*"), parseOrder(order), p, total)
	if err != nil {
		return nil, nil, 0, translate(err, "list pull requests")
	}
	ids := make([]int64, 0, len(issues))
	byID := make(map[int64]*store.Issue, len(issues))
	for _, is := range issues {
		ids = append(ids, is.ID)
		byID[is.ID] = is
	}
	prs, err := s.ForIssues(ctx, ids)
	if err != nil {
		return nil, nil, 0, err
	}
	out := make([]*store.PullRequest, 0, len(issues))
	for _, is := range issues {
		if pr := prs[is.ID]; pr != nil {
			out = append(out, pr)
		}
	}
	return out, byID, total, nil
}

func (s pullStore) CreateReview(ctx context.Context, r *store.Review) error {
	return translateRef(s.d.conn(ctx).Create(r).Error, "create review")
}

func (s pullStore) FindReview(ctx context.Context, issueID, id int64) (*store.Review, error) {
	var r store.Review
	if err := s.d.conn(ctx).Where("issue_id = ? AND id = ?", issueID, id).Take(&r).Error; err != nil {
		return nil, translate(err, "find review")
	}
	return &r, nil
}

func (s pullStore) UpdateReview(ctx context.Context, r *store.Review, columns ...string) error {
	return affected(s.d.conn(ctx).Model(r).Select(columns).Updates(r), "update review")
}

func (s pullStore) DeleteReview(ctx context.Context, id int64) error {
	db := s.d.conn(ctx)
	if err := db.Where("review_id = ?", id).Delete(&store.ReviewComment{}).Error; err != nil {
		return translate(err, "delete review comments")
	}
	return affected(db.Delete(&store.Review{}, id), "delete review")
}

func (s pullStore) Reviews(ctx context.Context, issueID, viewerID int64, p store.Page) ([]*store.Review, int64, error) {
	db := s.d.conn(ctx).Model(&store.Review{}).Where("issue_id = ? AND (state <> ? OR reviewer_id = ?)", issueID, store.ReviewPending, viewerID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count reviews")
	}
	out, err := readPage[store.Review](db, parseOrder("reviews.id ASC"), p, total)
	return out, total, translate(err, "list reviews")
}

func (s pullStore) AllReviews(ctx context.Context, issueID int64) ([]*store.Review, error) {
	var out []*store.Review
	err := s.d.conn(ctx).Where("issue_id = ?", issueID).Order("id").Find(&out).Error
	return out, translate(err, "list reviews")
}

func (s pullStore) ReviewsForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*store.Review, error) {
	out := map[int64][]*store.Review{}
	if len(issueIDs) == 0 {
		return out, nil
	}
	var list []*store.Review
	if err := s.d.conn(ctx).Where("issue_id IN ?", issueIDs).Order("id").Find(&list).Error; err != nil {
		return nil, translate(err, "list reviews")
	}
	for _, r := range list {
		out[r.IssueID] = append(out[r.IssueID], r)
	}
	return out, nil
}

func (s pullStore) CreateReviewComments(ctx context.Context, cs []*store.ReviewComment) error {
	if len(cs) == 0 {
		return nil
	}
	return translateRef(s.d.conn(ctx).Create(cs).Error, "create review comments")
}

func (s pullStore) FindReviewComment(ctx context.Context, id int64) (*store.ReviewComment, error) {
	var c store.ReviewComment
	if err := s.d.conn(ctx).Where("id = ?", id).Take(&c).Error; err != nil {
		return nil, translate(err, "find review comment")
	}
	return &c, nil
}

func (s pullStore) UpdateReviewComment(ctx context.Context, c *store.ReviewComment, columns ...string) error {
	return affected(s.d.conn(ctx).Model(c).Select(columns).Updates(c), "update review comment")
}

func (s pullStore) ReviewComments(ctx context.Context, reviewID int64) ([]*store.ReviewComment, error) {
	var out []*store.ReviewComment
	err := s.d.conn(ctx).Where("review_id = ?", reviewID).Order("id").Find(&out).Error
	return out, translate(err, "list review comments")
}

func (s pullStore) CountReviewComments(ctx context.Context, reviewIDs []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(reviewIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ReviewID int64
		N        int64
	}
	err := s.d.conn(ctx).Model(&store.ReviewComment{}).Select("review_id, COUNT(*) AS n").
		Where("review_id IN ?", reviewIDs).Group("review_id").Scan(&rows).Error
	for _, r := range rows {
		out[r.ReviewID] = r.N
	}
	return out, translate(err, "count review comments")
}
