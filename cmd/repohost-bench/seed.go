package main

// The seed command fills an empty database with the benchmark's large
// dataset straight through the store's bulk insert (not through the API,
// which would take hours): 5,000 users, 10,000 repositories, one repository
// with 100,000 issues and one with 1,000. Counters are written exact, so the
// server's own checks (issue numbers, repository and milestone counts) hold.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"repohost/impl/auth"
	"repohost/store"
	"repohost/store/gitstore"
	"repohost/store/sqlstore"
)

// Dataset describes what seed wrote; suite reads it back from the file.
type Dataset struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Token    string `json:"token"`
	// AdminToken is a token of AdminUser, a site administrator seeded
	// besides the Users accounts.
	AdminUser  string `json:"admin_user"`
	AdminToken string `json:"admin_token"`
	// Small and Big are repositories of User with SmallIssues and
	// BigIssues issues.
	Small       string `json:"small"`
	Big         string `json:"big"`
	SmallIssues int    `json:"small_issues"`
	BigIssues   int    `json:"big_issues"`
	Users       int    `json:"users"`
	Repos       int    `json:"repos"`
	UserRepos   int    `json:"user_repos"`
	// Seconds is how long seeding took, migrations included.
	Seconds float64 `json:"seconds"`
}

type seedSpec struct {
	users, repos, userRepos, bigIssues, smallIssues int
	bigPrivate                                      bool
}

func seedCmd(args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	data := fs.String("data", "", "data directory of the server (repositories/, the SQLite file)")
	dsn := fs.String("db", "", "postgres:// URL, or empty for the SQLite file in -data")
	out := fs.String("out", "", "file to write the dataset description (JSON) to")
	var spec seedSpec
	fs.IntVar(&spec.users, "users", 5000, "user accounts")
	fs.IntVar(&spec.repos, "repos", 10000, "repositories in all")
	fs.IntVar(&spec.userRepos, "user-repos", 1000, "repositories of the benchmark user (of -repos)")
	fs.IntVar(&spec.bigIssues, "big-issues", 100000, "issues in the big repository")
	fs.IntVar(&spec.smallIssues, "small-issues", 1000, "issues in the small repository")
	fs.BoolVar(&spec.bigPrivate, "big-private", false,
		"make the big repository, which holds the newest issues, private (cross-repository search past invisible issues)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" || *out == "" {
		return errors.New("seed: -data and -out are required")
	}
	if spec.users < 1 || spec.userRepos < 2 || spec.repos < spec.userRepos {
		return errors.New("seed: need at least one user, two repositories of the benchmark user, and -repos >= -user-repos")
	}
	if *dsn == "" {
		*dsn = sqlstore.DefaultSQLitePath(*data)
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	start := time.Now()
	ds, err := seed(context.Background(), *dsn, *data, spec)
	if err != nil {
		return err
	}
	ds.Seconds = time.Since(start).Seconds()
	raw, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d users, %d repositories, %d + %d issues in %.1fs\n",
		ds.Users, ds.Repos, ds.BigIssues, ds.SmallIssues, ds.Seconds)
	return os.WriteFile(*out, raw, 0o600)
}

const seedBatch = 1000

func seed(ctx context.Context, dsn, dataDir string, spec seedSpec) (*Dataset, error) {
	db, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	n, err := db.Users().Count(ctx, store.UserTypeIndividual)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, errors.New("seed: the database already has users; seed an empty one")
	}
	rng := rand.New(rand.NewPCG(17, 17))
	ds := &Dataset{User: "bench", Password: fmt.Sprintf("bench-pw-%08x", rng.Uint32()),
		Small: "small", Big: "big", SmallIssues: spec.smallIssues, BigIssues: spec.bigIssues,
		Users: spec.users, Repos: spec.repos, UserRepos: spec.userRepos}
	// One hash at the server's cost for every account: the benchmark user
	// signs in with it, and hashing 5,000 times would take minutes.
	hash, err := auth.Hasher{Cost: bcrypt.DefaultCost}.HashPassword(ds.Password)
	if err != nil {
		return nil, err
	}
	base := time.Now().UTC().Add(-200 * 24 * time.Hour).Truncate(time.Second)

	users := make([]*store.User, spec.users)
	emails := make([]*store.Email, spec.users)
	for i := range users {
		name := fmt.Sprintf("user%04d", i)
		if i == 0 {
			name = ds.User
		}
		t := base.Add(time.Duration(i) * time.Second)
		users[i] = &store.User{Name: name, LowerName: name, Email: name + "@example.com", PasswordHash: hash,
			Type: store.UserTypeIndividual, IsActive: true, AllowCreateOrg: true, MaxRepoCreation: -1,
			CreatedAt: t, UpdatedAt: t}
		emails[i] = &store.Email{Email: name + "@example.com", LowerEmail: name + "@example.com", IsPrimary: true, IsActivated: true}
	}
	if err := db.InsertBatches(ctx, "users", users, seedBatch); err != nil {
		return nil, err
	}
	for i, e := range emails {
		e.UserID = users[i].ID
	}
	if err := db.InsertBatches(ctx, "emails", emails, seedBatch); err != nil {
		return nil, err
	}
	secret, tokenHash, err := auth.NewToken()
	if err != nil {
		return nil, err
	}
	ds.Token = secret
	if err := db.Tokens().Create(ctx, &store.AccessToken{UserID: users[0].ID, Name: "bench", TokenHash: tokenHash,
		TokenLastEight: secret[len(secret)-8:], Scopes: "all"}); err != nil {
		return nil, err
	}
	// A site administrator, who sees every repository.
	ds.AdminUser = "benchadmin"
	admin := &store.User{Name: ds.AdminUser, LowerName: ds.AdminUser, Email: ds.AdminUser + "@example.com", PasswordHash: hash,
		Type: store.UserTypeIndividual, IsActive: true, IsAdmin: true, MaxRepoCreation: -1, CreatedAt: base, UpdatedAt: base}
	if err := db.InsertBatches(ctx, "users", []*store.User{admin}, seedBatch); err != nil {
		return nil, err
	}
	secret, tokenHash, err = auth.NewToken()
	if err != nil {
		return nil, err
	}
	ds.AdminToken = secret
	if err := db.Tokens().Create(ctx, &store.AccessToken{UserID: admin.ID, Name: "bench", TokenHash: tokenHash,
		TokenLastEight: secret[len(secret)-8:], Scopes: "all"}); err != nil {
		return nil, err
	}

	// The benchmark user owns the first userRepos repositories (small and
	// big among them); the others are spread over the other accounts.
	repos := make([]*store.Repository, spec.repos)
	for i := range repos {
		owner, name := users[0], fmt.Sprintf("repo-%05d", i)
		switch {
		case i == 0:
			name = ds.Small
		case i == 1:
			name = ds.Big
		case i >= spec.userRepos && len(users) > 1:
			owner = users[1+(i-spec.userRepos)%(len(users)-1)]
		}
		t := base.Add(time.Duration(i) * time.Second)
		repos[i] = &store.Repository{OwnerID: owner.ID, Name: name, LowerName: strings.ToLower(name),
			Description: "benchmark repository " + name, DefaultBranch: "main", ObjectFormat: "sha1",
			IsPrivate: i > 1 && i%4 == 0 || i == 1 && spec.bigPrivate, IsEmpty: true,
			HasIssues: true, HasWiki: true, HasPullRequests: true, HasProjects: true, HasReleases: true,
			HasPackages: true, HasActions: true, HasCode: true, ProjectsMode: "all",
			AllowMerge: true, AllowRebase: true, AllowRebaseMerge: true, AllowSquash: true,
			AllowFastForwardOnly: true, AllowRebaseUpdate: true, DefaultMergeStyle: "merge",
			EnableTimeTracker: true, AllowOnlyContributorsToTrackTime: true, EnableIssueDependencies: true,
			CreatedAt: t, UpdatedAt: t}
	}
	if err := db.InsertBatches(ctx, "repositories", repos, seedBatch); err != nil {
		return nil, err
	}
	// Only the two measured repositories get a directory on disk: the
	// measured routes do not open git, and 10,000 bare repositories would
	// dominate the seeding time.
	git, err := gitstore.New(filepath.Join(dataDir, "repositories"))
	if err != nil {
		return nil, err
	}
	for _, name := range []string{ds.Small, ds.Big} {
		if _, err := git.Create(ds.User, name, gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
			return nil, err
		}
	}
	posters := users[:min(len(users), 200)]
	for _, target := range []struct {
		repo   *store.Repository
		issues int
	}{{repos[0], spec.smallIssues}, {repos[1], spec.bigIssues}} {
		if err := seedIssues(ctx, db, rng, target.repo, target.issues, posters, base); err != nil {
			return nil, err
		}
	}
	// PostgreSQL as autovacuum leaves it after a bulk load (statistics,
	// visibility map); SQLite as a production file is, without statistics.
	if err := db.Analyze(ctx); err != nil {
		return nil, err
	}
	return ds, nil
}

// SearchCarriers is how many issues of a seeded repository carry a search
// word, and SearchWords how many words there are: each word is in
// SearchCarriers/SearchWords issues of each repository.
const (
	SearchCarriers = 1000
	SearchWords    = 100
)

// SearchWord is the search word of the k-th carrier; none is the prefix
// of another word of the seed.
func SearchWord(k int) string { return fmt.Sprintf("zkw%03d", k%SearchWords) }

// seedIssues writes n issues of r with labels, milestones, assignees and a
// few comments, and every counter that summarises them.
func seedIssues(ctx context.Context, db *sqlstore.DB, rng *rand.Rand, r *store.Repository, n int, posters []*store.User, base time.Time) error {
	labels := make([]*store.Label, 10)
	for i := range labels {
		labels[i] = &store.Label{RepoID: r.ID, Name: fmt.Sprintf("label-%d", i), Color: "#00aabb", CreatedAt: base, UpdatedAt: base}
	}
	if err := db.InsertBatches(ctx, "labels", labels, seedBatch); err != nil {
		return err
	}
	milestones := make([]*store.Milestone, 5)
	for i := range milestones {
		milestones[i] = &store.Milestone{RepoID: r.ID, Title: fmt.Sprintf("v%d.0", i+1), CreatedAt: base, UpdatedAt: base}
	}
	if err := db.InsertBatches(ctx, "milestones", milestones, seedBatch); err != nil {
		return err
	}
	issues := make([]*store.Issue, n)
	var closed int64
	// At most SearchCarriers issues, spread over the repository's
	// history, carry a search word (SearchWord), so that a keyword finds
	// as many issues in a repository of 100,000 as in one of 1,000.
	every := max(1, n/SearchCarriers)
	for i := range issues {
		t := base.Add(time.Duration(i) * time.Minute)
		body := "Steps to reproduce:\n\n1. seed\n2. measure\n"
		if i%every == 0 {
			body += "Seen with " + SearchWord(i/every) + ".\n"
		}
		is := &store.Issue{RepoID: r.ID, Index: int64(i + 1), PosterID: posters[rng.IntN(len(posters))].ID,
			Title: fmt.Sprintf("Issue number %d of %s", i+1, r.Name), Body: body,
			CreatedAt: t, UpdatedAt: t}
		if i%5 == 4 {
			is.IsClosed, is.ClosedAt = true, &t
			closed++
		}
		if i%10 == 3 {
			m := milestones[rng.IntN(len(milestones))]
			is.MilestoneID = m.ID
			m.NumIssues++
			if is.IsClosed {
				m.NumClosedIssues++
			}
		}
		if i < 200 {
			is.NumComments = 5
		}
		issues[i] = is
	}
	if err := db.InsertBatches(ctx, "issues", issues, seedBatch); err != nil {
		return err
	}
	// Counters the issues need: milestones were inserted with zeros.
	if err := db.WithTx(ctx, func(ctx context.Context) error {
		for _, m := range milestones {
			if err := db.Milestones().AdjustCounts(ctx, m.ID, m.NumIssues, m.NumClosedIssues); err != nil {
				return err
			}
		}
		return db.Issues().AdjustRepoCounts(ctx, r.ID, int64(n), closed)
	}); err != nil {
		return err
	}
	type issueIndex struct{ RepoID, MaxIndex int64 }
	if err := db.InsertBatches(ctx, "issue_indexes", []issueIndex{{r.ID, int64(n)}}, seedBatch); err != nil {
		return err
	}
	type issueLabel struct {
		IssueID, LabelID int64
		IssueCreatedAt   time.Time
	}
	type issueAssignee struct {
		IssueID, AssigneeID int64
		Position            int
	}
	var links []issueLabel
	var assignees []issueAssignee
	var comments []*store.Comment
	for i, is := range issues {
		if i%3 == 0 {
			links = append(links, issueLabel{is.ID, labels[rng.IntN(len(labels))].ID, is.CreatedAt})
		}
		if i%10 == 0 {
			assignees = append(assignees, issueAssignee{is.ID, posters[0].ID, 0})
		}
		for c := int64(0); c < is.NumComments; c++ {
			t := is.CreatedAt.Add(time.Duration(c+1) * time.Second)
			comments = append(comments, &store.Comment{IssueID: is.ID, RepoID: is.RepoID, PosterID: posters[rng.IntN(len(posters))].ID,
				Body: "A comment on the issue.", CreatedAt: t, UpdatedAt: t})
		}
	}
	if err := db.InsertBatches(ctx, "issue_labels", links, seedBatch); err != nil {
		return err
	}
	if len(assignees) > 0 {
		if err := db.InsertBatches(ctx, "issue_assignees", assignees, seedBatch); err != nil {
			return err
		}
	}
	if len(comments) > 0 {
		return db.InsertBatches(ctx, "comments", comments, seedBatch)
	}
	return nil
}
