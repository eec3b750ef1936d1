package issue

import (
	"context"
	"encoding/json"
	"math"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

func (h Handlers) IssueListLabels(ctx context.Context, params issue.IssueListLabelsParams) middleware.Responder {
	r, _, err := h.svc().Tracker(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Labels().List(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueListLabelsOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, list)).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueGetLabel(ctx context.Context, params issue.IssueGetLabelParams) middleware.Responder {
	r, _, err := h.svc().Tracker(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	l, err := h.Store.Labels().Find(ctx, r.ID, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetLabelOK().WithPayload(convert.Label(app.BaseURL(params.HTTPRequest), r, l))
}

func (h Handlers) IssueCreateLabel(ctx context.Context, params issue.IssueCreateLabelParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	l, err := s.CreateLabel(ctx, p.User, r, perm, LabelInput{Name: deref(o.Name), Color: deref(o.Color),
		Description: deref(o.Description), Exclusive: flag(o.Exclusive), Archived: flag(o.IsArchived)})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateLabelCreated().WithPayload(convert.Label(app.BaseURL(params.HTTPRequest), r, l))
}

func (h Handlers) IssueEditLabel(ctx context.Context, params issue.IssueEditLabelParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	l, err := s.EditLabel(ctx, p.User, r, perm, params.ID, LabelEdit{Name: o.Name, Color: o.Color,
		Description: o.Description, Exclusive: o.Exclusive, Archived: o.IsArchived})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditLabelOK().WithPayload(convert.Label(app.BaseURL(params.HTTPRequest), r, l))
}

func (h Handlers) IssueDeleteLabel(ctx context.Context, params issue.IssueDeleteLabelParams) middleware.Responder {
	s := h.svc()
	if err := remove(ctx, s, s.Tracker, params.Owner, params.Repo, params.ID, s.DeleteLabel); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteLabelNoContent()
}

func (h Handlers) IssueGetLabels(ctx context.Context, params issue.IssueGetLabelsParams) middleware.Responder {
	s := h.svc()
	r, _, err := s.Tracker(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	is, err := s.issue(ctx, r, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	all, err := s.labelsOf(ctx, is)
	if err != nil {
		return h.Fail(err)
	}
	// An issue carries few labels: one statement loads them all and the
	// page is cut here.
	pg := h.Page(params.Page, params.Limit)
	win := pg.Store()
	page := all[min(win.Offset, len(all)):min(win.Offset+win.Limit, len(all))]
	total := int64(len(all))
	return issue.NewIssueGetLabelsOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, page)).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// labelRefs reads IssueLabelsOption.labels, which may mix label ids and
// names.
func labelRefs(body *models.IssueLabelsOption) (LabelRefs, error) {
	var refs LabelRefs
	if body == nil {
		return refs, nil
	}
	for _, it := range body.Labels {
		switch v := it.(type) {
		case json.Number:
			id, err := v.Int64()
			if err != nil {
				return refs, apierr.Validation("[Labels]: %q is not a label id", v.String())
			}
			refs.IDs = append(refs.IDs, id)
		case float64:
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return refs, apierr.Validation("[Labels]: %v is not a label id", v)
			}
			refs.IDs = append(refs.IDs, int64(v))
		case string:
			refs.Names = append(refs.Names, v)
		default:
			return refs, apierr.Validation("[Labels]: a label must be an integer or a string")
		}
	}
	return refs, nil
}

// relabel is the common part of the handlers that change an issue's
// labels and answer with them.
func (h Handlers) relabel(ctx context.Context, owner, name string, index int64, change LabelChange, body *models.IssueLabelsOption) (*store.Repository, []*store.Label, error) {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	refs, err := labelRefs(body)
	if err != nil {
		return nil, nil, err
	}
	labels, err := s.Relabel(ctx, p.User, r, perm, index, change, refs)
	return r, labels, err
}

func (h Handlers) IssueAddLabel(ctx context.Context, params issue.IssueAddLabelParams) middleware.Responder {
	r, labels, err := h.relabel(ctx, params.Owner, params.Repo, params.Index, LabelsAdd, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(labels))
	return issue.NewIssueAddLabelOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, labels)).
		WithXTotalCount(total).WithLink(wholeList(params.HTTPRequest, total))
}

func (h Handlers) IssueReplaceLabels(ctx context.Context, params issue.IssueReplaceLabelsParams) middleware.Responder {
	r, labels, err := h.relabel(ctx, params.Owner, params.Repo, params.Index, LabelsReplace, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(labels))
	return issue.NewIssueReplaceLabelsOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, labels)).
		WithXTotalCount(total).WithLink(wholeList(params.HTTPRequest, total))
}

func (h Handlers) IssueClearLabels(ctx context.Context, params issue.IssueClearLabelsParams) middleware.Responder {
	if _, _, err := h.relabel(ctx, params.Owner, params.Repo, params.Index, LabelsClear, nil); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueClearLabelsNoContent()
}

func (h Handlers) IssueRemoveLabel(ctx context.Context, params issue.IssueRemoveLabelParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := s.Unlabel(ctx, p.User, r, perm, params.Index, params.ID); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueRemoveLabelNoContent()
}
