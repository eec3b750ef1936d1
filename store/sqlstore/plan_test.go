package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm/logger"

	"repohost/store"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// recorder keeps the SQL of every statement run while it is on.
type recorder struct {
	mu   sync.Mutex
	on   bool
	stmt []string
}

func (r *recorder) LogMode(logger.LogLevel) logger.Interface      { return r }
func (r *recorder) Info(context.Context, string, ...interface{})  {}
func (r *recorder) Warn(context.Context, string, ...interface{})  {}
func (r *recorder) Error(context.Context, string, ...interface{}) {}
func (r *recorder) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		sql, _ := fc()
		r.stmt = append(r.stmt, sql)
	}
}

// record runs fn and returns the SELECT statements it ran.
func (r *recorder) record(fn func() error) ([]string, error) {
	r.mu.Lock()
	r.on, r.stmt = true, nil
	r.mu.Unlock()
	err := fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	var out []string
	for _, s := range r.stmt {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s)), "SELECT") {
			out = append(out, s)
		}
	}
	return out, err
}

// planCase is one list whose statements must be served by indexes.
type planCase struct {
	name string
	list func(ctx context.Context) error
	// searched tables must be reached through an index condition (a
	// range of one repository's, issue's or user's rows), never scanned.
	searched []string
	// ordered tables may be walked whole (a list over every repository or
	// user: its count has to look at every candidate), but the page must
	// come in the order of an index, never from a sort.
	ordered []string
	// bounded, when set, says which small set the list may sort: the
	// searched tables must still be reached through an index range.
	bounded string
	// keyed tables must be reached by their primary key only: the list is
	// driven from another table's index (a label's links), and reads no
	// row of these that the other table does not name.
	keyed []string
	// trigram tables must be reached from their trigram index (migrateV38)
	// and then by their key, or by the owner_id index (the repositories a
	// viewer was given): never scanned, never a range of another index
	// (a class of repositories, a type of users).
	trigram []string
	// probed: the repositories the viewer was given are tested on each
	// candidate row, never gathered through the index on owner_id (an
	// owner of thousands would read them all for a few candidates).
	probed bool
}

// TestListQueryPlans holds every paged list to an index for its filter and
// its order: on SQLite no step may sort the rows into a temporary B-tree
// for the ORDER BY, nor scan a listed table without an index; on
// PostgreSQL, with sequential scans and sorts priced out, no Sort node and
// no Seq Scan of a listed table may remain. A list added later joins this
// table; a missing index then fails `make test` on both databases.
//
// Not here: branches and tags, which are listed from git, not SQL; a
// repository's tracked times (gathered through its issues and sorted, as no
// index holds a repository's times in order); a user's email addresses (a
// handful, unpaged).
func TestListQueryPlans(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	db, err := sqlstore.Open(sqltest.DSN(t, ""), sqlstore.Options{Logger: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	f := seedPlanData(t, db)
	// Statistics on PostgreSQL, as autovacuum would gather them. SQLite is
	// left without (Analyze does nothing there): a production file has
	// none either, and its planner then assumes large tables.
	if err := db.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	no, yes := false, true
	pg := store.Page{Limit: 10}
	deep := store.Page{Offset: 20, Limit: 10} // read backwards from the end
	member := store.RepoViewer{UserID: f.bob.ID}
	issues := func(name string, flt store.IssueFilter, p store.Page) planCase {
		return planCase{name: name, searched: []string{"issues"}, list: func(ctx context.Context) error {
			_, _, err := db.Issues().List(ctx, flt, p)
			return err
		}}
	}
	// A keyword search reads its matches from the full-text index, each
	// issue by its key, and sorts them: as many as the keyword finds,
	// never the repository's or the site's other issues.
	search := func(name string, flt store.IssueFilter, p store.Page) planCase {
		c := issues(name, flt, p)
		c.searched, c.keyed, c.bounded = []string{"issue_search", "comment_search"}, []string{"issues", "comments"}, "the keyword's matches"
		if strings.HasSuffix(name, "number") {
			// The issue of that number comes through the numbers' index.
			c.searched, c.keyed = append(c.searched, "issues"), []string{"comments"}
		}
		return c
	}
	// A page across repositories (no keyword) merges the newest issues
	// of each class of repositories the viewer sees wholesale, read from a
	// range of the class index, with those of the repositories it was
	// given, read from their (repo_id, ...) indexes: issues is searched,
	// never walked, so a page cannot step over the issues of repositories
	// the viewer may not see; only the merged candidates are sorted.
	across := func(name string, flt store.IssueFilter) planCase {
		p := pg
		if strings.HasSuffix(name, "deep page") {
			p = deep
		}
		return planCase{name: name, searched: []string{"issues"}, bounded: "the pages of the classes and given repositories",
			list: func(ctx context.Context) error {
				_, _, err := db.Issues().List(ctx, flt, p)
				return err
			}}
	}
	acrossCount := func(name string, flt store.IssueFilter) planCase {
		return planCase{name: name, searched: []string{"repositories", "issues", "repo_issue_totals"}, list: func(ctx context.Context) error {
			_, _, err := db.Issues().List(ctx, flt, store.Page{})
			return err
		}}
	}
	labelled := func(name string, flt store.IssueFilter, p store.Page) planCase {
		c := issues(name, flt, p)
		c.searched, c.keyed = []string{"issue_labels"}, []string{"issues"}
		return c
	}
	pulls := func(name string, flt store.PullFilter, p store.Page) planCase {
		return planCase{name: name, searched: []string{"issues", "pull_requests"}, list: func(ctx context.Context) error {
			_, _, _, err := db.Pulls().List(ctx, flt, p)
			return err
		}}
	}
	repoSearch := func(name string, q store.RepoSearch, p store.Page, searched bool) planCase {
		c := planCase{name: name, list: func(ctx context.Context) error {
			_, _, err := db.Repos().Search(ctx, q, p)
			return err
		}}
		if searched {
			c.searched = []string{"repositories"}
		} else {
			c.ordered = []string{"repositories"}
		}
		return c
	}
	keywordSearch := func(name string, q store.RepoSearch, p store.Page) planCase {
		return planCase{name: name, trigram: []string{"repositories"}, searched: []string{"users"}, bounded: "the keyword's candidates",
			list: func(ctx context.Context) error {
				_, _, err := db.Repos().Search(ctx, q, p)
				return err
			}}
	}
	probedSearch := func(name string, q store.RepoSearch, p store.Page) planCase {
		c := keywordSearch(name, q, p)
		c.probed = true
		return c
	}
	userKeyword := func(name string, q store.UserSearch) planCase {
		q.Type = store.UserTypeIndividual
		return planCase{name: name, trigram: []string{"users"}, bounded: "the keyword's candidates",
			list: func(ctx context.Context) error {
				_, _, err := db.Users().Search(ctx, q, pg)
				return err
			}}
	}
	userSearch := func(name, order string) planCase {
		return planCase{name: name, ordered: []string{"users"}, list: func(ctx context.Context) error {
			_, _, err := db.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, OrderBy: order}, pg)
			return err
		}}
	}
	people := func(name, links string, q store.UserSearch) planCase {
		q.Type, q.OrderBy = store.UserTypeIndividual, "id ASC"
		q.Visibilities, q.Self = []store.Visibility{store.VisibilityPublic, store.VisibilityLimited}, f.bob.ID
		return planCase{name: name, searched: []string{links, "users"}, bounded: "the linked users",
			list: func(ctx context.Context) error {
				_, _, err := db.Users().Search(ctx, q, pg)
				return err
			}}
	}
	cases := []planCase{
		issues("issues: open", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no}, pg),
		issues("issues: closed", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &yes}, pg),
		issues("issues: all states", store.IssueFilter{RepoID: f.repo.ID}, pg),
		issues("issues: open, deep page", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no}, deep),
		issues("issues: all states, deep page", store.IssueFilter{RepoID: f.repo.ID}, deep),
		issues("issues: type issues, open", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, IsPull: &no}, pg),
		issues("issues: type pulls, all states", store.IssueFilter{RepoID: f.repo.ID, IsPull: &yes}, pg),
		labelled("issues: label", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, LabelIDs: [][]int64{{f.label.ID}}}, pg),
		labelled("issues: label, all states, deep page", store.IssueFilter{RepoID: f.repo.ID, LabelIDs: [][]int64{{f.label.ID}}}, deep),
		labelled("issues: label, closed", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &yes, LabelIDs: [][]int64{{f.label.ID}}}, pg),
		issues("issues: label by name", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, LabelNames: []string{"bug"}}, pg),
		issues("issues: mentioned", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, MentionedID: f.bob.ID}, pg),
		issues("issues: milestone", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, MilestoneIDs: []int64{f.milestone.ID}}, pg),
		issues("issues: poster", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, PosterID: f.alice.ID}, pg),
		search("issues: keyword", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, Keyword: "issue"}, pg),
		search("issues: keyword, prefix of two words", store.IssueFilter{RepoID: f.repo.ID, Keyword: "iss 1"}, pg),
		search("issues: keyword, deep page", store.IssueFilter{RepoID: f.repo.ID, Keyword: "issue"}, deep),
		search("issues: keyword in comments", store.IssueFilter{RepoID: f.repo.ID, Keyword: "hi"}, pg),
		search("issues: keyword, number", store.IssueFilter{RepoID: f.repo.ID, Keyword: "#12"}, pg),
		search("issues: keyword and label", store.IssueFilter{RepoID: f.repo.ID, Keyword: "issue",
			LabelIDs: [][]int64{{f.label.ID}}}, pg),
		search("issues: keyword and filters", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, IsPull: &no, Keyword: "issue",
			LabelNames: []string{"bug"}, MilestoneIDs: []int64{f.milestone.ID}, PosterID: f.alice.ID, AssigneeID: f.alice.ID,
			MentionedID: f.bob.ID}, pg),
		search("issues: keyword across repositories", store.IssueFilter{AcrossRepos: true, Viewer: member, IsClosed: &no,
			Keyword: "issue"}, pg),
		search("issues: keyword across repositories, number", store.IssueFilter{AcrossRepos: true, Viewer: member,
			Keyword: "12"}, pg),
		search("issues: keyword across repositories, anonymous", store.IssueFilter{AcrossRepos: true, Keyword: "other"}, pg),
		search("issues: keyword across repositories, count", store.IssueFilter{AcrossRepos: true, Viewer: member,
			Keyword: "other"}, store.Page{}),
		issues("issues: assignee", store.IssueFilter{RepoID: f.repo.ID, IsClosed: &no, AssigneeID: f.alice.ID}, pg),
		across("issues: search across repositories", store.IssueFilter{AcrossRepos: true, Viewer: member, IsClosed: &no}),
		across("issues: search across repositories, all states", store.IssueFilter{AcrossRepos: true, Viewer: member}),
		across("issues: search for pull requests", store.IssueFilter{AcrossRepos: true, Viewer: member, IsClosed: &no, IsPull: &yes}),
		across("issues: search across repositories, admin", store.IssueFilter{AcrossRepos: true,
			Viewer: store.RepoViewer{UserID: f.alice.ID, IsAdmin: true}, IsClosed: &no}),
		across("issues: search across repositories, admin, deep page", store.IssueFilter{AcrossRepos: true,
			Viewer: store.RepoViewer{UserID: f.alice.ID, IsAdmin: true}}),
		across("issues: search across repositories, restricted", store.IssueFilter{AcrossRepos: true,
			Viewer: store.RepoViewer{UserID: f.bob.ID, Restricted: true}}),
		pulls("pull requests: open", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no}, pg),
		pulls("pull requests: closed, oldest", store.PullFilter{RepoID: f.repo.ID, IsClosed: &yes, Sort: "oldest"}, pg),
		pulls("pull requests: all states", store.PullFilter{RepoID: f.repo.ID}, pg),
		pulls("pull requests: open, deep page", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no}, deep),
		pulls("pull requests: open, recently updated", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no, Sort: "recentupdate"}, pg),
		pulls("pull requests: open, most comments", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no, Sort: "mostcomment"}, pg),
		pulls("pull requests: open, into a branch", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no, BaseBranch: "main"}, pg),
		pulls("pull requests: open, poster", store.PullFilter{RepoID: f.repo.ID, IsClosed: &no, PosterID: f.alice.ID}, pg),
		{name: "reviews of a pull request", searched: []string{"reviews"}, list: func(ctx context.Context) error {
			_, _, err := db.Pulls().Reviews(ctx, f.issue.ID, f.bob.ID, pg)
			return err
		}},
		repoSearch("forks of a repository", store.RepoSearch{Viewer: member, ForkOf: f.repo.ID, OrderBy: "repositories.id ASC"}, pg, true),
		{name: "comments", searched: []string{"comments"}, list: func(ctx context.Context) error {
			_, _, err := db.Comments().List(ctx, f.issue.ID, nil, nil, pg)
			return err
		}},
		{name: "comments of a repository", searched: []string{"comments"}, list: func(ctx context.Context) error {
			_, _, err := db.Comments().ListByRepo(ctx, f.repo.ID, nil, nil, nil, pg)
			return err
		}},
		// The timeline reads an issue's comments and events each through
		// its (issue_id, created_at, id) index as far as the page's end.
		{name: "timeline of an issue", searched: []string{"comments", "issue_events"}, list: func(ctx context.Context) error {
			_, _, err := db.Timeline().List(ctx, f.issue.ID, nil, nil, pg)
			return err
		}},
		{name: "references an issue makes that close or reopen", searched: []string{"issue_events"}, list: func(ctx context.Context) error {
			_, err := db.Timeline().ResolvingRefs(ctx, f.issue.ID)
			return err
		}},
		people("users a user or organization blocks", "user_blocks", store.UserSearch{BlockedBy: f.alice.ID}),
		{name: "pinned issues", searched: []string{"issues"}, list: func(ctx context.Context) error {
			_, err := db.Pins().Pinned(ctx, f.repo.ID, false)
			return err
		}},
		{name: "dependencies of an issue", searched: []string{"issue_dependencies"}, keyed: []string{"issues"}, list: func(ctx context.Context) error {
			_, err := db.Dependencies().Dependencies(ctx, f.issue.ID)
			return err
		}},
		{name: "issues an issue blocks", searched: []string{"issue_dependencies"}, keyed: []string{"issues"}, list: func(ctx context.Context) error {
			_, err := db.Dependencies().Blocks(ctx, f.issue.ID)
			return err
		}},
		repoSearch("repositories of a user, by its owner", store.RepoSearch{Viewer: store.RepoViewer{UserID: f.alice.ID},
			OwnerID: f.alice.ID, OrderBy: "repositories.id ASC"}, pg, true),
		repoSearch("repositories of a user, by another user", store.RepoSearch{Viewer: member,
			OwnerID: f.alice.ID, OrderBy: "repositories.id ASC"}, pg, true),
		repoSearch("repositories of a user, anonymous, deep page", store.RepoSearch{OwnerID: f.alice.ID,
			OrderBy: "repositories.id ASC"}, store.Page{Offset: 2, Limit: 1}, true),
		repoSearch("repository search, by name", store.RepoSearch{Viewer: member, OrderBy: "repositories.lower_name ASC"}, pg, false),
		repoSearch("repository search, by name descending", store.RepoSearch{Viewer: member, OrderBy: "repositories.lower_name DESC"}, pg, false),
		repoSearch("repository search, oldest", store.RepoSearch{Viewer: member, OrderBy: "repositories.created_at ASC"}, pg, false),
		repoSearch("repository search, least stars", store.RepoSearch{Viewer: member, OrderBy: "repositories.num_stars ASC"}, pg, false),
		repoSearch("repository search, by name, deep page", store.RepoSearch{OrderBy: "repositories.lower_name DESC"},
			store.Page{Offset: 2, Limit: 1}, false),
		repoSearch("repository search, newest", store.RepoSearch{Viewer: member, OrderBy: "repositories.created_at DESC"}, pg, false),
		repoSearch("repository search, updated", store.RepoSearch{Viewer: member, OrderBy: "repositories.updated_at ASC"}, pg, false),
		repoSearch("repository search, size", store.RepoSearch{Viewer: member, OrderBy: "repositories.size DESC"}, pg, false),
		repoSearch("repository search, stars", store.RepoSearch{Viewer: member, OrderBy: "repositories.num_stars DESC"}, pg, false),
		repoSearch("repository search, forks", store.RepoSearch{Viewer: member, OrderBy: "repositories.num_forks ASC"}, pg, false),
		repoSearch("repository search, id", store.RepoSearch{OrderBy: "repositories.id DESC"}, pg, false),
		repoSearch("repository search, keyword", store.RepoSearch{Viewer: member, Keyword: "r",
			OrderBy: "repositories.lower_name ASC"}, pg, false),
		// A keyword of three characters or more: the trigram index's
		// candidates, each repository or user by its key, sorted (only the
		// candidates); never every repository or user.
		keywordSearch("repository search, keyword (trigram index)", store.RepoSearch{Viewer: member, Keyword: "alice/r",
			OrderBy: "repositories.lower_name ASC"}, pg),
		keywordSearch("repository search, keyword with description, anonymous", store.RepoSearch{Keyword: "alice, lice",
			IncludeDescription: true, OrderBy: "repositories.updated_at DESC"}, pg),
		keywordSearch("repository search, topic", store.RepoSearch{Viewer: member, Keyword: "database", TopicOnly: true,
			OrderBy: "repositories.id ASC"}, pg),
		keywordSearch("repository search, keyword, count", store.RepoSearch{Viewer: member, Keyword: "alice/r",
			OrderBy: "repositories.id ASC"}, store.Page{}),
		probedSearch("repository search, keyword, viewer's repositories probed", store.RepoSearch{Viewer: member, Keyword: "lice",
			OrderBy: "repositories.lower_name ASC"}, pg),
		probedSearch("repository search, keyword, count, viewer's repositories probed", store.RepoSearch{Viewer: member,
			Keyword: "lice", OrderBy: "repositories.id ASC"}, store.Page{}),
		userKeyword("users, keyword (trigram index)", store.UserSearch{Keyword: "ALI", OrderBy: "lower_name ASC"}),
		userKeyword("users, keyword in addresses", store.UserSearch{Keyword: "example", KeywordEmail: true, HideKeptEmails: true,
			Self: f.bob.ID, Visibilities: []store.Visibility{store.VisibilityPublic}, OrderBy: "created_at DESC"}),
		// The counts alone (a page of none reads no row): the visibility
		// rule's parts each read their own index, never every repository.
		repoSearch("repository search, count", store.RepoSearch{Viewer: member, OrderBy: "repositories.id ASC"},
			store.Page{}, true),
		repoSearch("repository search, count, anonymous", store.RepoSearch{OrderBy: "repositories.id ASC"}, store.Page{}, true),
		repoSearch("repositories of a user by another user, count", store.RepoSearch{Viewer: member, OwnerID: f.alice.ID,
			OrderBy: "repositories.id ASC"}, store.Page{}, true),
		// The counts of a search across repositories: the public part
		// from the kept sums per class (repo_issue_totals), what the
		// viewer was given besides through the visibility rule's indexes,
		// an owner's repositories through owner_id, the pull requests
		// through is_pull.
		acrossCount("issues: search across repositories, count", store.IssueFilter{AcrossRepos: true, Viewer: member, IsClosed: &no}),
		acrossCount("issues: search across repositories, count, anonymous", store.IssueFilter{AcrossRepos: true}),
		acrossCount("issues: search across repositories, count, admin", store.IssueFilter{AcrossRepos: true,
			Viewer: store.RepoViewer{UserID: f.alice.ID, IsAdmin: true}, IsClosed: &yes}),
		acrossCount("issues: search across repositories, count, restricted", store.IssueFilter{AcrossRepos: true,
			Viewer: store.RepoViewer{UserID: f.bob.ID, Restricted: true}, IsClosed: &no}),
		acrossCount("issues: search across an owner's repositories, count", store.IssueFilter{AcrossRepos: true, Viewer: member,
			OwnerID: f.alice.ID, IsClosed: &no}),
		acrossCount("issues: search across repositories, issues only, count", store.IssueFilter{AcrossRepos: true, Viewer: member,
			IsPull: &no}),
		across("issues: search across repositories, anonymous", store.IssueFilter{AcrossRepos: true, IsClosed: &no}),
		across("issues: search across repositories, anonymous, any type and state", store.IssueFilter{AcrossRepos: true}),
		across("issues: search across an owner's repositories", store.IssueFilter{AcrossRepos: true, Viewer: member, OwnerID: f.alice.ID, IsClosed: &no}),
		userSearch("users, by name", ""),
		userSearch("users, by name descending", "lower_name DESC"),
		userSearch("users, oldest", "created_at ASC"),
		userSearch("users, recently updated", "updated_at DESC"),
		userSearch("users, newest", "created_at DESC"),
		userSearch("users, updated", "updated_at ASC"),
		userSearch("users, by id", "id DESC"),
		// Lists over a join, whose order is a column of the other table:
		// no one index holds both, so they sort, but only the set reached
		// through an index range (one user's repositories and those of
		// their organizations, one user's memberships, one organization's
		// members, a repository's 25 topics at most).
		{name: "repositories a user reaches", searched: []string{"repositories"}, bounded: "owned and organizations' repositories",
			list: func(ctx context.Context) error {
				_, _, err := db.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{UserID: f.alice.ID},
					RelatedUserID: f.alice.ID, RelatedOwned: true, RelatedMember: true, OrderBy: "repositories.lower_name ASC"}, pg)
				return err
			}},
		// A user's stars, follows and blocks: the links are read from
		// their index, then the repositories or users by their key, and
		// sorted (only the linked set).
		{name: "repositories a user starred", searched: []string{"stars", "repositories"}, bounded: "a user's starred repositories",
			list: func(ctx context.Context) error {
				_, _, err := db.Repos().Search(ctx, store.RepoSearch{Viewer: member, StarredBy: f.bob.ID, OrderBy: "repositories.id ASC"}, pg)
				return err
			}},
		people("stargazers of a repository", "stars", store.UserSearch{StargazersOf: f.repo.ID}),
		people("followers of a user", "follows", store.UserSearch{FollowersOf: f.alice.ID}),
		people("users a user follows", "follows", store.UserSearch{FollowedBy: f.bob.ID}),
		people("users and organizations a user follows", "follows", store.UserSearch{FollowedBy: f.bob.ID, AnyType: true}),
		people("users a user blocks", "user_blocks", store.UserSearch{BlockedBy: f.alice.ID}),
		{name: "push mirrors of a repository", searched: []string{"push_mirrors"}, list: func(ctx context.Context) error {
			_, _, err := db.Mirrors().ListPush(ctx, f.repo.ID, pg)
			return err
		}},
		{name: "LFS locks of a repository", searched: []string{"lfs_locks"}, keyed: []string{"users"}, list: func(ctx context.Context) error {
			_, err := db.LFS().Locks(ctx, f.repo.ID, 0, 50)
			return err
		}},
		{name: "repositories linking an LFS object", searched: []string{"lfs_meta_objects"}, list: func(ctx context.Context) error {
			_, err := db.LFS().ReposWith(ctx, strings.Repeat("a", 64), 50)
			return err
		}},
		{name: "watchers of a repository", searched: []string{"watches"}, keyed: []string{"users"}, list: func(ctx context.Context) error {
			_, _, err := db.Watches().ListWatchers(ctx, f.repo.ID, pg)
			return err
		}},
		{name: "repositories a user watches", searched: []string{"watches", "repositories"}, list: func(ctx context.Context) error {
			_, _, err := db.Repos().Search(ctx, store.RepoSearch{Viewer: member, WatchedBy: f.alice.ID, OrderBy: "repositories.id ASC"}, pg)
			return err
		}},
		{name: "notification threads of a user", searched: []string{"notifications"}, list: func(ctx context.Context) error {
			_, _, err := db.Notifications().List(ctx, store.NotificationFilter{UserID: f.bob.ID, Viewer: member,
				Statuses: []int{store.NotificationUnread, store.NotificationPinned}}, pg)
			return err
		}},
		{name: "notification threads of a user, deep page", searched: []string{"notifications"}, list: func(ctx context.Context) error {
			_, _, err := db.Notifications().List(ctx, store.NotificationFilter{UserID: f.bob.ID, Viewer: member}, deep)
			return err
		}},
		{name: "notification threads of a user in a repository", searched: []string{"notifications"}, list: func(ctx context.Context) error {
			_, _, err := db.Notifications().List(ctx, store.NotificationFilter{UserID: f.bob.ID, Viewer: member, RepoID: f.repo.ID,
				Sources: []string{store.NotificationSourceIssue}}, pg)
			return err
		}},
		{name: "subscribers of an issue", searched: []string{"comments", "issue_assignees", "issue_mentions", "issue_watches"},
			bounded: "an issue's participants and subscribers", list: func(ctx context.Context) error {
				_, _, err := db.Watches().ListIssueSubscribers(ctx, f.issue, pg)
				return err
			}},
		{name: "organizations of a user", searched: []string{"org_members"}, bounded: "a user's memberships",
			list: func(ctx context.Context) error {
				_, _, err := db.Orgs().ListUserOrgs(ctx, f.alice.ID, nil, false, pg)
				return err
			}},
		{name: "members of an organization", searched: []string{"org_members"}, bounded: "an organization's members",
			list: func(ctx context.Context) error {
				_, _, err := db.Orgs().ListMembers(ctx, f.org.ID, false, pg)
				return err
			}},
		{name: "topics of a repository", searched: []string{"repo_topics"}, bounded: "at most 25 topics",
			list: func(ctx context.Context) error {
				_, _, err := db.Topics().ListByRepo(ctx, f.repo.ID, pg)
				return err
			}},
		{name: "topic search", ordered: []string{"topics"}, searched: []string{"repo_topics", "repositories"}, list: func(ctx context.Context) error {
			_, _, err := db.Topics().Search(ctx, member, "", pg)
			return err
		}},
		{name: "topic search, anonymous", ordered: []string{"topics"}, searched: []string{"repo_topics", "repositories"}, list: func(ctx context.Context) error {
			_, _, err := db.Topics().Search(ctx, store.RepoViewer{}, "", pg)
			return err
		}},
		{name: "organizations", ordered: []string{"users"}, list: func(ctx context.Context) error {
			_, _, err := db.Orgs().ListVisible(ctx, f.bob.ID, []store.Visibility{store.VisibilityPublic}, pg)
			return err
		}},
		{name: "labels", searched: []string{"labels"}, list: func(ctx context.Context) error {
			_, _, err := db.Labels().List(ctx, f.repo.ID, pg)
			return err
		}},
		{name: "labels of an organization", searched: []string{"labels"}, list: func(ctx context.Context) error {
			_, _, err := db.Labels().ListOfOrg(ctx, f.org.ID, pg)
			return err
		}},
		{name: "milestones, all states", searched: []string{"milestones"}, list: func(ctx context.Context) error {
			_, _, err := db.Milestones().List(ctx, f.repo.ID, nil, "", pg)
			return err
		}},
		{name: "milestones, open", searched: []string{"milestones"}, list: func(ctx context.Context) error {
			_, _, err := db.Milestones().List(ctx, f.repo.ID, &no, "", pg)
			return err
		}},
		{name: "releases with drafts", searched: []string{"releases"}, list: func(ctx context.Context) error {
			_, _, err := db.Releases().List(ctx, store.ReleaseSearch{RepoID: f.repo.ID, IncludeDrafts: true}, pg)
			return err
		}},
		{name: "releases without drafts", searched: []string{"releases"}, list: func(ctx context.Context) error {
			_, _, err := db.Releases().List(ctx, store.ReleaseSearch{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "release attachments", searched: []string{"release_attachments"}, list: func(ctx context.Context) error {
			_, _, err := db.ReleaseAttachments().ListByRelease(ctx, f.release.ID, pg)
			return err
		}},
		{name: "tokens", searched: []string{"access_tokens"}, list: func(ctx context.Context) error {
			_, _, err := db.Tokens().ListByUser(ctx, f.alice.ID, pg)
			return err
		}},
		{name: "oauth2 applications of a user", searched: []string{"oauth2_applications"}, list: func(ctx context.Context) error {
			_, _, err := db.OAuth2().ListApps(ctx, f.alice.ID, pg)
			return err
		}},
		{name: "ssh keys of a user", searched: []string{"public_keys"}, list: func(ctx context.Context) error {
			_, _, err := db.Keys().ListPublicKeys(ctx, f.alice.ID, "", pg)
			return err
		}},
		{name: "deploy keys of a repository", searched: []string{"deploy_keys"}, list: func(ctx context.Context) error {
			_, _, err := db.Keys().ListDeployKeys(ctx, f.repo.ID, 0, "", pg)
			return err
		}},
		{name: "gpg keys of a user", searched: []string{"gpg_keys"}, list: func(ctx context.Context) error {
			_, _, err := db.Keys().ListGPGKeys(ctx, f.alice.ID, pg)
			return err
		}},
		{name: "gpg keys of a page of commits", searched: []string{"gpg_keys"}, list: func(ctx context.Context) error {
			_, err := db.Keys().FindGPGKeysByKeyIDs(ctx, []string{"SUB-alice", "KEY-bob"})
			return err
		}},
		{name: "accounts of a page of commits", searched: []string{"emails"}, list: func(ctx context.Context) error {
			_, err := db.Emails().OwnerIDs(ctx, []string{"alice@example.com", "Bob@example.com", "nobody@example.com"})
			return err
		}},
		{name: "emails", ordered: []string{"emails"}, list: func(ctx context.Context) error {
			_, _, err := db.Emails().Search(ctx, "", pg)
			return err
		}},
		// Not "topics": since the search counts only repositories the caller
		// may see, its order is a per-caller aggregate that no index holds
		// (an open item of the performance issue).
		{name: "reactions", searched: []string{"reactions"}, list: func(ctx context.Context) error {
			_, _, err := db.Reactions().List(ctx, f.issue.ID, 0, pg)
			return err
		}},
		{name: "tracked times of an issue", searched: []string{"tracked_times"}, list: func(ctx context.Context) error {
			_, _, err := db.TrackedTimes().List(ctx, store.TimeFilter{IssueID: f.issue.ID}, pg)
			return err
		}},
		{name: "tracked times of a user", searched: []string{"tracked_times"}, list: func(ctx context.Context) error {
			_, _, err := db.TrackedTimes().List(ctx, store.TimeFilter{UserID: f.alice.ID}, pg)
			return err
		}},
		{name: "projects", searched: []string{"projects"}, list: func(ctx context.Context) error {
			_, _, err := db.Projects().List(ctx, f.repo.ID, nil, pg)
			return err
		}},
		{name: "open projects", searched: []string{"projects"}, list: func(ctx context.Context) error {
			_, _, err := db.Projects().List(ctx, f.repo.ID, &no, pg)
			return err
		}},
		{name: "branch protections", searched: []string{"protected_branches"}, list: func(ctx context.Context) error {
			_, _, err := db.Protections().List(ctx, f.repo.ID, pg)
			return err
		}},
		{name: "notices", ordered: []string{"notices"}, list: func(ctx context.Context) error {
			_, _, err := db.Notices().List(ctx, pg)
			return err
		}},
		// Not the package lists' name filter (q): it matches names inside
		// the packages table, so no index of versions can hold it.
		{name: "package versions of an owner", searched: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{OwnerID: f.alice.ID}, pg)
			return err
		}},
		{name: "package versions of an owner, one type", searched: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{OwnerID: f.alice.ID, Type: "generic"}, deep)
			return err
		}},
		{name: "newest version of each package of an owner, one type (npm search)", searched: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{OwnerID: f.bob.ID, Type: "npm", LatestOnly: true}, pg)
			return err
		}},
		{name: "versions of a package", searched: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{PackageID: f.pkg.ID}, pg)
			return err
		}},
		{name: "package versions of every owner", ordered: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{}, pg)
			return err
		}},
		{name: "package versions of every owner, one type", searched: []string{"package_versions"}, list: func(ctx context.Context) error {
			_, _, err := db.Packages().SearchVersions(ctx, store.PackageSearch{Type: "generic"}, pg)
			return err
		}},
		{name: "actions secrets of a repository", searched: []string{"action_secrets"}, list: func(ctx context.Context) error {
			_, _, err := db.ActionSecrets().List(ctx, store.ActionScope{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "actions secrets of an owner", searched: []string{"action_secrets"}, list: func(ctx context.Context) error {
			_, _, err := db.ActionSecrets().List(ctx, store.ActionScope{OwnerID: f.org.ID}, deep)
			return err
		}},
		{name: "actions variables of a repository", searched: []string{"action_variables"}, list: func(ctx context.Context) error {
			_, _, err := db.ActionVariables().List(ctx, store.ActionScope{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "actions variables of an owner", searched: []string{"action_variables"}, list: func(ctx context.Context) error {
			_, _, err := db.ActionVariables().List(ctx, store.ActionScope{OwnerID: f.org.ID}, deep)
			return err
		}},
		{name: "hooks of a repository", searched: []string{"webhooks"}, list: func(ctx context.Context) error {
			_, _, err := db.Hooks().List(ctx, store.HookFilter{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "hooks of an owner", searched: []string{"webhooks"}, list: func(ctx context.Context) error {
			_, _, err := db.Hooks().List(ctx, store.HookFilter{OwnerID: f.org.ID}, pg)
			return err
		}},
		{name: "system hooks", searched: []string{"webhooks"}, list: func(ctx context.Context) error {
			_, _, err := db.Hooks().List(ctx, store.HookFilter{SiteWide: true, System: &yes}, pg)
			return err
		}},
		{name: "site hooks, all", searched: []string{"webhooks"}, list: func(ctx context.Context) error {
			_, _, err := db.Hooks().List(ctx, store.HookFilter{SiteWide: true}, pg)
			return err
		}},
		{name: "hook deliveries", searched: []string{"hook_deliveries"}, list: func(ctx context.Context) error {
			_, _, err := db.Hooks().ListDeliveries(ctx, f.hook.ID, pg)
			return err
		}},
		{name: "runners of the site", ordered: []string{"action_runners"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRunners(ctx, store.RunnerScope{}, nil, pg)
			return err
		}},
		{name: "runners a repository may use", bounded: "a repository's, its owner's and the site's runners", list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRunners(ctx, store.RunnerScope{OwnerID: f.alice.ID, RepoID: f.repo.ID}, nil, pg)
			return err
		}},
		{name: "runners an owner may use", bounded: "an owner's and the site's runners", list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRunners(ctx, store.RunnerScope{OwnerID: f.alice.ID}, &no, pg)
			return err
		}},
		{name: "workflow runs of a repository", searched: []string{"action_runs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRuns(ctx, store.RunFilter{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "workflow runs of a repository, filtered", searched: []string{"action_runs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRuns(ctx, store.RunFilter{RepoID: f.repo.ID, Statuses: []store.ActionStatus{store.ActionSuccess}, Event: "push", Ref: "refs/heads/main"}, pg)
			return err
		}},
		{name: "workflow runs of an owner", searched: []string{"action_runs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRuns(ctx, store.RunFilter{OwnerID: f.alice.ID}, deep)
			return err
		}},
		{name: "workflow runs of every repository", ordered: []string{"action_runs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListRuns(ctx, store.RunFilter{}, pg)
			return err
		}},
		{name: "workflow jobs of a repository", searched: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListJobs(ctx, store.JobFilter{RepoID: f.repo.ID}, pg)
			return err
		}},
		{name: "workflow jobs of an owner, newest first", searched: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListJobs(ctx, store.JobFilter{OwnerID: f.alice.ID, Desc: true}, pg)
			return err
		}},
		{name: "workflow jobs of a run", searched: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListJobs(ctx, store.JobFilter{RepoID: f.repo.ID, RunID: 1}, pg)
			return err
		}},
		{name: "workflow jobs of every repository", ordered: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListJobs(ctx, store.JobFilter{}, deep)
			return err
		}},
		{name: "workflow jobs of every repository, one status", searched: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, _, err := db.Actions().ListJobs(ctx, store.JobFilter{Statuses: []store.ActionStatus{store.ActionWaiting}}, pg)
			return err
		}},
		{name: "running tasks started long ago (stop_endless_tasks)", searched: []string{"action_tasks"}, list: func(ctx context.Context) error {
			_, err := db.Actions().RunningTasksStartedBefore(ctx, time.Now().Add(-3*time.Hour), 10)
			return err
		}},
		{name: "jobs waiting long (cancel_abandoned_jobs)", searched: []string{"action_run_jobs"}, list: func(ctx context.Context) error {
			_, err := db.Actions().JobsUpdatedBefore(ctx, []store.ActionStatus{store.ActionWaiting, store.ActionBlocked}, time.Now().Add(-24*time.Hour), 10)
			return err
		}},
		{name: "teams of a repository", searched: []string{"teams"}, list: func(ctx context.Context) error {
			_, _, err := db.Teams().ListForRepo(ctx, f.org.ID, f.orgRepo.ID, store.TeamViewer{UserID: f.alice.ID}, pg)
			return err
		}},
		{name: "teams of an organization", searched: []string{"teams"}, list: func(ctx context.Context) error {
			_, _, err := db.Teams().List(ctx, f.org.ID, store.TeamViewer{UserID: f.bob.ID}, "", false, pg)
			return err
		}},
		{name: "teams of a user", searched: []string{"team_users"}, bounded: "a user's teams", list: func(ctx context.Context) error {
			_, _, err := db.Teams().ListForUser(ctx, f.alice.ID, nil, pg)
			return err
		}},
		{name: "members of a team", searched: []string{"team_users"}, bounded: "a team's members", list: func(ctx context.Context) error {
			_, _, err := db.Teams().ListMembers(ctx, f.ownersTeam.ID, pg)
			return err
		}},
		{name: "repositories of a team", searched: []string{"repositories"}, list: func(ctx context.Context) error {
			_, _, err := db.Teams().ListRepos(ctx, f.ownersTeam, store.RepoViewer{UserID: f.alice.ID}, pg)
			return err
		}},
		{name: "collaborators", searched: []string{"collaborations"}, bounded: "a repository's collaborators", list: func(ctx context.Context) error {
			_, _, err := db.Access().ListCollaborators(ctx, f.repo.ID, pg)
			return err
		}},
	}
	for _, c := range cases {
		stmts, err := rec.record(func() error { return c.list(ctx) })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(stmts) == 0 {
			t.Fatalf("%s: no statement recorded", c.name)
		}
		for _, sql := range stmts {
			plan, err := db.Explain(ctx, sql, c.bounded != "")
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var problems []string
			if db.UsesPostgres() {
				problems = pgPlanProblems(t, plan[0], c)
			} else {
				problems = sqlitePlanProblems(plan, c)
			}
			if len(problems) > 0 {
				t.Errorf("%s:\n  statement: %s\n  problems: %s\n  plan:\n    %s", c.name, sql,
					strings.Join(problems, "; "), strings.Join(plan, "\n    "))
			}
		}
	}
}

// sqlitePlanProblems reads EXPLAIN QUERY PLAN: "SEARCH t USING INDEX i
// (a=?)" reads a range, "SCAN t USING INDEX i" walks a whole index in its
// order, a bare "SCAN t" the whole table in id order, and "USE TEMP B-TREE
// FOR ORDER BY" sorts.
func sqlitePlanProblems(plan []string, c planCase) []string {
	var out []string
	for _, line := range plan {
		if strings.Contains(line, "TEMP B-TREE") && strings.Contains(line, "ORDER BY") && c.bounded == "" {
			out = append(out, "sorts for the ORDER BY")
		}
		for _, t := range c.searched {
			if regexp.MustCompile(`^SCAN ` + t + `\b`).MatchString(line) {
				out = append(out, "scans "+t+" instead of searching a range")
			}
		}
		for _, t := range c.keyed {
			if regexp.MustCompile(`^(SCAN|SEARCH) `+t+`\b`).MatchString(line) && !strings.Contains(line, "INTEGER PRIMARY KEY") {
				out = append(out, "reaches "+t+" otherwise than by its key")
			}
		}
		if c.probed && strings.Contains(line, "idx_repository_owner_id") {
			out = append(out, "gathers the viewer's repositories by owner")
		}
		for _, t := range c.trigram {
			if regexp.MustCompile(`^(SCAN|SEARCH) `+t+`\b`).MatchString(line) && !strings.Contains(line, "INTEGER PRIMARY KEY") &&
				!strings.Contains(line, "id=?)") && !strings.Contains(line, "owner_id=?") {
				out = append(out, "reaches "+t+" otherwise than from its trigram index")
			}
		}
	}
	for _, t := range c.trigram {
		if !slices.ContainsFunc(plan, func(l string) bool { return strings.HasPrefix(l, "SCAN "+t+"_trgm VIRTUAL TABLE") }) &&
			slices.ContainsFunc(plan, func(l string) bool { return regexp.MustCompile(`^(SCAN|SEARCH) ` + t + `\b`).MatchString(l) }) {
			out = append(out, "reads "+t+" without its trigram index")
		}
	}
	return out
}

type pgNode struct {
	NodeType  string   `json:"Node Type"`
	Parent    string   `json:"Parent Relationship"`
	Relation  string   `json:"Relation Name"`
	IndexCond string   `json:"Index Cond"`
	IndexName string   `json:"Index Name"`
	Plans     []pgNode `json:"Plans"`
}

// pgPlanProblems walks EXPLAIN (FORMAT JSON) planned without sequential
// scans and sorts: a Sort or a Seq Scan still there has no index to avoid
// it, and an index scan of a searched table without an Index Cond walks
// the whole index.
func pgPlanProblems(t *testing.T, raw string, c planCase) []string {
	var doc []struct {
		Plan pgNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("read plan %s: %v", raw, err)
	}
	var out []string
	sawTrigram, readsTrigram := false, false
	var walk func(n pgNode)
	walk = func(n pgNode) {
		switch n.NodeType {
		case "Sort", "Incremental Sort":
			if c.bounded == "" {
				out = append(out, "sorts ("+n.NodeType+")")
			}
		case "Seq Scan":
			for _, tb := range c.searched {
				if n.Relation == tb {
					out = append(out, "Seq Scan on "+tb)
				}
			}
		case "Index Scan", "Index Only Scan":
			for _, tb := range c.searched {
				if n.Relation == tb && n.IndexCond == "" {
					out = append(out, "walks a whole index of "+tb)
				}
			}
		}
		for _, tb := range c.keyed {
			if n.Relation == tb && n.IndexName != tb+"_pkey" {
				out = append(out, n.NodeType+" of "+tb+" otherwise than by its key")
			}
		}
		if c.probed && n.Relation == "repositories" && strings.Contains(n.IndexName, "owner_id") {
			out = append(out, n.NodeType+" of repositories by owner: gathers the viewer's repositories")
		}
		for _, tb := range c.trigram {
			if n.Relation != tb {
				continue
			}
			readsTrigram = true
			switch {
			case n.NodeType == "Bitmap Heap Scan":
				// Its indexes are its children's (Bitmap Index Scans,
				// perhaps under a BitmapOr), beside the InitPlans that
				// compute what they look up (a pattern kept out of the
				// planner's sight, see opaquePattern).
				var bad func(n pgNode) bool
				bad = func(n pgNode) bool {
					if n.NodeType == "Bitmap Index Scan" {
						if strings.HasSuffix(n.IndexName, "_trgm") {
							sawTrigram = true
							return false
						}
						return !strings.Contains(n.IndexName, "owner_id")
					}
					kids := slices.DeleteFunc(slices.Clone(n.Plans), func(k pgNode) bool { return k.Parent == "InitPlan" })
					return len(kids) == 0 || slices.ContainsFunc(kids, bad)
				}
				if bad(n) {
					out = append(out, "Bitmap Heap Scan of "+tb+" not through its trigram index")
				}
			case (n.NodeType == "Index Scan" || n.NodeType == "Index Only Scan") && n.IndexCond != "" &&
				(n.IndexName == tb+"_pkey" || strings.Contains(n.IndexName, "owner_id")):
			default:
				out = append(out, n.NodeType+" of "+tb+" ("+n.IndexName+") otherwise than from its trigram index")
			}
		}
		for _, child := range n.Plans {
			walk(child)
		}
	}
	walk(doc[0].Plan)
	if readsTrigram && !sawTrigram {
		out = append(out, "no trigram index read")
	}
	return out
}

type planFixture struct {
	alice, bob, org *store.User
	repo, orgRepo   *store.Repository
	ownersTeam      *store.Team
	issue           *store.Issue
	milestone       *store.Milestone
	label           *store.Label
	release         *store.Release
	pkg             *store.Package
	hook            *store.Hook
}

// seedPlanData writes a few rows of every listed kind: each list must have
// something to return, or the store skips reading its page.
func seedPlanData(t *testing.T, db *sqlstore.DB) *planFixture {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f := &planFixture{alice: mustCreateUser(t, db, newUser("alice")), bob: mustCreateUser(t, db, newUser("bob"))}
	f.org = newUser("org")
	f.org.Type = store.UserTypeOrganization
	mustCreateUser(t, db, f.org)
	must(db.Teams().CreateOwnersTeam(ctx, f.org.ID))
	ownersTeam, ferr := db.Teams().FindByName(ctx, f.org.ID, store.OwnersTeamName)
	must(ferr)
	must(db.Teams().AddMember(ctx, ownersTeam, f.alice.ID))
	f.ownersTeam = ownersTeam
	for _, u := range []*store.User{f.alice, f.bob} {
		must(db.Emails().Create(ctx, &store.Email{UserID: u.ID, Email: u.Name + "@example.com", IsPrimary: true}))
		must(db.Tokens().Create(ctx, &store.AccessToken{UserID: u.ID, Name: "t", TokenHash: "h-" + u.Name, TokenLastEight: "12345678"}))
		must(db.OAuth2().CreateApp(ctx, &store.OAuth2Application{UserID: u.ID, Name: "a", ClientID: "c-" + u.Name, ClientSecretHash: "s", RedirectURIs: `["https://x/"]`}))
		must(db.Keys().CreatePublicKey(ctx, &store.PublicKey{OwnerID: u.ID, Name: "k", Fingerprint: "SHA256:" + u.Name, Content: "ssh-ed25519 AAAA"}))
		must(db.Keys().CreateGPGKey(ctx, &store.GPGKey{OwnerID: u.ID, KeyID: "KEY-" + u.Name, Content: "c",
			Subkeys: []*store.GPGKey{{KeyID: "SUB-" + u.Name, Content: "c"}}}))
	}
	var repos []*store.Repository
	for i, owner := range []*store.User{f.alice, f.alice, f.alice, f.org} {
		r := &store.Repository{OwnerID: owner.ID, Name: fmt.Sprintf("r%d", i), IsPrivate: i == 1, HasIssues: true}
		must(db.Repos().Create(ctx, r))
		repos = append(repos, r)
	}
	f.repo, f.orgRepo = repos[0], repos[3]
	// Stars, follows and a block, so their lists have rows to read.
	for _, r := range repos {
		_, err := db.People().Star(ctx, f.bob.ID, r.ID, time.Now())
		must(err)
	}
	_, ferr = db.People().Follow(ctx, f.bob.ID, f.alice.ID, time.Now())
	must(ferr)
	_, ferr = db.People().Block(ctx, &store.UserBlock{BlockerID: f.alice.ID, BlockeeID: f.bob.ID, CreatedAt: time.Now()})
	must(ferr)
	must(db.Keys().CreateDeployKey(ctx, &store.DeployKey{RepoID: f.repo.ID, Name: "d", Fingerprint: "SHA256:d", Content: "ssh-ed25519 AAAA"}))
	// A collaborator, so the collaborator list has a row to read.
	must(db.Access().SetCollaborator(ctx, &store.Collaboration{RepoID: f.repo.ID, UserID: f.bob.ID, Mode: store.AccessWrite}))
	must(db.Topics().Update(ctx, f.repo.ID, func([]string) ([]string, error) { return []string{"go", "sql"}, nil }))
	f.label = &store.Label{RepoID: f.repo.ID, Name: "bug", Color: "#ff0000"}
	must(db.Labels().Create(ctx, f.label))
	must(db.Labels().Create(ctx, &store.Label{OrgID: f.org.ID, Name: "org-bug", Color: "#00ff00"}))
	deadline := time.Now()
	f.milestone = &store.Milestone{RepoID: f.repo.ID, Title: "v1", Deadline: &deadline}
	must(db.Milestones().Create(ctx, f.milestone))
	must(db.Milestones().Create(ctx, &store.Milestone{RepoID: f.repo.ID, Title: "v2"}))
	var issues []*store.Issue
	for i := 1; i <= 40; i++ {
		is := &store.Issue{RepoID: f.repo.ID, Index: int64(i), PosterID: f.alice.ID, Title: fmt.Sprintf("issue %d", i),
			IsClosed: i%4 == 0, IsPull: i%10 == 0}
		if i%3 == 0 {
			is.MilestoneID = f.milestone.ID
		}
		issues = append(issues, is)
	}
	must(db.InsertBatches(ctx, "issues", issues, 100))
	f.issue = issues[0]
	// Other repositories', issues' and users' rows, so that on PostgreSQL
	// the statistics show one repository's (issue's, user's) rows as the
	// small share of the table they are in real life, and the planner
	// weighs the indexes as it would there.
	var others []*store.Issue
	var times []*store.TrackedTime
	for i := 1; i <= 3000; i++ {
		others = append(others, &store.Issue{RepoID: repos[2].ID, Index: int64(i), PosterID: f.bob.ID, Title: "other"})
	}
	must(db.InsertBatches(ctx, "issues", others, 1000))
	for i, is := range others {
		times = append(times, &store.TrackedTime{IssueID: is.ID, UserID: f.bob.ID, Time: int64(i)})
	}
	must(db.InsertBatches(ctx, "tracked_times", times, 1000))
	// Pull requests: f.repo's few, and many of another repository's.
	var pulls []*store.PullRequest
	for _, is := range issues {
		if is.IsPull {
			pulls = append(pulls, &store.PullRequest{IssueID: is.ID, BaseRepoID: f.repo.ID, BaseBranch: "main", HeadRepoID: f.repo.ID, HeadBranch: "f"})
		}
	}
	for i, is := range others[:2000] {
		pulls = append(pulls, &store.PullRequest{IssueID: is.ID, BaseRepoID: repos[2].ID, BaseBranch: fmt.Sprintf("b%d", i%50),
			HeadRepoID: repos[2].ID, HeadBranch: fmt.Sprintf("h%d", i)})
	}
	must(db.InsertBatches(ctx, "pull_requests", pulls, 1000))
	var people []*store.User
	for i := 0; i < 300; i++ {
		u := newUser(fmt.Sprintf("person%03d", i))
		u.LowerName = u.Name
		if i < 3 {
			u.Type = store.UserTypeOrganization
		}
		people = append(people, u)
	}
	must(db.InsertBatches(ctx, "users", people, 1000))
	var memberships []*store.OrgMember
	var theirRepos []*store.Repository
	for i, u := range people[3:] {
		memberships = append(memberships, &store.OrgMember{OrgID: people[i%3].ID, UserID: u.ID})
		for j := 0; j < 2; j++ {
			name := fmt.Sprintf("repo%d", j)
			theirRepos = append(theirRepos, &store.Repository{OwnerID: u.ID, Name: name, LowerName: name, HasIssues: true})
		}
	}
	must(db.InsertBatches(ctx, "org_members", memberships, 1000))
	must(db.InsertBatches(ctx, "repositories", theirRepos, 1000))
	// Package versions: a few of alice's package among many of bob's.
	f.pkg = &store.Package{OwnerID: f.alice.ID, Type: "generic", Name: "lib"}
	must(db.Packages().FindOrCreate(ctx, f.pkg))
	bobPkg := &store.Package{OwnerID: f.bob.ID, Type: "npm", Name: "other"}
	must(db.Packages().FindOrCreate(ctx, bobPkg))
	var versions []*store.PackageVersion
	for i := 1; i <= 3000; i++ {
		v := &store.PackageVersion{PackageID: bobPkg.ID, OwnerID: f.bob.ID, Type: "npm", CreatorID: f.bob.ID,
			Version: fmt.Sprintf("1.0.%d", i), LowerVersion: fmt.Sprintf("1.0.%d", i), CreatedAt: time.Now()}
		if i <= 40 {
			v.PackageID, v.OwnerID, v.Type, v.CreatorID = f.pkg.ID, f.alice.ID, "generic", f.alice.ID
		}
		versions = append(versions, v)
	}
	must(db.InsertBatches(ctx, "package_versions", versions, 1000))
	must(db.Labels().AddToIssue(ctx, f.issue.ID, []int64{f.label.ID}))
	must(db.Issues().AddMentions(ctx, f.issue.ID, []string{"bob"}))
	must(db.Issues().SetAssignees(ctx, f.issue.ID, []int64{f.alice.ID}))
	must(db.Comments().Create(ctx, &store.Comment{IssueID: f.issue.ID, PosterID: f.bob.ID, Body: "hi"}))
	_, err := db.Reactions().Create(ctx, &store.Reaction{IssueID: f.issue.ID, UserID: f.bob.ID, Type: "+1"})
	must(err)
	must(db.TrackedTimes().Create(ctx, &store.TrackedTime{IssueID: f.issue.ID, UserID: f.alice.ID, Time: 60}))
	must(db.Projects().Create(ctx, &store.Project{RepoID: f.repo.ID, Title: "board"}))
	must(db.Protections().Create(ctx, &store.ProtectedBranch{RepoID: f.repo.ID, RuleName: "main",
		PushWhitelistUserIDs: []int64{}, PushWhitelistTeamIDs: []int64{}, ForcePushAllowlistUserIDs: []int64{},
		ForcePushAllowlistTeamIDs: []int64{}, MergeWhitelistUserIDs: []int64{}, MergeWhitelistTeamIDs: []int64{},
		StatusCheckContexts: []string{}, ApprovalsWhitelistUserIDs: []int64{}, ApprovalsWhitelistTeamIDs: []int64{},
		BypassAllowlistUserIDs: []int64{}, BypassAllowlistTeamIDs: []int64{}}))
	now := time.Now()
	f.release = &store.Release{RepoID: f.repo.ID, TagName: "v1", PublishedAt: &now}
	must(db.Releases().Create(ctx, f.release))
	must(db.Releases().Create(ctx, &store.Release{RepoID: f.repo.ID, TagName: "v2", IsDraft: true}))
	must(db.ReleaseAttachments().Create(ctx, &store.ReleaseAttachment{UUID: "u1", RepoID: f.repo.ID, ReleaseID: f.release.ID, Name: "a.zip"}))
	f.hook = &store.Hook{RepoID: f.repo.ID, Type: "gitea", URL: "http://x", Events: `["push"]`}
	must(db.Hooks().Create(ctx, f.hook))
	must(db.Hooks().CreateMany(ctx, []*store.Hook{{OwnerID: f.org.ID, Type: "gitea", URL: "http://x", Events: `["push"]`},
		{IsSystem: true, Type: "gitea", URL: "http://x", Events: `["push"]`}, {Type: "gitea", URL: "http://x", Events: `["push"]`}}))
	must(db.Hooks().Enqueue(ctx, []*store.HookDelivery{{HookID: f.hook.ID, UUID: "d1", Event: "push", EventType: "push", Payload: []byte("{}")},
		{HookID: f.hook.ID, UUID: "d2", Event: "push", EventType: "push", Payload: []byte("{}")}}))
	// Actions secrets and variables of the repository and the organization
	// (the plan test's store has no key: empty values need none).
	for i, sc := range []store.ActionScope{{RepoID: f.repo.ID}, {OwnerID: f.org.ID}, {RepoID: f.repo.ID}, {OwnerID: f.org.ID}} {
		name := fmt.Sprintf("PLAN_%d", i)
		_, err := db.ActionSecrets().Put(ctx, &store.ActionSecret{Scope: sc, Name: name}, "")
		must(err)
		must(db.ActionVariables().Create(ctx, &store.ActionVariable{Scope: sc, Name: name, Data: "v"}))
	}
	// Actions: runners at every scope, and runs of every repository, each
	// with a few jobs.
	for i, scope := range [][2]int64{{0, 0}, {f.alice.ID, 0}, {0, f.repo.ID}, {f.org.ID, 0}} {
		must(db.Actions().CreateRunner(ctx, &store.ActionRunner{UUID: fmt.Sprintf("uuid-%d", i), Name: fmt.Sprintf("runner-%d", i),
			OwnerID: scope[0], RepoID: scope[1], TokenHash: fmt.Sprintf("hash-%d", i), Labels: []string{"linux"}}))
	}
	// Most runs are the organization's and finished, so that one
	// repository's or one owner's, and the unfinished ones, are a small
	// part of the whole, as on a real site.
	for i := 0; i < 300; i++ {
		r := f.orgRepo
		if i%30 == 0 {
			r = repos[(i/30)%3]
		}
		run := &store.ActionRun{RepoID: r.ID, OwnerID: r.OwnerID, WorkflowID: "ci.yml", Ref: "refs/heads/main", Event: "push",
			Status: store.ActionStatus(1 + i%7), CommitSHA: fmt.Sprintf("%040d", i), TriggerUserID: f.alice.ID}
		var jobs []*store.ActionRunJob
		for j := 0; j < 2; j++ {
			jobs = append(jobs, &store.ActionRunJob{RepoID: r.ID, OwnerID: r.OwnerID, Name: fmt.Sprintf("job-%d", j), JobID: "job",
				Needs: []string{}, RunsOn: []string{"linux"}, Status: store.ActionSuccess})
			if i%30 == 0 {
				jobs[j].Status = store.ActionStatus(1 + (i/30+j)%7)
			}
		}
		must(db.Actions().CreateRun(ctx, run, jobs))
	}
	// Watches: f.repo's few, and many users' of the other repositories;
	// an issue's explicit (un)subscriptions.
	var watches []*store.RepoWatch
	for _, r := range repos {
		watches = append(watches, &store.RepoWatch{UserID: f.alice.ID, RepoID: r.ID})
	}
	watches = append(watches, &store.RepoWatch{UserID: f.bob.ID, RepoID: f.repo.ID})
	for _, u := range people {
		watches = append(watches, &store.RepoWatch{UserID: u.ID, RepoID: repos[2].ID})
	}
	for _, r := range theirRepos {
		watches = append(watches, &store.RepoWatch{UserID: r.OwnerID, RepoID: r.ID})
	}
	must(db.InsertBatches(ctx, "watches", watches, 1000))
	// Notification threads: bob's on f.repo's issues, many users' others.
	var threads []*store.Notification
	for _, is := range issues {
		threads = append(threads, &store.Notification{UserID: f.bob.ID, RepoID: f.repo.ID, IssueID: is.ID, Source: "issue", Status: 1 + int(is.ID%3),
			CreatedAt: time.Now(), UpdatedAt: time.Now().Add(time.Duration(is.ID) * time.Second)})
	}
	for i, is := range others[:2000] {
		threads = append(threads, &store.Notification{UserID: people[i%len(people)].ID, RepoID: repos[2].ID, IssueID: is.ID, Source: "issue",
			Status: 1, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	}
	must(db.InsertBatches(ctx, "notifications", threads, 1000))
	must(db.Watches().SetIssueWatch(ctx, f.bob.ID, f.issue.ID, true))
	must(db.Watches().SetIssueWatch(ctx, f.alice.ID, f.issue.ID, false))
	return f
}
