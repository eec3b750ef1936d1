package issue

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/store"
)

// The reference's messages for refused permissions.
const (
	msgWriter = "user should have a permission to write to a repo"
	msgAdmin  = "user should be an owner or a collaborator with admin write of a repository"
	msgReader = "user should have specific read permission or be a repo admin or a site admin"
)

// MaxTitleLength is the reference's limit on issue titles.
const MaxTitleLength = 255

// Service holds one function per issue-tracker action (issues, comments,
// reactions, tracked time, labels, milestones, projects): handlers call
// these and nothing else writes, and each announces its change through
// Deps.Events inside its transaction (see notify.go for which events).
// Inputs are domain values, not API models.
type Service struct{ *app.Deps }

func (h Handlers) svc() Service { return Service{h.Deps} }

// IssuesEnabled tells whether r uses its built-in issue tracker (an
// external tracker replaces it, as in the reference).
func IssuesEnabled(r *store.Repository) bool {
	return r.HasIssues && r.ExternalTrackerURL == ""
}

// TimeTrackerEnabled tells whether time may be tracked on r's issues.
func TimeTrackerEnabled(r *store.Repository) bool {
	return IssuesEnabled(r) && r.EnableTimeTracker
}

// Tracker loads the repository of an issue-tracker route with p's
// permission: 404 when p may not see it, or when it has neither issues
// nor pull requests (the reference's mustEnableIssuesOrPulls).
func (s Service) Tracker(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error) {
	r, perm, err := s.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, perm, err
	}
	// A unit switched off grants nothing, so this is also the
	// reference's mustEnableIssuesOrPulls.
	if !perm.CanRead(access.UnitIssues) && !perm.CanRead(access.UnitPulls) {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

// repoLoader loads the repository of a route with p's permission, like
// Tracker.
type repoLoader func(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error)

// signedIn is load for routes that need a signed-in caller: 401 for
// anonymous callers before anything is looked up.
func (s Service) signedIn(ctx context.Context, load repoLoader, owner, name string) (*auth.Principal, *store.Repository, access.Permission, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, access.None, err
	}
	r, perm, err := load(ctx, p, owner, name)
	if err != nil {
		return nil, nil, access.None, err
	}
	return p, r, perm, nil
}

// remove is the whole of a deletion route: it loads the repository with
// load for the signed-in caller, then has del delete what key names.
func remove[K any](ctx context.Context, s Service, load repoLoader, owner, name string, key K,
	del func(context.Context, *store.User, *store.Repository, access.Permission, K) error) error {
	p, r, perm, err := s.signedIn(ctx, load, owner, name)
	if err != nil {
		return err
	}
	return del(ctx, p.User, r, perm, key)
}

// userTracker is Tracker for a signed-in caller.
func (s Service) userTracker(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, access.Permission, error) {
	return s.signedIn(ctx, s.Tracker, owner, name)
}

// writableTracker loads the repository of an issue-tracker change: 401 for
// anonymous callers, 404 when the caller may not see the tracker, 423 when
// the repository is archived.
func (s Service) writableTracker(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, access.Permission, error) {
	p, r, perm, err := s.userTracker(ctx, owner, name)
	if err != nil {
		return nil, nil, access.None, err
	}
	if err := writable(r); err != nil {
		return nil, nil, access.None, err
	}
	return p, r, perm, nil
}

// writable refuses any change to an archived repository.
func writable(r *store.Repository) error {
	if r.IsArchived {
		return apierr.RepoArchived()
	}
	return nil
}

// writer tells whether perm may change the tracker's issues (isPull false)
// or pull requests.
func writer(perm access.Permission, isPull bool) bool {
	if isPull {
		return perm.CanWrite(access.UnitPulls)
	}
	return perm.CanWrite(access.UnitIssues)
}

// trackerWriter tells whether perm may change issues or pull requests,
// which is what the tracker's shared parts (labels, milestones, comments
// in general) ask, as the reference's reqRepoWriter(issues, pulls) does.
func trackerWriter(perm access.Permission) bool {
	return perm.CanWrite(access.UnitIssues) || perm.CanWrite(access.UnitPulls)
}

// requireWriter refuses callers who may change neither issues nor pull
// requests.
func requireWriter(perm access.Permission) error {
	if !trackerWriter(perm) {
		return apierr.Forbidden(msgWriter)
	}
	return nil
}

// checkRequired refuses a blank value of field, and one longer than max
// bytes (0: no limit), with the reference's messages.
func checkRequired(field, value string, max int) error {
	switch {
	case strings.TrimSpace(value) == "":
		return apierr.Validation("[%s]: Required", field)
	case max > 0 && len(value) > max:
		return apierr.Validation("[%s]: MaxSize", field)
	}
	return nil
}

// canManage guards changes to r's labels, milestones and projects: 423
// when r is archived, 403 for callers who cannot write to it.
func canManage(r *store.Repository, perm access.Permission) error {
	if err := writable(r); err != nil {
		return err
	}
	return requireWriter(perm)
}

// canManageProjects is canManage for the projects unit.
func canManageProjects(r *store.Repository, perm access.Permission) error {
	if err := writable(r); err != nil {
		return err
	}
	if !perm.CanWrite(access.UnitProjects) {
		return apierr.Forbidden(msgWriter)
	}
	return nil
}

// issue loads issue number index of r. An issue (not a pull request) of a
// repository whose issues are disabled does not exist for the API.
func (s Service) issue(ctx context.Context, r *store.Repository, index int64) (*store.Issue, error) {
	is, err := s.Store.Issues().FindByIndex(ctx, r.ID, index)
	if err != nil {
		return nil, err
	}
	if !is.IsPull && !IssuesEnabled(r) {
		return nil, apierr.NotFound("not found")
	}
	return is, nil
}

// comment loads comment id with its issue; a comment of another
// repository answers 404 like a missing one.
func (s Service) comment(ctx context.Context, r *store.Repository, id int64) (*store.Comment, *store.Issue, error) {
	c, err := s.Store.Comments().FindByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	is, err := s.Store.Issues().FindByID(ctx, c.IssueID)
	if err != nil {
		return nil, nil, err
	}
	if is.RepoID != r.ID || (!is.IsPull && !IssuesEnabled(r)) {
		return nil, nil, apierr.NotFound("not found")
	}
	return c, is, nil
}

// dueDate keeps only the calendar date of t, in the offset the client
// wrote it in, as the end of that day: a due date is a day, and a client
// far from UTC must get back the date it sent.
func dueDate(t strfmt.DateTime) time.Time {
	y, m, d := time.Time(t).Date()
	return time.Date(y, m, d, 23, 59, 59, 0, time.UTC)
}

// QueryTime converts an optional query time.
func QueryTime(t *strfmt.DateTime) *time.Time {
	if t == nil {
		return nil
	}
	v := time.Time(*t).UTC()
	return &v
}

// isNotFound tells the store's not-found apart from other failures.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// mentionRe finds @name mentions, with the reference's boundaries: start
// of text, white space or an opening bracket before; a name made of word
// characters, dots and dashes.
var mentionRe = regexp.MustCompile(`(?:^|[\s(\[])@([0-9A-Za-z_][-.\w]*)`)

// mentions returns the distinct lower-case names mentioned in text.
func mentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionRe.FindAllStringSubmatch(text, -1) {
		name := strings.ToLower(strings.TrimRight(m[1], "."))
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// splitList splits a comma-separated query value, dropping blanks.
func splitList(s *string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, part := range strings.Split(*s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// wholeList is the Link header of an answer that holds a whole list (the
// labels of an issue after a change): one page, so only first and last.
func wholeList(r *http.Request, total int64) string {
	return paging.Link(r, paging.Params{Page: 1, Limit: int(max(total, 1))}, total)
}
