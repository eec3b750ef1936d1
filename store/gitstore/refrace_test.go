package gitstore_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/store/gitstore"
)

// TestRefReadsDuringConcurrentWrites: while branches are created, moved
// and deleted in parallel (each write takes and drops git's "<ref>.lock"),
// readers opening the repository afresh always see it non-empty, always
// find its default branch and never fail.
func TestRefReadsDuringConcurrentWrites(t *testing.T) {
	t.Parallel()
	s, g, first, second := refRepo(t)
	const writers, perWriter = 8, 40
	var wg sync.WaitGroup
	var done atomic.Bool
	var reads, bad atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				rg, err := s.OpenGit("o", "r")
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				empty, err := rg.IsEmpty()
				if err != nil || empty {
					bad.Add(1)
					t.Errorf("IsEmpty = %v, %v", empty, err)
				}
				if h, err := rg.BranchHash("main"); err != nil || h != second {
					bad.Add(1)
					t.Errorf("BranchHash(main) = %v, %v", h, err)
				}
				names, err := rg.BranchNames()
				if err != nil || !contains(names, "main") {
					bad.Add(1)
					t.Errorf("BranchNames = %v, %v", names, err)
				}
			}
		}()
	}
	var ww sync.WaitGroup
	for w := 0; w < writers; w++ {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := 0; i < perWriter; i++ {
				name := plumbing.NewBranchReferenceName(fmt.Sprintf("w%d-%d", w, i%4))
				if i%3 == 0 {
					name = plumbing.NewBranchReferenceName(fmt.Sprintf("dir%d/b%d", w, i))
				}
				up := &gitstore.RefUpdate{Name: name, New: first}
				s.UpdateRefs(g, []*gitstore.RefUpdate{up}, nil)
				if up.Err != nil {
					continue // an existing name: fine
				}
				mv := &gitstore.RefUpdate{Name: name, Old: first, New: second}
				s.UpdateRefs(g, []*gitstore.RefUpdate{mv}, nil)
				if mv.Err != nil {
					t.Errorf("move %s: %v", name, mv.Err)
					continue
				}
				if i%2 == 0 {
					del := &gitstore.RefUpdate{Name: name, Old: second}
					s.UpdateRefs(g, []*gitstore.RefUpdate{del}, nil)
					if del.Err != nil {
						t.Errorf("delete %s: %v", name, del.Err)
					}
				}
			}
		}()
	}
	ww.Wait()
	done.Store(true)
	wg.Wait()
	t.Logf("%d reads, %d wrong", reads.Load(), bad.Load())
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
