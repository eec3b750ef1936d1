package misc

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/templates"
	"repohost/models"
	"repohost/restapi/operations/miscellaneous"
)

// The template catalogs (impl/templates) are small and fixed, so each list
// is answered whole, as the reference does, with its size in X-Total-Count.

// licenseImplementation is the sentence the reference adds to every license
// (GitHub's API does the same).
const licenseImplementation = "Create a text file (typically named LICENSE or LICENSE.txt) in the root of your source code and copy the text of the license into the file"

func (h Handlers) ListGitignoresTemplates(ctx context.Context, _ miscellaneous.ListGitignoresTemplatesParams) middleware.Responder {
	names := templates.Gitignores()
	return miscellaneous.NewListGitignoresTemplatesOK().WithXTotalCount(int64(len(names))).WithPayload(names)
}

func (h Handlers) GetGitignoreTemplateInfo(ctx context.Context, params miscellaneous.GetGitignoreTemplateInfoParams) middleware.Responder {
	name, text, ok := templates.Gitignore(params.Name)
	if !ok {
		return h.Fail(apierr.NotFound("gitignore template %q does not exist", params.Name))
	}
	return miscellaneous.NewGetGitignoreTemplateInfoOK().WithPayload(&models.GitignoreTemplateInfo{Name: name, Source: text})
}

func licenseURL(base, id string) string {
	return base + "api/v1/licenses/" + url.PathEscape(id)
}

func (h Handlers) ListLicenseTemplates(ctx context.Context, params miscellaneous.ListLicenseTemplatesParams) middleware.Responder {
	base := app.BaseURL(params.HTTPRequest)
	ids := templates.Licenses()
	out := make([]*models.LicensesTemplateListEntry, 0, len(ids))
	for _, id := range ids {
		out = append(out, &models.LicensesTemplateListEntry{Key: id, Name: id, URL: licenseURL(base, id)})
	}
	return miscellaneous.NewListLicenseTemplatesOK().WithXTotalCount(int64(len(out))).WithPayload(out)
}

func (h Handlers) GetLicenseTemplateInfo(ctx context.Context, params miscellaneous.GetLicenseTemplateInfoParams) middleware.Responder {
	id, text, ok := templates.License(params.Name)
	if !ok {
		return h.Fail(apierr.NotFound("license template %q does not exist", params.Name))
	}
	return miscellaneous.NewGetLicenseTemplateInfoOK().WithPayload(&models.LicenseTemplateInfo{
		Key: id, Name: id, URL: licenseURL(app.BaseURL(params.HTTPRequest), id),
		Body: text, Implementation: licenseImplementation,
	})
}

func (h Handlers) ListLabelTemplates(ctx context.Context, _ miscellaneous.ListLabelTemplatesParams) middleware.Responder {
	names := templates.LabelSets()
	return miscellaneous.NewListLabelTemplatesOK().WithXTotalCount(int64(len(names))).WithPayload(names)
}

func (h Handlers) GetLabelTemplateInfo(ctx context.Context, params miscellaneous.GetLabelTemplateInfoParams) middleware.Responder {
	_, labels, err := templates.LabelSet(params.Name)
	if errors.Is(err, templates.ErrUnknownLabelSet) {
		return h.Fail(apierr.NotFound("%s", err.Error()))
	}
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.LabelTemplate, 0, len(labels))
	for _, l := range labels {
		out = append(out, &models.LabelTemplate{Name: l.Name, Color: strings.TrimPrefix(l.Color, "#"),
			Description: l.Description, Exclusive: l.Exclusive})
	}
	return miscellaneous.NewGetLabelTemplateInfoOK().WithPayload(out)
}
