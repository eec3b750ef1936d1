package sqlstore

import (
	"context"

	"repohost/store"
)

type orgStore struct{ d *DB }

// byLowerName orders accounts by name; lower_name is unique, so it is a
// total order on its own.
var byLowerName = listOrder{{"users.lower_name", false}}

func (s orgStore) FindMember(ctx context.Context, orgID, userID int64) (*store.OrgMember, error) {
	var m store.OrgMember
	if err := s.d.conn(ctx).Where("org_id = ? AND user_id = ?", orgID, userID).Take(&m).Error; err != nil {
		return nil, translate(err, "find member")
	}
	return &m, nil
}

func (s orgStore) SetMemberPublic(ctx context.Context, orgID, userID int64, public bool) error {
	res := s.d.conn(ctx).Model(&store.OrgMember{}).Where("org_id = ? AND user_id = ?", orgID, userID).Update("is_public", public)
	return affected(res, "set member visibility")
}

func (s orgStore) CountOwners(ctx context.Context, orgID int64) (int64, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.OrgMember{}).Where("org_id = ? AND is_owner = ?", orgID, true).Count(&n).Error
	return n, translate(err, "count owners")
}

func (s orgStore) ListMembers(ctx context.Context, orgID int64, publicOnly bool, p store.Page) ([]*store.User, int64, error) {
	db := s.d.conn(ctx).Model(&store.User{}).
		Joins("JOIN org_members ON org_members.user_id = users.id").
		Where("org_members.org_id = ?", orgID)
	if publicOnly {
		db = db.Where("org_members.is_public = ?", true)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count members")
	}
	out, err := readPage[store.User](db.Select("users.*"), byLowerName, p, total)
	return out, total, translate(err, "list members")
}

func (s orgStore) ListUserOrgs(ctx context.Context, userID int64, visibilities []store.Visibility, publicOnly bool, p store.Page) ([]*store.User, int64, error) {
	db := s.d.conn(ctx).Model(&store.User{}).
		Joins("JOIN org_members ON org_members.org_id = users.id").
		Where("org_members.user_id = ?", userID)
	if publicOnly {
		db = db.Where("org_members.is_public = ?", true)
	}
	if len(visibilities) > 0 {
		db = db.Where("users.visibility IN ?", visibilities)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count orgs")
	}
	out, err := readPage[store.User](db.Select("users.*"), byLowerName, p, total)
	return out, total, translate(err, "list orgs")
}

func (s orgStore) DeleteOrgMembers(ctx context.Context, orgID int64) error {
	return translate(s.d.conn(ctx).Where("org_id = ?", orgID).Delete(&store.OrgMember{}).Error, "delete members")
}

func (s orgStore) DeleteUserMemberships(ctx context.Context, userID int64) error {
	return translate(s.d.conn(ctx).Where("user_id = ?", userID).Delete(&store.OrgMember{}).Error, "delete memberships")
}

func (s orgStore) ListMemberships(ctx context.Context, userID int64) ([]*store.OrgMember, error) {
	var out []*store.OrgMember
	err := s.d.conn(ctx).Where("user_id = ?", userID).Find(&out).Error
	return out, translate(err, "list memberships")
}

func (s orgStore) ListVisible(ctx context.Context, memberID int64, visibilities []store.Visibility, p store.Page) ([]*store.User, int64, error) {
	db := s.d.conn(ctx).Model(&store.User{}).Where("type = ?", store.UserTypeOrganization)
	switch {
	case visibilities == nil:
		// every organization
	case memberID != 0:
		db = db.Where("(visibility IN ? OR id IN (SELECT org_id FROM org_members WHERE user_id = ?))", visibilities, memberID)
	case len(visibilities) == 0:
		return []*store.User{}, 0, nil
	default:
		db = db.Where("visibility IN ?", visibilities)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count organizations")
	}
	out, err := readPage[store.User](db, byLowerName, p, total)
	return out, total, translate(err, "list organizations")
}
