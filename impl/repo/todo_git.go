// TEMPORARY: git operations not yet implemented. Each stub moves to a real file as it is built;
// this file must be gone before the work is done.
package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/repository"
)

func (h Handlers) GenerateRepo(ctx context.Context, params repository.GenerateRepoParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoAddTopic(ctx context.Context, params repository.RepoAddTopicParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateBranch(ctx context.Context, params repository.RepoCreateBranchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateBranchProtection(ctx context.Context, params repository.RepoCreateBranchProtectionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateFile(ctx context.Context, params repository.RepoCreateFileParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateRelease(ctx context.Context, params repository.RepoCreateReleaseParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateReleaseAttachment(ctx context.Context, params repository.RepoCreateReleaseAttachmentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoCreateTag(ctx context.Context, params repository.RepoCreateTagParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteBranch(ctx context.Context, params repository.RepoDeleteBranchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteBranchProtection(ctx context.Context, params repository.RepoDeleteBranchProtectionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteFile(ctx context.Context, params repository.RepoDeleteFileParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteRelease(ctx context.Context, params repository.RepoDeleteReleaseParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteReleaseAttachment(ctx context.Context, params repository.RepoDeleteReleaseAttachmentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteReleaseByTag(ctx context.Context, params repository.RepoDeleteReleaseByTagParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteTag(ctx context.Context, params repository.RepoDeleteTagParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDeleteTopic(ctx context.Context, params repository.RepoDeleteTopicParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoEditBranchProtection(ctx context.Context, params repository.RepoEditBranchProtectionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoEditRelease(ctx context.Context, params repository.RepoEditReleaseParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetArchive(ctx context.Context, params repository.RepoGetArchiveParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetBranch(ctx context.Context, params repository.RepoGetBranchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetBranchProtection(ctx context.Context, params repository.RepoGetBranchProtectionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetContents(ctx context.Context, params repository.RepoGetContentsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetContentsList(ctx context.Context, params repository.RepoGetContentsListParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetLatestRelease(ctx context.Context, params repository.RepoGetLatestReleaseParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetRawFile(ctx context.Context, params repository.RepoGetRawFileParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetRelease(ctx context.Context, params repository.RepoGetReleaseParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetReleaseAttachment(ctx context.Context, params repository.RepoGetReleaseAttachmentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetReleaseByTag(ctx context.Context, params repository.RepoGetReleaseByTagParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGetTag(ctx context.Context, params repository.RepoGetTagParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListBranchProtection(ctx context.Context, params repository.RepoListBranchProtectionParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListBranches(ctx context.Context, params repository.RepoListBranchesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListReleaseAttachments(ctx context.Context, params repository.RepoListReleaseAttachmentsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListReleases(ctx context.Context, params repository.RepoListReleasesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListTags(ctx context.Context, params repository.RepoListTagsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListTeams(ctx context.Context, params repository.RepoListTeamsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoListTopics(ctx context.Context, params repository.RepoListTopicsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoRenameBranch(ctx context.Context, params repository.RepoRenameBranchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoUpdateBranch(ctx context.Context, params repository.RepoUpdateBranchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoUpdateBranchProtectionPriories(ctx context.Context, params repository.RepoUpdateBranchProtectionPrioriesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoUpdateFile(ctx context.Context, params repository.RepoUpdateFileParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoUpdateTopics(ctx context.Context, params repository.RepoUpdateTopicsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) TopicSearch(ctx context.Context, params repository.TopicSearchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
