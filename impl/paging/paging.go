// Package paging holds the one pagination rule every list follows: page is
// 1-based (below 1 means 1), limit defaults to 30 and is capped at 50, and
// each answer carries X-Total-Count and a Link header.
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

// Link returns the Link header for a list answer to r. Link always
// names the first and last pages (so a client past the end can find its way
// back), plus prev and next where they exist.
func Link(r *http.Request, p Params, total int64) (link string) {
	last := int((total + int64(p.Limit) - 1) / int64(p.Limit))
	if last < 1 {
		last = 1
	}
	var links []string
	add := func(page int, rel string) {
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, pageURL(r, page), rel))
	}
	if p.Page < last {
		add(p.Page+1, "next")
	}
	add(last, "last")
	add(1, "first")
	if p.Page > 1 {
		add(min(p.Page-1, last), "prev")
	}
	return strings.Join(links, ",")
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
