package issue

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/events"
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

// LabelInput is a new label as the caller asked for it. Color may be
// "#rgb", "rgb", "#rrggbb" or "rrggbb".
type LabelInput struct {
	Name, Color, Description string
	Exclusive, Archived      bool
}

// LabelEdit is a change to a label; nil fields stay as they are.
type LabelEdit struct {
	Name, Color, Description *string
	Exclusive, Archived      *bool
}

// CreateLabel adds a label to r (writers only).
func (s Service) CreateLabel(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, in LabelInput) (*store.Label, error) {
	if err := canManage(r, perm); err != nil {
		return nil, err
	}
	l, err := s.newLabel(in)
	if err != nil {
		return nil, err
	}
	l.RepoID = r.ID
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Labels().Create(ctx, l); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.LabelCreated, doer, r, l.ID, l.Name)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// newLabel checks in and makes the label it asks for, of no owner yet.
func (s Service) newLabel(in LabelInput) (*store.Label, error) {
	if err := checkRequired("Name", in.Name, MaxLabelNameLength); err != nil {
		return nil, err
	}
	color, err := normalizeColor(in.Color)
	if err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	l := &store.Label{Name: in.Name, Color: color, Description: in.Description,
		Exclusive: in.Exclusive, CreatedAt: t, UpdatedAt: t}
	if in.Archived {
		l.ArchivedAt = &t
	}
	return l, nil
}

// InitLabels gives the new repository r its first labels, in order. The
// repository service calls it inside the transaction that creates r; the
// labels are part of that creation, so they record no events of their own.
func (s Service) InitLabels(ctx context.Context, r *store.Repository, in []LabelInput) error {
	t := s.Clock.Now()
	for _, li := range in {
		if err := checkRequired("Name", li.Name, MaxLabelNameLength); err != nil {
			return err
		}
		color, err := normalizeColor(li.Color)
		if err != nil {
			return err
		}
		l := &store.Label{RepoID: r.ID, Name: li.Name, Color: color, Description: li.Description,
			Exclusive: li.Exclusive, CreatedAt: t, UpdatedAt: t}
		if err := s.Store.Labels().Create(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// EditLabel changes label id of r (writers only).
func (s Service) EditLabel(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64, in LabelEdit) (*store.Label, error) {
	if err := canManage(r, perm); err != nil {
		return nil, err
	}
	if err := checkLabelEdit(&in); err != nil {
		return nil, err
	}
	var l *store.Label
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		var err error
		if l, err = s.Store.Labels().Find(ctx, r.ID, id); err != nil {
			return err
		}
		if changed, err := s.updateLabel(ctx, l, in); err != nil || !changed {
			return err
		}
		return s.emitNamed(ctx, events.LabelEdited, doer, r, l.ID, l.Name)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// checkLabelEdit checks the fields in sets and normalizes its color.
func checkLabelEdit(in *LabelEdit) error {
	if in.Name != nil {
		if err := checkRequired("Name", *in.Name, MaxLabelNameLength); err != nil {
			return err
		}
	}
	if in.Color != nil {
		color, err := normalizeColor(*in.Color)
		if err != nil {
			return err
		}
		in.Color = &color
	}
	return nil
}

// updateLabel applies in to l and stores it, telling whether anything
// changed.
func (s Service) updateLabel(ctx context.Context, l *store.Label, in LabelEdit) (bool, error) {
	t := s.Clock.Now()
	var changed bool
	apply(&changed, &l.Name, in.Name)
	apply(&changed, &l.Color, in.Color)
	apply(&changed, &l.Description, in.Description)
	apply(&changed, &l.Exclusive, in.Exclusive)
	stamp(&changed, &l.ArchivedAt, in.Archived, t)
	l.UpdatedAt = t
	return changed, s.Store.Labels().Update(ctx, l)
}

// CreateOrgLabel adds a label to organization org, usable on each of its
// repositories. The caller has checked that doer owns org. Its writes are
// not confined to one repository: the label reaches all of org's.
func (s Service) CreateOrgLabel(ctx context.Context, doer, org *store.User, in LabelInput) (*store.Label, error) {
	l, err := s.newLabel(in)
	if err != nil {
		return nil, err
	}
	l.OrgID = org.ID
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Labels().Create(ctx, l); err != nil {
			return err
		}
		return s.emitOrgLabel(ctx, events.LabelCreated, doer, l)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// EditOrgLabel changes label id of organization org (the caller has
// checked that doer owns org).
func (s Service) EditOrgLabel(ctx context.Context, doer, org *store.User, id int64, in LabelEdit) (*store.Label, error) {
	if err := checkLabelEdit(&in); err != nil {
		return nil, err
	}
	var l *store.Label
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		if l, err = s.Store.Labels().FindOfOrg(ctx, org.ID, id); err != nil {
			return err
		}
		if changed, err := s.updateLabel(ctx, l, in); err != nil || !changed {
			return err
		}
		return s.emitOrgLabel(ctx, events.LabelEdited, doer, l)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// DeleteOrgLabel removes label id of organization org (the caller has
// checked that doer owns org), taking it off the issues of every
// repository.
func (s Service) DeleteOrgLabel(ctx context.Context, doer, org *store.User, id int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		l, err := s.Store.Labels().FindOfOrg(ctx, org.ID, id)
		if err != nil {
			return err
		}
		if err := s.Store.Labels().Delete(ctx, l.ID); err != nil {
			return err
		}
		return s.emitOrgLabel(ctx, events.LabelDeleted, doer, l)
	})
}

// DeleteLabel removes label id of r (writers only), taking it off its
// issues.
func (s Service) DeleteLabel(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64) error {
	if err := canManage(r, perm); err != nil {
		return err
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		l, err := s.Store.Labels().Find(ctx, r.ID, id)
		if err != nil {
			return err
		}
		if err := s.Store.Labels().Delete(ctx, l.ID); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.LabelDeleted, doer, r, l.ID, l.Name)
	})
}

// labelsOf returns all labels of issue is, by name.
func (s Service) labelsOf(ctx context.Context, is *store.Issue) ([]*store.Label, error) {
	m, err := s.Store.Labels().ForIssues(ctx, []int64{is.ID})
	if err != nil {
		return nil, err
	}
	return m[is.ID], nil
}

// LabelChange says how Relabel combines the named labels with the issue's.
type LabelChange int

// The ways of changing an issue's labels.
const (
	LabelsAdd LabelChange = iota
	LabelsReplace
	LabelsRemove
	// LabelsClear takes every label off (the clear operation, announced
	// as label_cleared; a replacement by no labels is label_updated).
	LabelsClear
)

// LabelRefs names labels by id and by name; the reference accepts both
// kinds in one list. The order matters for exclusive scopes: the label
// named last wins.
type LabelRefs struct {
	IDs   []int64
	Names []string
}

// resolveLabels finds r's labels among refs, in the order the request
// named them.
func (s Service) resolveLabels(ctx context.Context, r *store.Repository, refs LabelRefs) ([]*store.Label, error) {
	ids, names := refs.IDs, refs.Names
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
func (s Service) Relabel(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64, change LabelChange, refs LabelRefs) ([]*store.Label, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	if _, err := s.issue(ctx, r, index); err != nil {
		return nil, err
	}
	if err := requireWriter(perm); err != nil {
		return nil, err
	}
	named, err := s.resolveLabels(ctx, r, refs)
	if err != nil {
		return nil, err
	}
	var out []*store.Label
	// Locking the issue serialises concurrent label changes, so two
	// exclusive labels of one scope cannot both end up on it.
	err = s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		st := s.Store
		current, err := s.labelsOf(ctx, is)
		if err != nil {
			return err
		}
		var add, remove []int64
		switch change {
		case LabelsRemove:
			remove = labelIDs(named)
		case LabelsReplace:
			remove = labelIDs(current)
			add = labelIDs(keepLastOfScope(named))
		case LabelsClear:
			remove = labelIDs(current)
		case LabelsAdd:
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
		if out, err = s.labelsOf(ctx, is); err != nil || sameSet(labelIDs(current), labelIDs(out)) {
			return err
		}
		was, now := labelIDs(current), labelIDs(out)
		if err := s.record(ctx, doer, is, labelEvents(setDiff(was, now), setDiff(now, was))...); err != nil {
			return err
		}
		return s.emitIssueEdit(ctx, doer, is, events.Issue{Cleared: change == LabelsClear}, events.IssueLabelsChanged)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Unlabel takes label labelID off issue number index of r (writers only).
// Unlike the labels Relabel ignores, a label that is not r's is refused
// with 422, as the reference does.
func (s Service) Unlabel(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index, labelID int64) error {
	if err := writable(r); err != nil {
		return err
	}
	if found, err := s.Store.Labels().FindByIDs(ctx, r.ID, []int64{labelID}); err != nil {
		return err
	} else if len(found) == 0 {
		return apierr.Validation("label does not exist [id: %d]", labelID)
	}
	_, err := s.Relabel(ctx, doer, r, perm, index, LabelsRemove, LabelRefs{IDs: []int64{labelID}})
	return err
}
