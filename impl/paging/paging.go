// Package paging holds the one pagination rule every list follows: page is
// 1-based (below 1 means 1), limit defaults to 30 and is capped at 50, and
// each answer carries X-Total-Count and, when other pages exist, a Link
// header.
package paging

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"repohost/impl/rooturl"
	"repohost/store"
)

// Limits are the paging caps of a server (see app.Config).
type Limits struct {
	// Default is the page size when the client names none.
	Default int
	// Max caps the page size a client may ask for.
	Max int
}

// DefaultLimits are the reference's: 30 by default, at most 50.
func DefaultLimits() Limits { return Limits{Default: 30, Max: 50} }

// Params is a normalised page request.
type Params struct {
	Page  int
	Limit int
}

// From normalises optional page and limit parameters.
func (l Limits) From(page, limit *int64) Params {
	p := Params{Page: 1, Limit: l.Default}
	// maxPage keeps page*limit far from overflowing an int.
	maxPage := int64(math.MaxInt32 / l.Max)
	if page != nil && *page > 1 {
		p.Page = int(min(*page, maxPage))
	}
	if limit != nil && *limit > 0 {
		p.Limit = int(min(*limit, int64(l.Max)))
	}
	return p
}

// Store is the window the store should read.
func (p Params) Store() store.Page {
	return store.Page{Offset: (p.Page - 1) * p.Limit, Limit: p.Limit}
}

// Link returns the Link header for a list answer to r, following the
// reference: "next" and "last" only when a later page exists, "first" and
// "prev" only when an earlier one does, in the order next, last, first, prev.
// Everything on one page gives "", which sends no header at all. A page
// beyond the end has no later page; its "prev" names the last page, the
// nearest one that holds items.
func Link(r *http.Request, p Params, total int64) string {
	last := lastPage(p, total)
	var links []string
	add := func(page int, rel string) {
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, pageURL(r, page), rel))
	}
	if p.Page < last {
		add(p.Page+1, "next")
		add(last, "last")
	}
	if p.Page > 1 {
		add(1, "first")
		add(min(p.Page-1, last), "prev")
	}
	return strings.Join(links, ",")
}

// lastPage is the number of the last page of total items; an empty list
// still has one (empty) page.
func lastPage(p Params, total int64) int {
	return max(1, int((total+int64(p.Limit)-1)/int64(p.Limit)))
}

func pageURL(r *http.Request, page int) string {
	u := url.URL{Path: r.URL.Path}
	q := r.URL.Query()
	// Never echo a secret passed in the query string back into a header.
	q.Del("token")
	q.Del("access_token")
	q.Set("page", strconv.Itoa(page))
	u.RawQuery = q.Encode()
	return rooturl.From(r) + strings.TrimPrefix(u.String(), "/")
}
