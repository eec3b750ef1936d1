package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

// openClasses are the classes of repositories (migrateV42) whose every
// repository vis lets see through its open part: vis.all sees every
// searched class. It asks the rule itself, evaluated over one row per
// combination of the columns the open part reads, so the classes cannot
// drift from visibilityOf (the one SQL restatement of impl/access's rule):
// a class is open when each of its combinations passes.
func (s issueStore) openClasses(ctx context.Context, vis visibility) ([]int, error) {
	if vis.all {
		return searchedClasses, nil
	}
	if vis.open == "" {
		return nil, nil
	}
	var rows []string
	want := map[int]int{}
	for _, private := range []bool{false, true} {
		for _, ov := range []store.Visibility{store.VisibilityPublic, store.VisibilityLimited, store.VisibilityPrivate} {
			c := classPrivate
			if !private {
				c = map[store.Visibility]int{store.VisibilityPublic: classPublic, store.VisibilityLimited: classLimited,
					store.VisibilityPrivate: classHidden}[ov]
			}
			want[c]++
			p := "false"
			if private {
				p = "true"
			}
			rows = append(rows, "SELECT "+p+" AS is_private, "+strconv.Itoa(int(ov))+" AS owner_visibility, "+strconv.Itoa(c)+" AS class")
		}
	}
	var got []int
	err := s.d.conn(ctx).Raw("SELECT repositories.class FROM ("+strings.Join(rows, " UNION ALL ")+") repositories WHERE "+vis.open,
		vis.openArgs...).Scan(&got).Error
	if err != nil {
		return nil, err
	}
	seen := map[int]int{}
	for _, c := range got {
		seen[c]++
	}
	var out []int
	for _, c := range searchedClasses {
		if seen[c] == want[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// acrossPage selects the ids of a page (window w) of a cross-repository
// search without a keyword, reading only what the page needs whoever asks:
// it merges (a) the newest issues of each class the viewer sees wholesale
// (anonymous: public repositories of public owners; signed in: those of
// limited owners too; a site admin: every class), each read from the
// range of idx_issues_class_closed_pull_created of that class, state and
// type, with the page's end as its LIMIT; and (b) the newest of the
// repositories the viewer was given besides (its own, its collaborations,
// teams and organizations) or, for an owner's list, of that owner's
// repositories it may see, read repository by repository through the
// (repo_id, …) indexes. Neither steps over an issue the viewer may not
// see, however many a private repository holds.
func (s issueStore) acrossPage(ctx context.Context, f store.IssueFilter, w window) (*gorm.DB, error) {
	vis := visibilityOf(f.Viewer)
	rest := f
	rest.AcrossRepos, rest.RepoID = false, 0
	n := w.offset + w.limit
	order := issueOrder.sql(w.reverse)
	var arms []*gorm.DB
	arm := func() *gorm.DB {
		return s.filteredFrom(ctx, s.d.conn(ctx).Model(&store.Issue{}), rest, false).
			Select("issues.id, issues.created_at").Order(order).Limit(n)
	}
	var open []int
	var given *gorm.DB // the repositories read one by one
	if f.OwnerID > 0 {
		given = s.searchedRepos(ctx, f)
	} else {
		var err error
		if open, err = s.openClasses(ctx, vis); err != nil {
			return nil, err
		}
		var others []int // the classes (a) does not read
		for _, c := range searchedClasses {
			if !slices.Contains(open, c) {
				others = append(others, c)
			}
		}
		if vis.given != "" && len(others) > 0 {
			given = s.searchable(ctx, f).Select("repositories.id").Where("("+vis.given+")", vis.givenArgs...).
				Where(repoClassOf("repositories")+" IN ?", others)
		}
	}
	states := []bool{false, true}
	if f.IsClosed != nil {
		states = []bool{*f.IsClosed}
	}
	types := []bool{false, true}
	if f.IsPull != nil {
		types = []bool{*f.IsPull}
	}
	for _, c := range open {
		for _, closed := range states {
			for _, pull := range types {
				arms = append(arms, arm().Where("issues.repo_class = ? AND issues.is_closed = ? AND issues.is_pull = ?", c, closed, pull))
			}
		}
	}
	switch {
	case given == nil:
	case s.d.usesPostgres():
		// One bounded read per repository (a lateral subquery on its
		// (repo_id, ...) index), merged below.
		per := arm().Where("issues.repo_id = g.id")
		arms = append(arms, s.d.conn(ctx).Table("(?) g", given).
			Joins("CROSS JOIN LATERAL (?) x", per).Select("x.id, x.created_at").
			Order(strings.ReplaceAll(order, "issues.", "x.")).Limit(n))
	default:
		// SQLite has no lateral subquery: the repositories' ids are
		// gathered first and each is read by its own bounded arm.
		// Only those with an issue: a repository without any costs its
		// arm's planning and nothing else.
		var ids []int64
		err := s.d.conn(ctx).Table("(?) g", given).Select("g.id").
			Where("EXISTS (SELECT 1 FROM issues WHERE issues.repo_id = g.id)").Scan(&ids).Error
		if err != nil {
			return nil, err
		}
		if len(ids) > maxGivenArms {
			// Past that many, one statement would be too long to plan:
			// the issues of those repositories are gathered and sorted
			// (bounded by what the viewer may see, not by what it may not).
			arms = append(arms, arm().Where("issues.repo_id IN ?", ids))
			break
		}
		for _, id := range ids {
			arms = append(arms, arm().Where("issues.repo_id = ?", id))
		}
	}
	if len(arms) == 0 {
		return nil, nil
	}
	union := s.unionAll(ctx, arms)
	return s.d.conn(ctx).Table("(?) u", union).Select("u.id").
		Order(strings.ReplaceAll(order, "issues.", "u.")).Offset(w.offset).Limit(w.limit), nil
}

// maxGivenArms bounds the repositories a viewer was given that SQLite
// reads one arm each (see acrossPage).
const maxGivenArms = 250

// unionAllChunk bounds the terms of one compound SELECT: SQLite's limit
// is 500, but the embedded build's stack overflows preparing a few
// hundred subqueries in one compound.
const unionAllChunk = 50

// unionAll selects the rows of every arm, nested in chunks of
// unionAllChunk.
func (s issueStore) unionAll(ctx context.Context, arms []*gorm.DB) *gorm.DB {
	for len(arms) > 1 {
		var next []*gorm.DB
		for i := 0; i < len(arms); i += unionAllChunk {
			chunk := arms[i:min(i+unionAllChunk, len(arms))]
			parts := make([]string, len(chunk))
			args := make([]any, len(chunk))
			for j, a := range chunk {
				parts[j] = "SELECT * FROM (?) a" + strconv.Itoa(j)
				args[j] = a
			}
			next = append(next, s.d.conn(ctx).Raw(strings.Join(parts, " UNION ALL "), args...))
		}
		arms = next
	}
	return arms[0]
}
