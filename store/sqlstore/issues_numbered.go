package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm"

	"repohost/store"
)

// numbered is one issue for createNumbered: the issue, what it adds to its
// repository's counters, and the events appended with it.
type numbered struct {
	is            *store.Issue
	total, closed int64
	evs           []*store.Event
}

// createNumbered is CreateNumbered's one statement on PostgreSQL, for one
// or more issues of repository repo, numbered in their order. The counter
// is taken first, then the repository row, as NextIndex and
// AdjustRepoCounts take them; the issues are inserted only if both rows
// exist, and the events only with their issues.
func (s issueStore) createNumbered(ctx context.Context, repo int64, items []numbered) error {
	// Everything written here is a row of the issues' repository: lists
	// kept for other repositories stay (see repoWrite).
	ctx = repoWrite(ctx, repo)
	var total, closed int64
	for _, it := range items {
		total, closed = total+it.total, closed+it.closed
	}
	args := map[string]any{"repo": repo, "k": len(items), "total": total, "closed": closed}
	issues := make([]string, len(items))
	for i, it := range items {
		is := it.is
		p := fmt.Sprint("i", i, "_")
		for name, v := range map[string]any{"poster": is.PosterID, "title": is.Title, "body": is.Body,
			"version": is.ContentVersion, "ref": is.Ref, "closedState": is.IsClosed, "pull": is.IsPull,
			"locked": is.IsLocked, "milestone": is.MilestoneID, "comments": is.NumComments, "deadline": is.Deadline,
			"closedAt": is.ClosedAt, "created": is.CreatedAt, "updated": is.UpdatedAt} {
			args[p+name] = v
		}
		// (A name ends at a space, a comma or a parenthesis: no ::.)
		issues[i] = strings.NewReplacer("@", "@"+p).Replace(fmt.Sprintf(`(%d, CAST(@poster AS bigint), CAST(@title AS text),
			CAST(@body AS text), CAST(@version AS bigint), CAST(@ref AS text), CAST(@closedState AS boolean),
			CAST(@pull AS boolean), CAST(@locked AS boolean), CAST(@milestone AS bigint), CAST(@comments AS bigint),
			CAST(@deadline AS timestamptz), CAST(@closedAt AS timestamptz), CAST(@created AS timestamptz),
			CAST(@updated AS timestamptz))`, i))
	}
	// The item's number is its place after the counter's value before
	// this statement.
	const number = "n.max_index - @k + 1"
	var evs []*store.Event
	var of []int // the item of each event
	for item, it := range items {
		for _, e := range it.evs {
			evs, of = append(evs, e), append(of, item)
		}
	}
	// Each payload gets its issue's id and number.
	events := outboxCTE(args, evs, of, "n, i", "i.number = "+number+" + v.item",
		"jsonb_set(jsonb_set(convert_from(v.payload, 'UTF8')::jsonb, '{id}', to_jsonb(i.id)), '{index}', to_jsonb(i.number))")
	// One row per issue (no event id), then one per event (no issue id).
	var rows []struct {
		ID      *int64
		Number  *int64
		EventID *int64
	}
	err := s.d.conn(counterWrite(ctx, repo)).Raw(`WITH n AS (
			INSERT INTO issue_indexes (repo_id, max_index) VALUES (@repo, @k)
			ON CONFLICT (repo_id) DO UPDATE SET max_index = issue_indexes.max_index + @k
			RETURNING max_index
		), c AS (
			UPDATE repositories SET num_issues = num_issues + @total, num_closed_issues = num_closed_issues + @closed
			WHERE id = @repo RETURNING id
		), i AS (
			INSERT INTO issues (repo_id, number, poster_id, title, body, content_version, ref, is_closed, is_pull,
				is_locked, milestone_id, num_comments, deadline, closed_at, created_at, updated_at)
			SELECT @repo, `+number+` + v.ord, v.poster_id, v.title, v.body, v.content_version, v.ref, v.is_closed, v.is_pull,
				v.is_locked, v.milestone_id, v.num_comments, v.deadline, v.closed_at, v.created_at, v.updated_at
			FROM n, c, (VALUES `+strings.Join(issues, ", ")+`) AS v(ord, poster_id, title, body, content_version, ref,
				is_closed, is_pull, is_locked, milestone_id, num_comments, deadline, closed_at, created_at, updated_at)
			ORDER BY v.ord
			RETURNING id, number
		), `+events+`
		SELECT i.id, i.number, NULL::bigint AS event_id FROM i
		UNION ALL SELECT NULL, NULL, e.id FROM e`, args).Scan(&rows).Error
	if err != nil {
		return translateRef(err, "create issue")
	}
	var ids, numbers, eventIDs []int64
	for _, r := range rows {
		if r.ID != nil && r.Number != nil {
			ids, numbers = append(ids, *r.ID), append(numbers, *r.Number)
		} else if r.EventID != nil {
			eventIDs = append(eventIDs, *r.EventID)
		}
	}
	if len(ids) == 0 {
		return translate(gorm.ErrRecordNotFound, "create issue")
	}
	if len(ids) != len(items) || len(eventIDs) != len(evs) {
		return fmt.Errorf("create issue: %d issues and %d events written, %d and %d asked for", len(ids), len(eventIDs), len(items), len(evs))
	}
	// The numbers are consecutive from the first item's.
	first := slices.Min(numbers)
	for k, n := range numbers {
		items[n-first].is.ID, items[n-first].is.Index = ids[k], n
	}
	return setEventIDs(evs, eventIDs, "create issue")
}

// outboxCTE is the part of a data-modifying WITH that appends evs to the
// outbox with their jobs (store.Event.Consumers), for a statement that
// writes the rows they are about: ea, the events, ej, their jobs, and e,
// their ids. Each event's row v (v.payload, and v.item: of[i] for evs[i])
// is joined with from where cond holds, and its payload is the JSON of the
// expression payload. The ids are drawn in evs' order: the n-th id of e
// is the n-th event's. args receives the values. With no event, e is
// empty.
func outboxCTE(args map[string]any, evs []*store.Event, of []int, from, cond, payload string) string {
	if len(evs) == 0 {
		return "e AS (SELECT NULL::bigint AS id WHERE false)"
	}
	var values, owners []string
	for i, e := range evs {
		for _, c := range e.Consumers {
			owners = append(owners, fmt.Sprintf("(%d, CAST(@c%d_%d AS text))", i, i, len(owners)))
			args[fmt.Sprintf("c%d_%d", i, len(owners)-1)] = c
		}
		// (A name ends at a space, a comma or a parenthesis: no ::.)
		values = append(values, fmt.Sprintf(
			"(%d, %d, CAST(@k%d AS text), CAST(@r%d AS bigint), CAST(@a%d AS bigint), CAST(@p%d AS bytea), CAST(@t%d AS timestamptz))",
			i, of[i], i, i, i, i, i))
		args[fmt.Sprint("k", i)], args[fmt.Sprint("r", i)], args[fmt.Sprint("a", i)] = e.Kind, e.RepoID, e.ActorID
		args[fmt.Sprint("p", i)], args[fmt.Sprint("t", i)] = e.Payload, e.CreatedAt
	}
	jobs := ""
	if len(owners) > 0 {
		jobs = `, ej AS (INSERT INTO event_jobs (consumer, event_id, repo_id, state, attempts, run_at, token, last_error, created_at, updated_at)
			SELECT c.consumer, ev.id, ev.repo_id, 'pending', 0, 0, 0, '', ev.created_at, ev.created_at
			FROM (SELECT id, repo_id, created_at, row_number() OVER (ORDER BY id) - 1 AS ord FROM ea) ev
			JOIN (VALUES ` + strings.Join(owners, ", ") + `) AS c(ord, consumer) ON c.ord = ev.ord
			RETURNING id)`
	}
	// Ids are drawn in the order the rows are inserted, which is v.ord's.
	return `ea AS (INSERT INTO events (kind, repo_id, actor_id, payload, created_at)
		SELECT v.kind, v.repo_id, v.actor_id, convert_to((` + payload + `)::text, 'UTF8'), v.created_at
		FROM ` + from + `, (VALUES ` + strings.Join(values, ", ") + `) AS v(ord, item, kind, repo_id, actor_id, payload, created_at)
		WHERE ` + cond + `
		ORDER BY v.ord
		RETURNING id, repo_id, created_at)` + jobs + `, e AS (SELECT id FROM ea)`
}

// maxGroupedCreates bounds the issues one grouped statement creates.
const maxGroupedCreates = 32

// createGroups writes the issue creates of one repository that arrive
// while one is being written as one statement (CreateNumberedAlone on
// PostgreSQL). Each creator of a repository waits for its number's row,
// which the one before it holds until its statement commits: one at a
// time, the repository's creates were bounded by how soon PostgreSQL woke
// the next in line on a busy machine (about a thousand a second on two
// cores), whereas one statement for all that wait costs the lock once.
type createGroups struct {
	mu     sync.Mutex
	queues map[int64][]*createCall // by repository; present while a writer runs
}

type createCall struct {
	ctx  context.Context
	item numbered
	done chan error
}

// create writes item as part of the next statement for its repository,
// and reports how that went once it has.
func (g *createGroups) create(ctx context.Context, s issueStore, item numbered) error {
	call := &createCall{ctx: ctx, item: item, done: make(chan error, 1)}
	repo := item.is.RepoID
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[int64][]*createCall{}
	}
	q, running := g.queues[repo]
	g.queues[repo] = append(q, call)
	g.mu.Unlock()
	if !running {
		go g.write(s, repo)
	}
	select {
	case err := <-call.done:
		if err == nil {
			store.MarkCommitted(ctx)
		}
		return err
	case <-ctx.Done():
		// Taken into a statement already, it may still be written,
		// like a commit whose answer was lost.
		return ctx.Err()
	}
}

// write writes repo's waiting creates, a statement at a time, until none
// waits.
func (g *createGroups) write(s issueStore, repo int64) {
	for {
		g.mu.Lock()
		q := g.queues[repo]
		n := min(len(q), maxGroupedCreates)
		if n == 0 {
			delete(g.queues, repo)
			g.mu.Unlock()
			return
		}
		batch := slices.Clone(q[:n])
		g.queues[repo] = q[n:]
		g.mu.Unlock()
		var live []*createCall
		for _, c := range batch {
			if err := c.ctx.Err(); err != nil {
				c.done <- err
			} else {
				live = append(live, c)
			}
		}
		if len(live) == 0 {
			continue
		}
		items := make([]numbered, len(live))
		for i, c := range live {
			items[i] = c.item
		}
		// The statement is no single request's: it runs to its end
		// whichever of them goes away.
		ctx := context.WithoutCancel(live[0].ctx)
		err := s.createNumbered(ctx, repo, items)
		if err != nil && len(live) > 1 {
			// One refused issue (its poster gone, say) refuses the
			// statement: each is then written alone, for its own answer.
			for _, c := range live {
				c.done <- s.createNumbered(context.WithoutCancel(c.ctx), repo, []numbered{c.item})
			}
			continue
		}
		for _, c := range live {
			c.done <- err
		}
	}
}
