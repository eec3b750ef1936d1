// Package templates holds the collections a new repository can start from,
// as the reference ships them: .gitignore templates, license texts, README
// templates and issue-label sets. The data is embedded from data/, which is
// written only by the generator below; data/SOURCE.md names the exact
// package versions it came from.
//
// Names are looked up case-insensitively (an exact match wins), and every
// result carries the canonical name.
package templates

//go:generate go run ./internal/fetchdata -gitea v1.28.0-dev -spdx 6.12.0 -out data

import (
	"embed"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed all:data
var data embed.FS

// PreferredLicenses lead the license list, as the reference's default
// [repository] PREFERRED_LICENSES.
var PreferredLicenses = []string{"Apache-2.0", "MIT"}

// collection is one directory of data/: its file names, sorted, and an
// index by lower-cased name.
type collection struct {
	dir     string
	names   []string
	byLower map[string][]string
}

func load(dir string) *collection {
	entries, err := fs.ReadDir(data, path.Join("data", dir))
	if err != nil {
		panic("templates: embedded data/" + dir + " missing: " + err.Error())
	}
	c := &collection{dir: dir, byLower: map[string][]string{}}
	for _, e := range entries {
		if e.Type().IsRegular() {
			c.names = append(c.names, e.Name())
		}
	}
	sort.Strings(c.names)
	for _, n := range c.names {
		l := strings.ToLower(n)
		c.byLower[l] = append(c.byLower[l], n)
	}
	return c
}

// find returns the canonical name of name: the exact file, or the only
// one equal to it without regard to case.
func (c *collection) find(name string) (string, bool) {
	cands := c.byLower[strings.ToLower(name)]
	for _, n := range cands {
		if n == name {
			return n, true
		}
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	return "", false
}

func (c *collection) read(name string) string {
	b, err := data.ReadFile(path.Join("data", c.dir, name))
	if err != nil {
		panic("templates: embedded file missing: " + err.Error())
	}
	return string(b)
}

// The collections are read once from the embedded (immutable) data.
var (
	gitignores = sync.OnceValue(func() *collection { return load("gitignore") })
	licenses   = sync.OnceValue(func() *collection { return load("license") })
	readmes    = sync.OnceValue(func() *collection { return load("readme") })
	labelFiles = sync.OnceValue(func() *collection { return load("label") })
)

// Gitignores lists the .gitignore templates in name order.
func Gitignores() []string { return append([]string(nil), gitignores().names...) }

// Gitignore returns the canonical name and text of a .gitignore template.
func Gitignore(name string) (canonical, text string, ok bool) {
	c := gitignores()
	if canonical, ok = c.find(name); !ok {
		return "", "", false
	}
	return canonical, c.read(canonical), true
}

// Licenses lists the license identifiers: PreferredLicenses first, then
// the others in name order.
func Licenses() []string {
	c := licenses()
	out := make([]string, 0, len(c.names))
	preferred := map[string]bool{}
	for _, p := range PreferredLicenses {
		if n, ok := c.find(p); ok && !preferred[n] {
			preferred[n] = true
			out = append(out, n)
		}
	}
	for _, n := range c.names {
		if !preferred[n] {
			out = append(out, n)
		}
	}
	return out
}

// License returns the canonical identifier and the text of a license, with
// its placeholders unfilled.
func License(name string) (canonical, text string, ok bool) {
	c := licenses()
	if canonical, ok = c.find(name); !ok {
		return "", "", false
	}
	return canonical, c.read(canonical), true
}

// Readmes lists the README templates.
func Readmes() []string { return append([]string(nil), readmes().names...) }

// Readme returns the canonical name and text of a README template, with
// its variables unexpanded.
func Readme(name string) (canonical, text string, ok bool) {
	c := readmes()
	if canonical, ok = c.find(name); !ok {
		return "", "", false
	}
	return canonical, c.read(canonical), true
}

var readmeVar = regexp.MustCompile(`\{[^}]*\}`)

// ExpandReadme fills a README template's variables ({Name},
// {Description}, {OwnerName}, {CloneURL.HTTPS}, {CloneURL.SSH}) in one
// pass, as the reference does: a value is never expanded again, and an
// unknown variable stays as it is.
func ExpandReadme(text string, vars map[string]string) string {
	return readmeVar.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// NormalizeEOL turns CRLF and CR line ends into LF, as the reference does
// to a description before it goes into a README.
func NormalizeEOL(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
