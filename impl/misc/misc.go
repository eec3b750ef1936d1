// Package misc serves the version, the settings endpoints and the
// current-token operations.
package misc

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/user"
	"repohost/models"
	"repohost/restapi/operations/miscellaneous"
	"repohost/restapi/operations/settings"
)

// Handlers implements restapi.MiscellaneousAPI and restapi.SettingsAPI.
type Handlers struct {
	*app.Deps
	Users user.Service
}

// Limits the settings endpoints report. The API's own limits (paging, the
// largest file the contents API inlines) come from app.Config.
const (
	// DefaultGitTreesPerPage and DefaultMaxResponseSize are the reference's
	// defaults; this server has no git trees or contents-ext API they
	// would bound, so they are reported as the reference reports them.
	DefaultGitTreesPerPage = 1000
	DefaultMaxResponseSize = 50 << 20
	// AttachmentAllowedTypes: a release asset of any type is accepted
	// ("*/*" is the reference's spelling of that); AttachmentMaxFiles: an
	// upload carries one file.
	AttachmentAllowedTypes = "*/*"
	AttachmentMaxFiles     = 1
)

func (h Handlers) GetVersion(ctx context.Context, _ miscellaneous.GetVersionParams) middleware.Responder {
	return miscellaneous.NewGetVersionOK().WithPayload(&models.ServerVersion{Version: app.Version})
}

func (h Handlers) GetGeneralAPISettings(ctx context.Context, _ settings.GetGeneralAPISettingsParams) middleware.Responder {
	return settings.NewGetGeneralAPISettingsOK().WithPayload(&models.GeneralAPISettings{
		MaxResponseItems:       int64(h.Config.Paging.Max),
		DefaultPagingNum:       int64(h.Config.Paging.Default),
		DefaultGitTreesPerPage: DefaultGitTreesPerPage,
		DefaultMaxBlobSize:     h.Config.MaxContentsBlob,
		DefaultMaxResponseSize: DefaultMaxResponseSize,
	})
}

func (h Handlers) GetGeneralRepositorySettings(ctx context.Context, _ settings.GetGeneralRepositorySettingsParams) middleware.Responder {
	// What this server really offers: git over HTTP, time tracking,
	// stars, migrations and mirrors (each unless turned off), and Git LFS.
	return settings.NewGetGeneralRepositorySettingsOK().WithPayload(&models.GeneralRepoSettings{
		HTTPGitDisabled:      false,
		TimeTrackingDisabled: false,
		StarsDisabled:        false,
		MirrorsDisabled:      h.Config.Mirrors.Disabled,
		MigrationsDisabled:   h.Config.Migrations.Disabled,
		LFSDisabled:          false,
	})
}

func (h Handlers) GetGeneralUISettings(ctx context.Context, _ settings.GetGeneralUISettingsParams) middleware.Responder {
	return settings.NewGetGeneralUISettingsOK().WithPayload(&models.GeneralUISettings{
		DefaultTheme:     "gitea-auto",
		AllowedReactions: h.Config.AllowedReactions,
		CustomEmojis:     []string{"git", "gitea", "codeberg", "gitlab", "github", "gogs"},
	})
}

func (h Handlers) GetGeneralAttachmentSettings(ctx context.Context, _ settings.GetGeneralAttachmentSettingsParams) middleware.Responder {
	return settings.NewGetGeneralAttachmentSettingsOK().WithPayload(&models.GeneralAttachmentSettings{
		Enabled:      true,
		AllowedTypes: AttachmentAllowedTypes,
		// In MiB, as the reference counts it; what an upload may really
		// reach (app.Config.MaxAssetBytes, 413 past it).
		MaxSize:  h.Config.MaxAssetBytes >> 20,
		MaxFiles: AttachmentMaxFiles,
	})
}

// currentToken is the token that authenticated the request.
func currentToken(ctx context.Context) (*auth.Principal, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	if p.Token == nil {
		return nil, apierr.BadRequest("the request was not authenticated with an access token")
	}
	return p, nil
}

func (h Handlers) GetCurrentToken(ctx context.Context, _ miscellaneous.GetCurrentTokenParams) middleware.Responder {
	p, err := currentToken(ctx)
	if err != nil {
		return h.Fail(err)
	}
	t := p.Token
	return miscellaneous.NewGetCurrentTokenOK().WithPayload(&models.CurrentAccessToken{
		ID:         t.ID,
		Name:       t.Name,
		Scopes:     p.Scopes.List(),
		CreatedAt:  convert.TimeOf(t.CreatedAt),
		LastUsedAt: convert.Time(t.LastUsedAt),
		User:       &models.UserMeta{ID: p.Signer.ID, Login: p.Signer.Name},
	})
}

func (h Handlers) DeleteCurrentToken(ctx context.Context, _ miscellaneous.DeleteCurrentTokenParams) middleware.Responder {
	p, err := currentToken(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.DeleteToken(ctx, p.User, p.Signer, p.Token); err != nil {
		return h.Fail(err)
	}
	return miscellaneous.NewDeleteCurrentTokenNoContent()
}
