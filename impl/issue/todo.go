// TEMPORARY: issue-tracking operations not yet implemented. Each stub moves to a real file as it is built;
// this file must be gone before the work is done.
package issue

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/issue"
)

func (h Handlers) IssueAddLabel(ctx context.Context, params issue.IssueAddLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueAddTime(ctx context.Context, params issue.IssueAddTimeParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueClearLabels(ctx context.Context, params issue.IssueClearLabelsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueCreateComment(ctx context.Context, params issue.IssueCreateCommentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueCreateIssue(ctx context.Context, params issue.IssueCreateIssueParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueCreateLabel(ctx context.Context, params issue.IssueCreateLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueCreateMilestone(ctx context.Context, params issue.IssueCreateMilestoneParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDelete(ctx context.Context, params issue.IssueDeleteParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteComment(ctx context.Context, params issue.IssueDeleteCommentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteCommentReaction(ctx context.Context, params issue.IssueDeleteCommentReactionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteIssueReaction(ctx context.Context, params issue.IssueDeleteIssueReactionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteLabel(ctx context.Context, params issue.IssueDeleteLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteMilestone(ctx context.Context, params issue.IssueDeleteMilestoneParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueDeleteTime(ctx context.Context, params issue.IssueDeleteTimeParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueEditComment(ctx context.Context, params issue.IssueEditCommentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueEditIssue(ctx context.Context, params issue.IssueEditIssueParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueEditIssueDeadline(ctx context.Context, params issue.IssueEditIssueDeadlineParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueEditLabel(ctx context.Context, params issue.IssueEditLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueEditMilestone(ctx context.Context, params issue.IssueEditMilestoneParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetComment(ctx context.Context, params issue.IssueGetCommentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetCommentReactions(ctx context.Context, params issue.IssueGetCommentReactionsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetComments(ctx context.Context, params issue.IssueGetCommentsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetIssue(ctx context.Context, params issue.IssueGetIssueParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetIssueReactions(ctx context.Context, params issue.IssueGetIssueReactionsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetLabel(ctx context.Context, params issue.IssueGetLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetLabels(ctx context.Context, params issue.IssueGetLabelsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetMilestone(ctx context.Context, params issue.IssueGetMilestoneParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueGetMilestonesList(ctx context.Context, params issue.IssueGetMilestonesListParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueListIssues(ctx context.Context, params issue.IssueListIssuesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueListLabels(ctx context.Context, params issue.IssueListLabelsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssuePostCommentReaction(ctx context.Context, params issue.IssuePostCommentReactionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssuePostIssueReaction(ctx context.Context, params issue.IssuePostIssueReactionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueRemoveLabel(ctx context.Context, params issue.IssueRemoveLabelParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueReplaceLabels(ctx context.Context, params issue.IssueReplaceLabelsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueResetTime(ctx context.Context, params issue.IssueResetTimeParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueSearchIssues(ctx context.Context, params issue.IssueSearchIssuesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) IssueTrackedTimes(ctx context.Context, params issue.IssueTrackedTimesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateProject(ctx context.Context, params issue.RepoCreateProjectParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteProject(ctx context.Context, params issue.RepoDeleteProjectParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoEditProject(ctx context.Context, params issue.RepoEditProjectParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetProject(ctx context.Context, params issue.RepoGetProjectParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListProjects(ctx context.Context, params issue.RepoListProjectsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
