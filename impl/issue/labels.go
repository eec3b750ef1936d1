package issue

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// MaxLabelNameLength bounds label names.
const MaxLabelNameLength = 255

var colorRe = regexp.MustCompile(`^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$`)

// normalizeColor accepts "#rgb", "rgb", "#rrggbb" or "rrggbb" and stores
// "#rrggbb" in lower case.
func normalizeColor(c string) (string, error) {
	m := colorRe.FindStringSubmatch(strings.TrimSpace(c))
	if m == nil {
		return "", apierr.Validation("[Color]: invalid color %q", c)
	}
	hex := strings.ToLower(m[1])
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	return "#" + hex, nil
}

func checkLabelName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apierr.Validation("[Name]: Required")
	case len(name) > MaxLabelNameLength:
		return apierr.Validation("[Name]: MaxSize")
	}
	return nil
}

// trackerWriter loads the repository of a route that changes its labels or
// milestones: writableTracker, then push access.
func (h Handlers) trackerWriter(ctx context.Context, owner, name string) (*store.Repository, error) {
	_, r, perm, err := h.svc().writableTracker(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	return r, requireWriter(perm)
}

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
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.CreateLabelOption{}
	}
	if err := checkLabelName(deref(o.Name)); err != nil {
		return h.Fail(err)
	}
	color, err := normalizeColor(deref(o.Color))
	if err != nil {
		return h.Fail(err)
	}
	t := h.Clock.Now()
	l := &store.Label{RepoID: r.ID, Name: deref(o.Name), Color: color, Description: deref(o.Description),
		Exclusive: flag(o.Exclusive), CreatedAt: t, UpdatedAt: t}
	if flag(o.IsArchived) {
		l.ArchivedAt = &t
	}
	if err := h.Store.Labels().Create(ctx, l); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateLabelCreated().WithPayload(convert.Label(app.BaseURL(params.HTTPRequest), r, l))
}

func (h Handlers) IssueEditLabel(ctx context.Context, params issue.IssueEditLabelParams) middleware.Responder {
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.EditLabelOption{}
	}
	if o.Name != nil {
		if err := checkLabelName(*o.Name); err != nil {
			return h.Fail(err)
		}
	}
	var color string
	if o.Color != nil {
		if color, err = normalizeColor(*o.Color); err != nil {
			return h.Fail(err)
		}
	}
	var l *store.Label
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		if l, err = h.Store.Labels().Find(ctx, r.ID, params.ID); err != nil {
			return err
		}
		t := h.Clock.Now()
		if o.Name != nil {
			l.Name = *o.Name
		}
		if o.Color != nil {
			l.Color = color
		}
		if o.Description != nil {
			l.Description = *o.Description
		}
		if o.Exclusive != nil {
			l.Exclusive = *o.Exclusive
		}
		if o.IsArchived != nil && *o.IsArchived != (l.ArchivedAt != nil) {
			l.ArchivedAt = nil
			if *o.IsArchived {
				l.ArchivedAt = &t
			}
		}
		l.UpdatedAt = t
		return h.Store.Labels().Update(ctx, l)
	})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditLabelOK().WithPayload(convert.Label(app.BaseURL(params.HTTPRequest), r, l))
}

func (h Handlers) IssueDeleteLabel(ctx context.Context, params issue.IssueDeleteLabelParams) middleware.Responder {
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Labels().Find(ctx, r.ID, params.ID); err != nil {
		return h.Fail(err)
	}
	if err := h.Store.Labels().Delete(ctx, params.ID); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteLabelNoContent()
}

// labelsOf returns all labels of issue is, by name.
func (s Service) labelsOf(ctx context.Context, is *store.Issue) ([]*store.Label, error) {
	m, err := s.Store.Labels().ForIssues(ctx, []int64{is.ID})
	if err != nil {
		return nil, err
	}
	return m[is.ID], nil
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

// labelChange says how Relabel combines the named labels with the issue's.
type labelChange int

const (
	labelsAdd labelChange = iota
	labelsReplace
	labelsRemove
)

// parseLabelRefs splits IssueLabelsOption.labels into ids and names: the
// reference accepts both kinds in one list.
func parseLabelRefs(items []any) ([]int64, []string, error) {
	var ids []int64
	var names []string
	for _, it := range items {
		switch v := it.(type) {
		case json.Number:
			id, err := v.Int64()
			if err != nil {
				return nil, nil, apierr.Validation("[Labels]: %q is not a label id", v.String())
			}
			ids = append(ids, id)
		case float64:
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return nil, nil, apierr.Validation("[Labels]: %v is not a label id", v)
			}
			ids = append(ids, int64(v))
		case string:
			names = append(names, v)
		default:
			return nil, nil, apierr.Validation("[Labels]: a label must be an integer or a string")
		}
	}
	return ids, names, nil
}

// resolveLabels finds r's labels among ids and names, in the order the
// request named them (for exclusive scopes the last one named wins).
func (s Service) resolveLabels(ctx context.Context, r *store.Repository, ids []int64, names []string) ([]*store.Label, error) {
	byID, err := s.Store.Labels().FindByIDs(ctx, r.ID, ids)
	if err != nil {
		return nil, err
	}
	byName, err := s.Store.Labels().FindByNames(ctx, r.ID, names)
	if err != nil {
		return nil, err
	}
	pos := map[int64]int{}
	for i, id := range ids {
		if _, ok := pos[id]; !ok {
			pos[id] = i
		}
	}
	namePos := map[string]int{}
	for i, n := range names {
		if _, ok := namePos[n]; !ok {
			namePos[n] = len(ids) + i
		}
	}
	out := make([]*store.Label, 0, len(byID)+len(byName))
	seen := map[int64]bool{}
	for _, l := range append(byID, byName...) {
		if p, ok := namePos[l.Name]; ok {
			if q, ok := pos[l.ID]; !ok || p > q {
				pos[l.ID] = p
			}
		}
		if !seen[l.ID] {
			seen[l.ID] = true
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Label) int { return pos[a.ID] - pos[b.ID] })
	return out, nil
}

// Relabel changes the labels of issue number index of r (writers only) and
// returns the issue's labels afterwards. Labels named that are not r's are
// ignored, as in the reference. Adding an exclusive label takes off the
// issue's other labels of the same scope.
func (s Service) Relabel(ctx context.Context, r *store.Repository, perm access.Permission, index int64, change labelChange, ids []int64, names []string) ([]*store.Label, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	if _, err := s.issue(ctx, r, index); err != nil {
		return nil, err
	}
	if err := requireWriter(perm); err != nil {
		return nil, err
	}
	named, err := s.resolveLabels(ctx, r, ids, names)
	if err != nil {
		return nil, err
	}
	var out []*store.Label
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		st := s.Store
		// Locking the issue serialises concurrent label changes, so two
		// exclusive labels of one scope cannot both end up on it.
		is, err := st.Issues().Lock(ctx, r.ID, index, s.Clock.Now())
		if err != nil {
			return err
		}
		current, err := s.labelsOf(ctx, is)
		if err != nil {
			return err
		}
		var add, remove []int64
		switch change {
		case labelsRemove:
			remove = labelIDs(named)
		case labelsReplace:
			remove = labelIDs(current)
			add = labelIDs(keepLastOfScope(named))
		case labelsAdd:
			named = keepLastOfScope(named)
			scopes := map[string]bool{}
			for _, l := range named {
				if sc := l.ExclusiveScope(); sc != "" {
					scopes[sc] = true
				}
			}
			for _, l := range current {
				if sc := l.ExclusiveScope(); sc != "" && scopes[sc] {
					remove = append(remove, l.ID)
				}
			}
			add = labelIDs(named)
		}
		if err := st.Labels().RemoveFromIssue(ctx, is.ID, remove); err != nil {
			return err
		}
		if err := st.Labels().AddToIssue(ctx, is.ID, add); err != nil {
			return err
		}
		out, err = s.labelsOf(ctx, is)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Webhook point: issues "label_updated".
	return out, nil
}

// relabel is the common part of the label-changing handlers.
func (h Handlers) relabel(ctx context.Context, owner, name string, index int64, change labelChange, body *models.IssueLabelsOption) (*store.Repository, []*store.Label, error) {
	s := h.svc()
	_, r, perm, err := s.userTracker(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	var items []any
	if body != nil {
		items = body.Labels
	}
	ids, names, err := parseLabelRefs(items)
	if err != nil {
		return nil, nil, err
	}
	labels, err := s.Relabel(ctx, r, perm, index, change, ids, names)
	return r, labels, err
}

func (h Handlers) IssueAddLabel(ctx context.Context, params issue.IssueAddLabelParams) middleware.Responder {
	r, labels, err := h.relabel(ctx, params.Owner, params.Repo, params.Index, labelsAdd, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(labels))
	return issue.NewIssueAddLabelOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, labels)).
		WithXTotalCount(total).WithLink(wholeList(params.HTTPRequest, total))
}

func (h Handlers) IssueReplaceLabels(ctx context.Context, params issue.IssueReplaceLabelsParams) middleware.Responder {
	r, labels, err := h.relabel(ctx, params.Owner, params.Repo, params.Index, labelsReplace, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(labels))
	return issue.NewIssueReplaceLabelsOK().WithPayload(convert.Labels(app.BaseURL(params.HTTPRequest), r, labels)).
		WithXTotalCount(total).WithLink(wholeList(params.HTTPRequest, total))
}

func (h Handlers) IssueClearLabels(ctx context.Context, params issue.IssueClearLabelsParams) middleware.Responder {
	s := h.svc()
	_, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := s.Relabel(ctx, r, perm, params.Index, labelsReplace, nil, nil); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueClearLabelsNoContent()
}

func (h Handlers) IssueRemoveLabel(ctx context.Context, params issue.IssueRemoveLabelParams) middleware.Responder {
	s := h.svc()
	_, r, perm, err := s.writableTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// The reference answers 422 for a label that is not the repository's.
	if _, err := h.Store.Labels().Find(ctx, r.ID, params.ID); isNotFound(err) {
		return h.Fail(apierr.Validation("label does not exist [id: %d]", params.ID))
	} else if err != nil {
		return h.Fail(err)
	}
	if _, err := s.Relabel(ctx, r, perm, params.Index, labelsRemove, []int64{params.ID}, nil); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueRemoveLabelNoContent()
}
