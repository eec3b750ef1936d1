package apitest_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestTimelineIDsOneSpace: comments and events interleaved on one issue
// (and on another) never share an id, as the reference's timeline, whose
// every entry is a comment, has one id space.
func TestTimelineIDsOneSpace(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	const base = "repos/alice/proj/issues"
	e.Do("POST", base, map[string]any{"title": "one"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", base, map[string]any{"title": "two"}, ac).Expect(t, http.StatusCreated)
	for i := range 3 {
		for _, index := range []int{1, 2} {
			e.Do("POST", fmt.Sprintf("%s/%d/comments", base, index), map[string]any{"body": fmt.Sprint("c", i)}, ac).Expect(t, http.StatusCreated)
			e.Do("PATCH", fmt.Sprintf("%s/%d", base, index), map[string]any{"title": fmt.Sprint("t", i)}, ac).Expect(t, http.StatusCreated)
		}
	}
	seen := map[int64]string{}
	for _, index := range []int{1, 2} {
		var list []*models.TimelineComment
		e.Do("GET", fmt.Sprintf("%s/%d/timeline", base, index), nil, ac).Expect(t, http.StatusOK).JSON(t, &list)
		if len(list) != 6 {
			t.Fatalf("#%d: %d entries", index, len(list))
		}
		for _, c := range list {
			if prev, ok := seen[c.ID]; ok {
				t.Fatalf("id %d of a %s on #%d is also a %s's", c.ID, c.Type, index, prev)
			}
			seen[c.ID] = c.Type
		}
	}
}

// TestPinsConcurrent: 20 parallel pins of 20 issues pin exactly as many as
// the limit allows, each at its own place.
func TestPinsConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	const base = "repos/alice/proj/issues"
	const n = 20
	for i := range n {
		e.Do("POST", base, map[string]any{"title": fmt.Sprint("issue ", i)}, ac).Expect(t, http.StatusCreated)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.DoFor(t, "POST", fmt.Sprintf("%s/%d/pin", base, i), nil, ac)
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	var pinned []*models.Issue
	e.Do("GET", base+"/pinned", nil, ac).Expect(t, http.StatusOK).JSON(t, &pinned)
	var orders []int64
	for _, is := range pinned {
		orders = append(orders, is.PinOrder)
	}
	sort.Slice(orders, func(i, j int) bool { return orders[i] < orders[j] })
	if codes[http.StatusNoContent] != 3 || codes[http.StatusBadRequest] != n-3 || fmt.Sprint(orders) != "[1 2 3]" {
		t.Fatalf("statuses %v, pin orders %v", codes, orders)
	}
}
