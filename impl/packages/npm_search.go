package packages

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/store"
)

// npmSearchResult is the answer of GET /-/v1/search, as the npm registry
// defines it (npm/registry docs/REGISTRY-API.md, "Search"): one object per
// package, its newest version, with the number of matches before paging
// and the time of the search.
type npmSearchResult struct {
	Objects []npmSearchObject `json:"objects"`
	Total   int64             `json:"total"`
	Time    string            `json:"time"`
}

type npmSearchObject struct {
	Package npmSearchPackage `json:"package"`
	Score   npmScore         `json:"score"`
	// SearchScore is how well the name matches the text (see
	// npmMatchScore).
	SearchScore float64 `json:"searchScore"`
}

// npmScore carries the registry's score. Quality, popularity and
// maintenance are measures of the public registry (downloads, tests,
// releases) that this server does not keep, so they are 0; the final
// score is the text match, which is what orders a search here.
type npmScore struct {
	Final  float64 `json:"final"`
	Detail struct {
		Quality     float64 `json:"quality"`
		Popularity  float64 `json:"popularity"`
		Maintenance float64 `json:"maintenance"`
	} `json:"detail"`
}

type npmSearchPackage struct {
	Name        string         `json:"name"`
	Scope       string         `json:"scope"`
	Version     string         `json:"version"`
	Description string         `json:"description"`
	Keywords    []string       `json:"keywords,omitempty"`
	Date        string         `json:"date"`
	Links       npmSearchLinks `json:"links"`
	Author      *npmPerson     `json:"author,omitempty"`
	Publisher   npmPerson      `json:"publisher"`
	Maintainers []npmPerson    `json:"maintainers"`
}

type npmSearchLinks struct {
	// NPM is the registry the package is served from, as the reference
	// links it.
	NPM        string `json:"npm"`
	Homepage   string `json:"homepage,omitempty"`
	Repository string `json:"repository,omitempty"`
}

// npmPerson is a user as npm documents name them: the npm CLI shows
// maintainers and publishers by username, the reference sends name.
type npmPerson struct {
	Username string `json:"username,omitempty"`
	Name     string `json:"name,omitempty"`
	Email    string `json:"email,omitempty"`
	URL      string `json:"url,omitempty"`
}

// npmManifest is what a search shows of a version's package.json.
type npmManifest struct {
	Description string          `json:"description"`
	Keywords    json.RawMessage `json:"keywords"`
	Homepage    string          `json:"homepage"`
	Repository  json.RawMessage `json:"repository"`
	Author      json.RawMessage `json:"author"`
}

// npmSearchParam reads a non-negative integer parameter; absent is -1.
func npmSearchParam(r *http.Request, name string) (int64, error) {
	raw := strings.TrimSpace(r.URL.Query().Get(name))
	if raw == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, apierr.BadRequest("%s must be a non-negative integer", name)
	}
	return n, nil
}

// npmSearch answers GET /api/packages/{owner}/npm/-/v1/search?text=&size=&from=:
// the owner's npm packages whose name contains text (ignoring case), each
// at its newest version, newest first as the reference lists them; size
// is the page size (the API's default and cap) and from the number of
// results to skip. Whoever may read the owner's packages may search them.
func (h Handlers) npmSearch(req npmRequest) error {
	_, owner, err := h.registryCaller(req.r, false)
	if err != nil {
		return err
	}
	size, err := npmSearchParam(req.r, "size")
	if err != nil {
		return err
	}
	from, err := npmSearchParam(req.r, "from")
	if err != nil {
		return err
	}
	limits := h.Config.Paging
	if size <= 0 {
		size = int64(limits.Default)
	}
	size = min(size, int64(limits.Max))
	from = min(max(from, 0), math.MaxInt32)
	text := strings.TrimSpace(req.r.URL.Query().Get("text"))
	vs, total, err := h.Store.Packages().SearchVersions(req.ctx,
		store.PackageSearch{OwnerID: owner.ID, Type: "npm", Query: text, LatestOnly: true},
		store.Page{Offset: int(from), Limit: int(size)})
	if err != nil {
		return err
	}
	registry := npmRegistryURL(req.r, owner)
	out := npmSearchResult{Objects: make([]npmSearchObject, 0, len(vs)), Total: total,
		Time: h.Clock.Now().UTC().Format(npmTimeLayout)}
	for _, v := range vs {
		out.Objects = append(out.Objects, npmSearchEntry(v, owner, registry, text))
	}
	return writeJSON(req.w, http.StatusOK, out)
}

// npmTimeLayout is how the npm registry writes a search's time (a
// JavaScript Date's string form).
const npmTimeLayout = "Mon Jan 02 2006 15:04:05 GMT+0000 (Coordinated Universal Time)"

// npmSearchEntry is one result: v (the package's newest version, its
// Package loaded) as its package.json describes it.
func npmSearchEntry(v *store.PackageVersion, owner *store.User, registry, text string) npmSearchObject {
	var m npmManifest
	if v.Metadata != "" {
		// A document that does not parse was refused at publish; a
		// field of an unexpected shape is left out below.
		_ = json.Unmarshal([]byte(v.Metadata), &m)
	}
	name := v.Package.Name
	scope := "unscoped"
	if s, _, ok := strings.Cut(name, "/"); ok && strings.HasPrefix(s, "@") {
		scope = strings.TrimPrefix(s, "@")
	}
	me := npmPerson{Username: owner.Name, Name: owner.Name}
	pkg := npmSearchPackage{
		Name: name, Scope: scope, Version: v.Version, Description: m.Description,
		Keywords: npmKeywords(m.Keywords), Date: v.CreatedAt.UTC().Format(time.RFC3339),
		Links:     npmSearchLinks{NPM: registry, Homepage: m.Homepage, Repository: npmRepositoryURL(m.Repository)},
		Author:    npmAuthor(m.Author),
		Publisher: me, Maintainers: []npmPerson{me},
	}
	score := npmMatchScore(name, text)
	obj := npmSearchObject{Package: pkg, SearchScore: score}
	obj.Score.Final = score
	return obj
}

// npmMatchScore rates how much of the name the text covers: 1 for the
// whole name (or no text), less the more of the name the text leaves out.
func npmMatchScore(name, text string) float64 {
	if text == "" || len(name) == 0 {
		return 1
	}
	return math.Min(1, float64(len(text))/float64(len(name)))
}

// npmKeywords reads package.json's keywords: a list of strings, or (as
// older packages wrote them) one string of words.
func npmKeywords(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && strings.TrimSpace(one) != "" {
		return strings.FieldsFunc(one, func(r rune) bool { return r == ',' || r == ' ' })
	}
	return nil
}

// npmRepositoryURL reads package.json's repository: a URL or shorthand
// string, or an object with a url.
func npmRepositoryURL(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.URL
	}
	return ""
}

// npmAuthor reads package.json's author: "Name <email> (url)" or an
// object with those fields; nil when there is none.
func npmAuthor(raw json.RawMessage) *npmPerson {
	var p npmPerson
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil:
		p.Name = strings.TrimSpace(s)
		if i := strings.IndexByte(p.Name, '('); i >= 0 {
			if j := strings.IndexByte(p.Name[i:], ')'); j > 0 {
				p.URL = strings.TrimSpace(p.Name[i+1 : i+j])
			}
			p.Name = strings.TrimSpace(p.Name[:i])
		}
		if i := strings.IndexByte(p.Name, '<'); i >= 0 {
			if j := strings.IndexByte(p.Name[i:], '>'); j > 0 {
				p.Email = strings.TrimSpace(p.Name[i+1 : i+j])
			}
			p.Name = strings.TrimSpace(p.Name[:i])
		}
	case json.Unmarshal(raw, &p) == nil:
	}
	if p == (npmPerson{}) {
		return nil
	}
	return &p
}
