package repo

// A migration with service "gitea" (another Gitea, or this server, which
// speaks the same API) brings, besides the git data, what the caller asked
// for of the source repository's labels, milestones, releases (with their
// files), issues and pull requests (with their comments, reactions and
// assignees, and the pull requests' reviews with their line comments).
// They are read
// through the official SDK, whose every connection is dialled through the
// migrations' connect guard, and written here as the reference's migration
// writes them: numbers, dates and states kept, authors who have no account
// here recorded by name and id (original_author, original_author_id) with
// the migrating user as poster, no notification or webhook per item. All
// of it is downloaded first; then one transaction writes every row, the
// migration's end and the refs' record (branches, tags and the pull
// requests' refs/pull/N/head), so a failure or a crash leaves nothing
// written, and a second run of the job starts from a clean slate.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/apierr"
	"repohost/impl/pulls"
	"repohost/impl/release"
	"repohost/store"
	"repohost/store/gitstore"
)

// The items a migration may bring beyond the git data, as the API and
// RepoMigration.Items name them.
const (
	itemLabels       = "labels"
	itemMilestones   = "milestones"
	itemReleases     = "releases"
	itemIssues       = "issues"
	itemPullRequests = "pull_requests"
)

// migrationItems are the items one migration brings.
type migrationItems struct {
	Labels, Milestones, Releases, Issues, PullRequests bool
}

func (m migrationItems) any() bool {
	return m.Labels || m.Milestones || m.Releases || m.Issues || m.PullRequests
}

func (m migrationItems) String() string {
	var out []string
	for _, it := range []struct {
		on   bool
		name string
	}{{m.Labels, itemLabels}, {m.Milestones, itemMilestones}, {m.Releases, itemReleases}, {m.Issues, itemIssues}, {m.PullRequests, itemPullRequests}} {
		if it.on {
			out = append(out, it.name)
		}
	}
	return strings.Join(out, ",")
}

func parseMigrationItems(s string) migrationItems {
	var m migrationItems
	for _, it := range strings.Split(s, ",") {
		switch it {
		case itemLabels:
			m.Labels = true
		case itemMilestones:
			m.Milestones = true
		case itemReleases:
			m.Releases = true
		case itemIssues:
			m.Issues = true
		case itemPullRequests:
			m.PullRequests = true
		}
	}
	return m
}

// itemsOf decides, as the reference does, what a migration brings beyond
// the git data: nothing for a mirror (its items are turned off) or for
// plain git (which has no API: the items are ignored); the items asked
// for from a Gitea-dialect source; a refusal for the items of any other
// service, and for a wiki, which this server does not keep.
func itemsOf(in MigrateInput) (migrationItems, error) {
	if in.Wiki {
		return migrationItems{}, apierr.Validation("wiki migration is not supported: this server keeps no wikis")
	}
	m := migrationItems{Labels: in.Labels, Milestones: in.Milestones, Releases: in.Releases, Issues: in.Issues, PullRequests: in.PullRequests}
	switch {
	case in.Mirror, in.Service == "", in.Service == "git":
		return migrationItems{}, nil
	case in.Service == "gitea":
		return m, nil
	case m.any():
		return migrationItems{}, apierr.Validation("migrating %s from a %s server is not supported: only the git data, or with service gitea the issues, labels, milestones, releases and pull requests", m, in.Service)
	}
	return migrationItems{}, nil
}

// migrationHTTP is the HTTP client of a migration's API calls and
// downloads: every connection, redirects included, is dialled through the
// connect guard, which checks the address actually reached.
func (s Service) migrationHTTP() (*http.Client, error) {
	guard, err := s.MigrationGuard()
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           guard.DialContext(dialer),
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 2 * time.Minute,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}, nil
}

// giteaSource is one repository of a Gitea-dialect server, read through
// the SDK.
type giteaSource struct {
	c           *gitea.Client
	http        *http.Client
	base        *url.URL // the server's root
	owner, name string
	user        string
	secret      string
}

// sourceOf splits a clone address into the server's root and the
// repository's owner and name, as the reference's Gitea downloader does
// (the last two path segments, without ".git").
func sourceOf(addr string) (base *url.URL, owner, name string, err error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, "", "", err
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return nil, "", "", fmt.Errorf("%s names no repository (owner/name)", addr)
	}
	owner, name = parts[len(parts)-2], strings.TrimSuffix(parts[len(parts)-1], ".git")
	base = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/" + strings.Join(parts[:len(parts)-2], "/")}
	base.Path = strings.TrimSuffix(base.Path, "/")
	return base, owner, name, nil
}

func (s Service) openGiteaSource(ctx context.Context, m *store.RepoMigration) (*giteaSource, error) {
	hc, err := s.migrationHTTP()
	if err != nil {
		return nil, err
	}
	base, owner, name, err := sourceOf(m.CloneAddr)
	if err != nil {
		return nil, err
	}
	opts := []gitea.ClientOption{gitea.SetHTTPClient(hc), gitea.SetContext(ctx), gitea.SetUserAgent(migrationUserAgent)}
	switch {
	case m.AuthUsername == "oauth2" && m.AuthSecret != "":
		// A token given without a user name (see cloneAddr).
		opts = append(opts, gitea.SetToken(m.AuthSecret))
	case m.AuthUsername != "" || m.AuthSecret != "":
		opts = append(opts, gitea.SetBasicAuth(m.AuthUsername, m.AuthSecret))
	}
	c, err := gitea.NewClient(base.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", base.Redacted(), err)
	}
	if _, _, err := c.GetRepo(owner, name); err != nil {
		return nil, fmt.Errorf("read %s/%s on %s: %w", owner, name, base.Redacted(), err)
	}
	return &giteaSource{c: c, http: hc, base: base, owner: owner, name: name, user: m.AuthUsername, secret: m.AuthSecret}, nil
}

// migrationUserAgent is how a migration's requests name themselves.
const migrationUserAgent = "repohost-migration"

// pageSize is how many items one request of a migration asks for.
const pageSize = 50

// all reads every page of a list.
func all[T any](list func(gitea.ListOptions) ([]T, *gitea.Response, error)) ([]T, error) {
	var out []T
	for page := 1; ; page++ {
		got, _, err := list(gitea.ListOptions{Page: page, PageSize: pageSize})
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if len(got) < pageSize {
			return out, nil
		}
	}
}

// download streams a release asset of the source. Only addresses on the
// source's own server are fetched (and they carry the migration's
// credentials); an asset elsewhere is refused, as the reference does.
func (g *giteaSource) download(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != g.base.Scheme || u.Host != g.base.Host || !strings.HasPrefix(u.Path, g.base.Path+"/") {
		return nil, fmt.Errorf("release asset at %q is not on the source server %s", rawURL, g.base.Redacted())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", migrationUserAgent)
	switch {
	case g.user == "oauth2" && g.secret != "":
		req.Header.Set("Authorization", "token "+g.secret)
	case g.user != "" || g.secret != "":
		req.SetBasicAuth(g.user, g.secret)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("download %s: %s", u.Redacted(), resp.Status)
	}
	return resp.Body, nil
}

// sourceItems is what was read of the source, before anything is written.
type sourceItems struct {
	labels     []*gitea.Label
	milestones []*gitea.Milestone
	releases   []*gitea.Release
	issues     []*gitea.Issue
	pulls      []*gitea.PullRequest
	// comments are each issue's or pull request's comments, by number.
	comments map[int64][]*gitea.Comment
	// reactions are each issue's or pull request's reactions, by number;
	// commentReactions each comment's, by the comment's id on the source.
	reactions        map[int64][]*gitea.Reaction
	commentReactions map[int64][]*gitea.Reaction
	// reviews are each pull request's reviews, by number (team requests
	// left out, as the reference does); reviewComments each review's line
	// comments, by the review's id on the source.
	reviews        map[int64][]*gitea.PullReview
	reviewComments map[int64][]*gitea.PullReviewComment
}

func (g *giteaSource) read(items migrationItems) (*sourceItems, error) {
	out := &sourceItems{comments: map[int64][]*gitea.Comment{}, reactions: map[int64][]*gitea.Reaction{},
		commentReactions: map[int64][]*gitea.Reaction{}, reviews: map[int64][]*gitea.PullReview{},
		reviewComments: map[int64][]*gitea.PullReviewComment{}}
	var err error
	if items.Labels {
		if out.labels, err = all(func(o gitea.ListOptions) ([]*gitea.Label, *gitea.Response, error) {
			return g.c.ListRepoLabels(g.owner, g.name, gitea.ListLabelsOptions{ListOptions: o})
		}); err != nil {
			return nil, fmt.Errorf("read labels: %w", err)
		}
	}
	if items.Milestones {
		if out.milestones, err = all(func(o gitea.ListOptions) ([]*gitea.Milestone, *gitea.Response, error) {
			return g.c.ListRepoMilestones(g.owner, g.name, gitea.ListMilestoneOption{ListOptions: o, State: gitea.StateAll})
		}); err != nil {
			return nil, fmt.Errorf("read milestones: %w", err)
		}
	}
	if items.Releases {
		if out.releases, err = all(func(o gitea.ListOptions) ([]*gitea.Release, *gitea.Response, error) {
			return g.c.ListReleases(g.owner, g.name, gitea.ListReleasesOptions{ListOptions: o})
		}); err != nil {
			return nil, fmt.Errorf("read releases: %w", err)
		}
	}
	if items.Issues {
		if out.issues, err = all(func(o gitea.ListOptions) ([]*gitea.Issue, *gitea.Response, error) {
			return g.c.ListRepoIssues(g.owner, g.name, gitea.ListIssueOption{ListOptions: o, State: gitea.StateAll, Type: gitea.IssueTypeIssue})
		}); err != nil {
			return nil, fmt.Errorf("read issues: %w", err)
		}
	}
	if items.PullRequests {
		if out.pulls, err = all(func(o gitea.ListOptions) ([]*gitea.PullRequest, *gitea.Response, error) {
			return g.c.ListRepoPullRequests(g.owner, g.name, gitea.ListPullRequestsOptions{ListOptions: o, State: gitea.StateAll})
		}); err != nil {
			return nil, fmt.Errorf("read pull requests: %w", err)
		}
	}
	// Comments, as the reference reads them: per issue or pull request,
	// only where the count says there are some.
	numbers := map[int64]int{}
	for _, is := range out.issues {
		numbers[is.Index] = is.Comments
	}
	for _, pr := range out.pulls {
		numbers[pr.Index] = pr.Comments
	}
	for n, count := range numbers {
		if count == 0 {
			continue
		}
		cs, err := all(func(o gitea.ListOptions) ([]*gitea.Comment, *gitea.Response, error) {
			return g.c.ListIssueComments(g.owner, g.name, n, gitea.ListIssueCommentOptions{ListOptions: o})
		})
		if err != nil {
			return nil, fmt.Errorf("read the comments of #%d: %w", n, err)
		}
		out.comments[n] = cs
		// Each comment's reactions, as the reference reads them (the
		// route answers them all at once).
		for _, c := range cs {
			rs, _, err := g.c.GetIssueCommentReactions(g.owner, g.name, c.ID)
			if err != nil {
				return nil, fmt.Errorf("read the reactions of a comment of #%d: %w", n, err)
			}
			if len(rs) > 0 {
				out.commentReactions[c.ID] = rs
			}
		}
	}
	// Each issue's and pull request's reactions.
	for n := range numbers {
		rs, err := all(func(o gitea.ListOptions) ([]*gitea.Reaction, *gitea.Response, error) {
			return g.c.ListIssueReactions(g.owner, g.name, n, gitea.ListIssueReactionsOptions{ListOptions: o})
		})
		if err != nil {
			return nil, fmt.Errorf("read the reactions of #%d: %w", n, err)
		}
		if len(rs) > 0 {
			out.reactions[n] = rs
		}
	}
	// The pull requests' reviews, each with its line comments.
	for _, pr := range out.pulls {
		rvs, err := all(func(o gitea.ListOptions) ([]*gitea.PullReview, *gitea.Response, error) {
			return g.c.ListPullReviews(g.owner, g.name, pr.Index, gitea.ListPullReviewsOptions{ListOptions: o})
		})
		if err != nil {
			return nil, fmt.Errorf("read the reviews of #%d: %w", pr.Index, err)
		}
		for _, rv := range rvs {
			if rv.Reviewer == nil {
				// A request to a team: the reference leaves it out too.
				continue
			}
			out.reviews[pr.Index] = append(out.reviews[pr.Index], rv)
			if rv.CodeCommentsCount == 0 {
				continue
			}
			cs, _, err := g.c.ListPullReviewComments(g.owner, g.name, pr.Index, rv.ID)
			if err != nil {
				return nil, fmt.Errorf("read the comments of a review of #%d: %w", pr.Index, err)
			}
			out.reviewComments[rv.ID] = cs
		}
	}
	return out, nil
}

// authors maps the source's users onto this server's as the reference
// does: only when the source is this very server is a user with the same
// id and name the author; anyone else is recorded by name and id as the
// original author, posted by the migrating user.
type authors struct {
	s       Service
	doer    *store.User
	sameApp bool
	local   map[int64]int64 // source id -> local id (0: none)
}

func (a *authors) of(ctx context.Context, u *gitea.User, origName string, origID int64) (posterID int64, name string, id int64, err error) {
	if origName != "" {
		// Brought here by an earlier migration: its original author stays.
		return a.doer.ID, origName, origID, nil
	}
	if u == nil {
		return a.doer.ID, "", 0, nil
	}
	local, err := a.localID(ctx, u)
	if err != nil || local != 0 {
		return local, "", 0, err
	}
	return a.doer.ID, u.UserName, u.ID, nil
}

// localID is the account here of the source's user u: the user with the
// same id and name when the source is this very server, else none (0).
func (a *authors) localID(ctx context.Context, u *gitea.User) (int64, error) {
	if !a.sameApp || u == nil || u.ID <= 0 {
		return 0, nil
	}
	local, ok := a.local[u.ID]
	if !ok {
		lu, err := a.s.Store.Users().FindByID(ctx, u.ID)
		switch {
		case err == nil && lu.Name == u.UserName:
			local = lu.ID
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return 0, err
		}
		a.local[u.ID] = local
	}
	return local, nil
}

// importGitea reads the source's items and returns the ref updates of
// the pull requests' heads (whose objects it adds to tips) and the
// transaction step that writes every row; files of release assets are
// stored before, and cleanup removes them if that step is not committed.
func (s Service) importGitea(ctx context.Context, r *store.Repository, doer *store.User, m *store.RepoMigration, src *gitstore.GitRepo) (
	pullRefs []*gitstore.RefUpdate, tips []plumbing.Hash, write func(context.Context) error, cleanup func(), err error) {
	items := parseMigrationItems(m.Items)
	cleanup = func() {}
	if !items.any() {
		return nil, nil, func(context.Context) error { return nil }, cleanup, nil
	}
	g, err := s.openGiteaSource(ctx, m)
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	in, err := g.read(items)
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	// Release files, through the guard, stored as uploads are.
	rels := release.Service{Deps: s.Deps}
	var stored []*store.ReleaseAttachment
	cleanup = func() {
		for _, a := range stored {
			rels.RemoveAssetFile(a)
		}
	}
	assets := map[int64][]*store.ReleaseAttachment{} // by source release id
	for _, rel := range in.releases {
		for _, at := range rel.Attachments {
			body, err := g.download(ctx, at.DownloadURL)
			if err != nil {
				return nil, nil, nil, cleanup, err
			}
			uuid, size, err := rels.StoreAssetFile(ctx, r.ID, body)
			body.Close()
			if err != nil {
				return nil, nil, nil, cleanup, fmt.Errorf("store release asset %q: %w", at.Name, err)
			}
			a := &store.ReleaseAttachment{UUID: uuid, RepoID: r.ID, UploaderID: doer.ID, Name: at.Name, Size: size,
				DownloadCount: at.DownloadCount, CreatedAt: at.Created}
			stored = append(stored, a)
			assets[rel.ID] = append(assets[rel.ID], a)
		}
	}
	// The pull requests' heads, fetched by the clone as the source
	// advertises them (refs/pull/N/head), kept at the head the source
	// names.
	for _, pr := range in.pulls {
		if pr.Head == nil || pr.Head.Sha == "" {
			continue
		}
		h := plumbing.NewHash(pr.Head.Sha)
		if _, err := src.Commit(h); err != nil {
			s.Log.WarnContext(ctx, "migration: the head of a pull request is not in the source's git data", "pull", pr.Index, "sha", pr.Head.Sha)
			continue
		}
		tips = append(tips, h)
		pullRefs = append(pullRefs, &gitstore.RefUpdate{Name: pulls.PullRef(pr.Index), New: h})
	}
	sameApp := strings.TrimSuffix(s.Config.RootURL, "/") == strings.TrimSuffix(g.base.String(), "/")
	au := &authors{s: s, doer: doer, sameApp: sameApp, local: map[int64]int64{}}
	write = func(ctx context.Context) error {
		return s.writeImported(store.ConfinedTo(ctx, r.ID), r, doer, src, in, assets, au)
	}
	return pullRefs, tips, write, cleanup, nil
}

func timeOr(t *time.Time, def time.Time) time.Time {
	if t == nil || t.IsZero() {
		return def
	}
	return *t
}

func nonZero(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// writeImported writes what was read, in the transaction in ctx, in the
// reference's order: labels, milestones, releases, issues, pull requests;
// then the counters (the issue number counter after the highest number,
// the repository's and the milestones' issue counts).
func (s Service) writeImported(ctx context.Context, r *store.Repository, doer *store.User, src *gitstore.GitRepo, in *sourceItems,
	assets map[int64][]*store.ReleaseAttachment, au *authors) error {
	st := s.Store
	labels := map[string]int64{}
	for _, l := range in.labels {
		color := l.Color
		if !strings.HasPrefix(color, "#") {
			color = "#" + color
		}
		row := &store.Label{RepoID: r.ID, Name: l.Name, Color: color, Description: l.Description, Exclusive: l.Exclusive}
		if l.IsArchived {
			now := s.Clock.Now()
			row.ArchivedAt = &now
		}
		if err := st.Labels().Create(ctx, row); err != nil {
			return fmt.Errorf("label %q: %w", l.Name, err)
		}
		labels[l.Name] = row.ID
	}
	milestones := map[string]*store.Milestone{}
	for _, ms := range in.milestones {
		row := &store.Milestone{RepoID: r.ID, Title: ms.Title, Description: ms.Description, IsClosed: ms.State == gitea.StateClosed,
			Deadline: nonZero(ms.Deadline), ClosedAt: nonZero(ms.Closed), CreatedAt: ms.Created, UpdatedAt: timeOr(ms.Updated, ms.Created)}
		if row.IsClosed && row.ClosedAt == nil {
			row.ClosedAt = &row.UpdatedAt
		}
		milestones[ms.Title] = row
	}
	// The milestones' counts are those of what is imported into them,
	// counted before they are written.
	count := func(m *gitea.Milestone, closed bool) {
		if m == nil || milestones[m.Title] == nil {
			return
		}
		row := milestones[m.Title]
		row.NumIssues++
		if closed {
			row.NumClosedIssues++
		}
	}
	for _, is := range in.issues {
		count(is.Milestone, is.State == gitea.StateClosed)
	}
	for _, pr := range in.pulls {
		count(pr.Milestone, pr.State == gitea.StateClosed)
	}
	for _, ms := range in.milestones {
		if err := st.Milestones().Create(ctx, milestones[ms.Title]); err != nil {
			return fmt.Errorf("milestone %q: %w", ms.Title, err)
		}
	}
	for _, rel := range in.releases {
		row := &store.Release{RepoID: r.ID, PublisherID: doer.ID, TagName: rel.TagName, Target: rel.Target, Title: rel.Title,
			Note: rel.Note, IsDraft: rel.IsDraft, IsPrerelease: rel.IsPrerelease, CreatedAt: rel.CreatedAt, UpdatedAt: rel.CreatedAt}
		if rel.Publisher != nil {
			if poster, _, _, err := au.of(ctx, rel.Publisher, "", 0); err != nil {
				return err
			} else if poster != doer.ID {
				row.PublisherID = poster
			}
		}
		if !rel.IsDraft {
			t := rel.PublishedAt
			if t.IsZero() {
				t = rel.CreatedAt
			}
			row.PublishedAt = &t
			if tag, err := src.Tag(rel.TagName); err == nil && tag.Commit != nil {
				row.Sha1 = tag.Commit.Hash.String()
			}
		}
		if err := st.Releases().Create(ctx, row); err != nil {
			return fmt.Errorf("release %q: %w", rel.TagName, err)
		}
		for _, a := range assets[rel.ID] {
			a.ReleaseID = row.ID
			if err := st.ReleaseAttachments().Create(ctx, a); err != nil {
				return fmt.Errorf("release asset %q: %w", a.Name, err)
			}
		}
	}
	var maxIndex, issues, closedIssues, pullsN, closedPulls int64
	type common struct {
		index              int64
		poster             *gitea.User
		origName           string
		origID             int64
		title, body, ref   string
		closed, locked     bool
		labels             []*gitea.Label
		milestone          *gitea.Milestone
		created, updated   time.Time
		closedAt, deadline *time.Time
		assignees          []*gitea.User
		pull               *store.PullRequest
	}
	// react writes the reactions of an issue (commentID 0) or comment.
	react := func(issueID, commentID int64, rs []*gitea.Reaction) error {
		for _, rc := range rs {
			user, name, id, err := au.of(ctx, rc.User, "", 0)
			if err != nil {
				return err
			}
			row := &store.Reaction{Type: rc.Reaction, IssueID: issueID, CommentID: commentID, UserID: user,
				OriginalAuthor: name, OriginalAuthorID: id, CreatedAt: timeOr(&rc.Created, s.Clock.Now())}
			if _, err := st.Reactions().Create(ctx, row); err != nil {
				return fmt.Errorf("reaction %q: %w", rc.Reaction, err)
			}
		}
		return nil
	}
	create := func(c common) error {
		poster, name, id, err := au.of(ctx, c.poster, c.origName, c.origID)
		if err != nil {
			return err
		}
		comments := in.comments[c.index]
		is := &store.Issue{RepoID: r.ID, Index: c.index, PosterID: poster, OriginalAuthor: name, OriginalAuthorID: id,
			Title: c.title, Body: c.body, Ref: c.ref, IsClosed: c.closed, IsLocked: c.locked, IsPull: c.pull != nil,
			NumComments: int64(len(comments)), Deadline: nonZero(c.deadline), CreatedAt: c.created, UpdatedAt: c.updated}
		if c.closed {
			is.ClosedAt = nonZero(c.closedAt)
			if is.ClosedAt == nil {
				is.ClosedAt = &is.UpdatedAt
			}
		}
		if c.milestone != nil && milestones[c.milestone.Title] != nil {
			is.MilestoneID = milestones[c.milestone.Title].ID
		}
		if err := st.Issues().Create(ctx, is); err != nil {
			return fmt.Errorf("issue #%d: %w", c.index, err)
		}
		var ids []int64
		for _, l := range c.labels {
			if id, ok := labels[l.Name]; ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			if err := st.Labels().AddToIssue(ctx, is.ID, ids); err != nil {
				return fmt.Errorf("labels of #%d: %w", c.index, err)
			}
		}
		// Assignees who have an account here (see authors); the others
		// have no place to be kept.
		var assignees []int64
		for _, u := range c.assignees {
			id, err := au.localID(ctx, u)
			if err != nil {
				return err
			}
			if id != 0 && !slices.Contains(assignees, id) {
				assignees = append(assignees, id)
			}
		}
		if len(assignees) > 0 {
			if err := st.Issues().SetAssignees(ctx, is.ID, assignees); err != nil {
				return fmt.Errorf("assignees of #%d: %w", c.index, err)
			}
		}
		if err := react(is.ID, 0, in.reactions[c.index]); err != nil {
			return fmt.Errorf("reactions of #%d: %w", c.index, err)
		}
		for _, cm := range comments {
			poster, name, id, err := au.of(ctx, cm.Poster, cm.OriginalAuthor, cm.OriginalAuthorID)
			if err != nil {
				return err
			}
			row := &store.Comment{IssueID: is.ID, RepoID: r.ID, PosterID: poster, Body: cm.Body, OriginalAuthor: name,
				OriginalAuthorID: id, CreatedAt: cm.Created, UpdatedAt: cm.Updated}
			if err := st.Comments().Create(ctx, row); err != nil {
				return fmt.Errorf("comment of #%d: %w", c.index, err)
			}
			if err := react(is.ID, row.ID, in.commentReactions[cm.ID]); err != nil {
				return fmt.Errorf("reactions of a comment of #%d: %w", c.index, err)
			}
		}
		if c.pull != nil {
			c.pull.IssueID = is.ID
			if err := st.Pulls().Create(ctx, c.pull); err != nil {
				return fmt.Errorf("pull request #%d: %w", c.index, err)
			}
			if err := s.writeReviews(ctx, is, in.reviews[c.index], in.reviewComments, au); err != nil {
				return fmt.Errorf("reviews of #%d: %w", c.index, err)
			}
		}
		maxIndex = max(maxIndex, c.index)
		return nil
	}
	for _, is := range in.issues {
		closed := is.State == gitea.StateClosed
		if err := create(common{index: is.Index, poster: is.Poster, origName: is.OriginalAuthor, origID: is.OriginalAuthorID,
			title: is.Title, body: is.Body, ref: is.Ref, closed: closed, locked: is.IsLocked, labels: is.Labels,
			milestone: is.Milestone, created: is.Created, updated: is.Updated, closedAt: is.Closed, deadline: is.Deadline,
			assignees: is.Assignees}); err != nil {
			return err
		}
		issues++
		if closed {
			closedIssues++
		}
	}
	for _, pr := range in.pulls {
		closed := pr.State == gitea.StateClosed
		row := &store.PullRequest{BaseRepoID: r.ID, HeadRepoID: r.ID, MergeBase: pr.MergeBase, HasMerged: pr.HasMerged,
			AllowMaintainerEdit: pr.AllowMaintainerEdit, CreatedAt: timeOr(pr.Created, s.Clock.Now()), UpdatedAt: timeOr(pr.Updated, s.Clock.Now())}
		if pr.Base != nil {
			row.BaseBranch, row.BaseCommitID = pr.Base.Ref, pr.Base.Sha
		}
		if pr.Head != nil {
			row.HeadBranch, row.HeadCommitID = pr.Head.Ref, pr.Head.Sha
			// A fork's branch is not brought over: it is named after its
			// owner, as the reference names it, and the pull request
			// keeps its head in refs/pull/N/head.
			if pr.Head.Repository != nil && pr.Base != nil && pr.Base.Repository != nil &&
				pr.Head.Repository.ID != pr.Base.Repository.ID && pr.Head.Repository.Owner != nil {
				row.HeadBranch = pr.Head.Repository.Owner.UserName + "/" + pr.Head.Ref
			}
		}
		if pr.HasMerged {
			row.MergedAt = nonZero(pr.Merged)
			row.MergerID = doer.ID
			if pr.MergedCommitID != nil {
				row.MergedCommitID = *pr.MergedCommitID
			}
		}
		created := timeOr(pr.Created, s.Clock.Now())
		if err := create(common{index: pr.Index, poster: pr.Poster, title: pr.Title, body: pr.Body, closed: closed,
			locked: pr.IsLocked, labels: pr.Labels, milestone: pr.Milestone, created: created, updated: timeOr(pr.Updated, created),
			closedAt: pr.Closed, deadline: pr.Deadline, assignees: pr.Assignees, pull: row}); err != nil {
			return err
		}
		pullsN++
		if closed {
			closedPulls++
		}
	}
	if maxIndex > 0 {
		if err := st.Issues().RaiseIndex(ctx, r.ID, maxIndex); err != nil {
			return err
		}
	}
	if err := st.Issues().AdjustRepoCounts(ctx, r.ID, issues, closedIssues); err != nil {
		return err
	}
	if err := st.Issues().AdjustRepoPullCounts(ctx, r.ID, pullsN, closedPulls); err != nil {
		return err
	}
	return nil
}

// reviewStates are the review states a migration keeps; any other is
// written as pending, as the reference does.
var reviewStates = map[gitea.ReviewStateType]string{
	gitea.ReviewStateApproved:       store.ReviewApproved,
	gitea.ReviewStatePending:        store.ReviewPending,
	gitea.ReviewStateComment:        store.ReviewCommented,
	gitea.ReviewStateRequestChanges: store.ReviewRequestChanges,
	gitea.ReviewStateRequestReview:  store.ReviewRequest,
}

// writeReviews writes a pull request's reviews as the reference's
// migration records them: state, body, commit, whether official (and
// dismissed), the time submitted, the reviewer as any author (see
// authors), and each review's line comments on their path, lines,
// commits and diff hunk.
func (s Service) writeReviews(ctx context.Context, is *store.Issue, rvs []*gitea.PullReview,
	comments map[int64][]*gitea.PullReviewComment, au *authors) error {
	for _, rv := range rvs {
		reviewer, name, id, err := au.of(ctx, rv.Reviewer, "", 0)
		if err != nil {
			return err
		}
		state, ok := reviewStates[rv.State]
		if !ok {
			state = store.ReviewPending
		}
		created := timeOr(&rv.Submitted, is.CreatedAt)
		row := &store.Review{IssueID: is.ID, ReviewerID: reviewer, State: state, Body: rv.Body, CommitID: rv.CommitID,
			Official: rv.Official, Dismissed: rv.Dismissed, OriginalAuthor: name, OriginalAuthorID: id,
			CreatedAt: created, UpdatedAt: created}
		if state != store.ReviewPending && state != store.ReviewRequest {
			row.SubmittedAt = &created
		}
		if err := s.Store.Pulls().CreateReview(ctx, row); err != nil {
			return err
		}
		cs := make([]*store.ReviewComment, 0, len(comments[rv.ID]))
		for _, c := range comments[rv.ID] {
			poster, name, id := reviewer, row.OriginalAuthor, row.OriginalAuthorID
			if c.Reviewer != nil {
				if poster, name, id, err = au.of(ctx, c.Reviewer, "", 0); err != nil {
					return err
				}
			}
			ccreated := timeOr(&c.Created, created)
			cs = append(cs, &store.ReviewComment{ReviewID: row.ID, IssueID: is.ID, PosterID: poster, Path: c.Path, Body: c.Body,
				Line: int64(c.LineNum), OldLine: int64(c.OldLineNum), CommitID: c.CommitID, OriginalCommitID: c.OrigCommitID,
				DiffHunk: c.DiffHunk, OriginalAuthor: name, OriginalAuthorID: id, CreatedAt: ccreated,
				UpdatedAt: timeOr(&c.Updated, ccreated)})
		}
		if len(cs) > 0 {
			if err := s.Store.Pulls().CreateReviewComments(ctx, cs); err != nil {
				return err
			}
		}
	}
	return nil
}
