package convert

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/go-openapi/strfmt"

	"repohost/models"
	"repohost/store"
)

// Ghost stands in for an account that no longer exists, as the reference
// shows the author of content whose account was deleted.
func Ghost() *store.User {
	return &store.User{ID: -1, Name: "Ghost", LowerName: "ghost", FullName: "Ghost"}
}

// MigratedUser stands for someone who has no account here, named by a
// migration from a Gitea server: "name(gitea)", with no id, as the
// reference shows the authors of migrated reactions.
func MigratedUser(name string) *store.User {
	n := name + "(gitea)"
	return &store.User{Name: n, LowerName: strings.ToLower(n)}
}

// IssueAttrs is what rendering a page of issues needs besides the rows,
// batch-loaded once per page (impl/issue does the loading).
type IssueAttrs struct {
	Repos         map[int64]*store.Repository // with owners
	Users         map[int64]*store.User
	Labels        map[int64][]*store.Label   // by issue id
	Assignees     map[int64][]int64          // by issue id
	Milestones    map[int64]*store.Milestone // by milestone id
	Projects      map[int64][]*store.Project // by issue id
	ProjectCounts map[int64]store.ProjectCounts
	Pulls         map[int64]*store.PullRequest // by issue id, for pull requests

	// What a page renders many times (its posters, assignees, labels) is
	// rendered once per page and shared by the issues that show it; the
	// rendered models are never changed afterwards.
	renderedUsers  map[renderedUser]*models.User
	renderedLabels map[int64]*models.Label
}

type renderedUser struct {
	id     int64
	viewer *store.User
}

// user returns the loaded user, or the ghost.
func (a *IssueAttrs) user(id int64) *store.User {
	if u := a.Users[id]; u != nil {
		return u
	}
	return Ghost()
}

// renderUser renders the loaded user id as viewer sees it, once per page.
func (a *IssueAttrs) renderUser(base string, id int64, viewer *store.User) *models.User {
	k := renderedUser{id: id, viewer: viewer}
	if u := a.renderedUsers[k]; u != nil {
		return u
	}
	if a.renderedUsers == nil {
		a.renderedUsers = map[renderedUser]*models.User{}
	}
	u := User(base, a.user(id), viewer)
	a.renderedUsers[k] = u
	return u
}

// renderLabels renders an issue's labels of r, each label once per page.
func (a *IssueAttrs) renderLabels(base string, r *store.Repository, ls []*store.Label) []*models.Label {
	out := make([]*models.Label, 0, len(ls))
	for _, l := range ls {
		m := a.renderedLabels[l.ID]
		if m == nil {
			if a.renderedLabels == nil {
				a.renderedLabels = map[int64]*models.Label{}
			}
			m = Label(base, r, l)
			a.renderedLabels[l.ID] = m
		}
		out = append(out, m)
	}
	return out
}

func repoAPI(base string, r *store.Repository) string { return base + "api/v1/repos/" + r.FullName() }

// IssueHTMLURL is the web address of issue number index of r.
func IssueHTMLURL(base string, r *store.Repository, index int64) string {
	return fmt.Sprintf("%s%s/issues/%d", base, r.FullName(), index)
}

func state(closed bool) string {
	if closed {
		return "closed"
	}
	return "open"
}

// Issue renders is as seen by viewer. The repository must be in a.Repos.
func Issue(base string, is *store.Issue, a *IssueAttrs, viewer *store.User) *models.Issue {
	r := a.Repos[is.RepoID]
	out := &models.Issue{
		ID:               is.ID,
		URL:              fmt.Sprintf("%s/issues/%d", repoAPI(base, r), is.Index),
		HTMLURL:          IssueHTMLURL(base, r, is.Index),
		Index:            is.Index,
		User:             a.renderUser(base, is.PosterID, viewer),
		Title:            is.Title,
		Body:             is.Body,
		Ref:              is.Ref,
		Labels:           a.renderLabels(base, r, a.Labels[is.ID]),
		State:            state(is.IsClosed),
		IsLocked:         is.IsLocked,
		PinOrder:         is.PinOrder,
		Comments:         is.NumComments,
		Created:          TimeOf(is.CreatedAt),
		Updated:          TimeOf(is.UpdatedAt),
		Closed:           Time(is.ClosedAt),
		Deadline:         Time(is.Deadline),
		ContentVersion:   is.ContentVersion,
		OriginalAuthor:   is.OriginalAuthor,
		OriginalAuthorID: is.OriginalAuthorID,
		Attachments:      []*models.Attachment{},
		Projects:         []*models.Project{},
		Repository: &models.RepositoryMeta{
			ID: r.ID, Name: r.Name, Owner: r.Owner.Name, FullName: r.FullName(),
		},
	}
	if pr := a.Pulls[is.ID]; pr != nil {
		out.PullRequest = &models.PullRequestMeta{
			HTMLURL:          PullHTMLURL(base, r, is.Index),
			HasMerged:        pr.HasMerged,
			Merged:           Time(pr.MergedAt),
			IsWorkInProgress: IsWorkInProgress(is.Title),
		}
	}
	if m := a.Milestones[is.MilestoneID]; m != nil && is.MilestoneID != 0 {
		out.Milestone = Milestone(m)
	}
	// Assignees are rendered without a viewer, as the reference does, so
	// they always show the placeholder address.
	for _, id := range a.Assignees[is.ID] {
		out.Assignees = append(out.Assignees, a.renderUser(base, id, nil))
	}
	if len(out.Assignees) > 0 {
		out.Assignee = out.Assignees[0]
	}
	for _, pr := range a.Projects[is.ID] {
		out.Projects = append(out.Projects, Project(base, r, pr, a.ProjectCounts[pr.ID], a.user(pr.CreatorID), viewer))
	}
	return out
}

// Label renders a label usable on r, r's own or (OrgID set) that of the
// organization owning r; the reference sends the color without "#".
func Label(base string, r *store.Repository, l *store.Label) *models.Label {
	if l.OrgID != 0 && r.Owner != nil {
		return OrgLabel(base, r.Owner, l)
	}
	return label(l, fmt.Sprintf("%s/labels/%d", repoAPI(base, r), l.ID))
}

// OrgLabel renders a label of organization org.
func OrgLabel(base string, org *store.User, l *store.Label) *models.Label {
	return label(l, fmt.Sprintf("%sapi/v1/orgs/%s/labels/%d", base, url.PathEscape(org.Name), l.ID))
}

func label(l *store.Label, u string) *models.Label {
	return &models.Label{
		ID:          l.ID,
		Name:        l.Name,
		Color:       strings.TrimPrefix(l.Color, "#"),
		Description: l.Description,
		Exclusive:   l.Exclusive,
		IsArchived:  l.ArchivedAt != nil,
		URL:         u,
	}
}

// OrgLabels renders a list of labels of organization org, never nil.
func OrgLabels(base string, org *store.User, ls []*store.Label) []*models.Label {
	out := make([]*models.Label, 0, len(ls))
	for _, l := range ls {
		out = append(out, OrgLabel(base, org, l))
	}
	return out
}

// Labels renders a list of labels of r, never nil.
func Labels(base string, r *store.Repository, ls []*store.Label) []*models.Label {
	out := make([]*models.Label, 0, len(ls))
	for _, l := range ls {
		out = append(out, Label(base, r, l))
	}
	return out
}

// Milestone renders a milestone with its counts.
func Milestone(m *store.Milestone) *models.Milestone {
	return &models.Milestone{
		ID:           m.ID,
		Title:        m.Title,
		Description:  m.Description,
		State:        state(m.IsClosed),
		OpenIssues:   m.NumIssues - m.NumClosedIssues,
		ClosedIssues: m.NumClosedIssues,
		Created:      TimeOf(m.CreatedAt),
		Updated:      TimeOf(m.UpdatedAt),
		Closed:       Time(m.ClosedAt),
		Deadline:     Time(m.Deadline),
	}
}

// Comment renders a comment on issue is of r; poster may be nil (ghost).
func Comment(base string, r *store.Repository, is *store.Issue, c *store.Comment, poster, viewer *store.User) *models.Comment {
	if poster == nil {
		poster = Ghost()
	}
	// As the reference renders it: a pull request's comment points at the
	// pull request (pull_request_url, /pulls/N) and has no issue_url.
	issueURL, prURL, page := IssueHTMLURL(base, r, is.Index), "", ""
	if is.IsPull {
		issueURL, prURL = "", PullHTMLURL(base, r, is.Index)
	}
	page = issueURL + prURL
	return &models.Comment{
		ID:               c.ID,
		HTMLURL:          fmt.Sprintf("%s#issuecomment-%d", page, c.ID),
		IssueURL:         issueURL,
		PRURL:            prURL,
		User:             User(base, poster, viewer),
		Body:             c.Body,
		Attachments:      []*models.Attachment{},
		OriginalAuthor:   c.OriginalAuthor,
		OriginalAuthorID: c.OriginalAuthorID,
		Created:          TimeOf(c.CreatedAt),
		Updated:          TimeOf(c.UpdatedAt),
	}
}

// Reaction renders a reaction by user (nil: ghost).
func Reaction(base string, rc *store.Reaction, user, viewer *store.User) *models.Reaction {
	if user == nil {
		user = Ghost()
	}
	return &models.Reaction{Reaction: rc.Type, Created: TimeOf(rc.CreatedAt), User: User(base, user, viewer)}
}

// TrackedTime renders an entry with its issue already rendered.
func TrackedTime(t *store.TrackedTime, user *store.User, issue *models.Issue) *models.TrackedTime {
	if user == nil {
		user = Ghost()
	}
	return &models.TrackedTime{
		ID:       t.ID,
		Created:  TimeOf(t.CreatedAt),
		Time:     t.Time,
		IssueID:  t.IssueID,
		Issue:    issue,
		UserID:   user.ID,
		UserName: user.Name,
	}
}

// Project renders a repository project of r with its counts.
func Project(base string, r *store.Repository, pr *store.Project, n store.ProjectCounts, creator, viewer *store.User) *models.Project {
	if creator == nil {
		creator = Ghost()
	}
	return &models.Project{
		ID:              pr.ID,
		Title:           pr.Title,
		Description:     pr.Description,
		RepoID:          pr.RepoID,
		OwnerID:         0, // a repository project has no owning user, as in the reference
		CreatorID:       pr.CreatorID,
		Creator:         User(base, creator, viewer),
		IsClosed:        pr.IsClosed,
		State:           state(pr.IsClosed),
		CardType:        pr.CardType,
		TemplateType:    pr.TemplateType,
		Type:            "repository",
		HTMLURL:         strfmt.URI(fmt.Sprintf("%s%s/projects/%d", base, r.FullName(), pr.ID)),
		NumIssues:       n.Issues,
		NumClosedIssues: n.Closed,
		NumOpenIssues:   n.Issues - n.Closed,
		Created:         TimeOf(pr.CreatedAt),
		Updated:         TimeOf(pr.UpdatedAt),
		Closed:          Time(pr.ClosedAt),
	}
}
