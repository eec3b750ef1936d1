package store

import (
	"regexp"
	"strings"
)

// FilePatterns are a protection rule's protected_file_patterns or
// unprotected_file_patterns, parsed as the reference reads them: globs
// separated by ";" (blanks around each ignored), matched against a file's
// path in the repository (no leading slash) with both lower-cased. In
// them "*" and "?" match neither "/" nor "." (so "*.md" matches
// "README.md" but not "docs/a.md", and "*" alone not "a.txt"), "**"
// matches anything, "[...]" is a class and "{a,b}" an alternative. A
// pattern that does not compile matches nothing.
type FilePatterns []*regexp.Regexp

// ParseFilePatterns parses a rule's pattern list.
func ParseFilePatterns(s string) FilePatterns {
	var out FilePatterns
	for _, p := range strings.Split(s, ";") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if re, err := globRegexpSep(p, "/."); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// Match tells whether path matches any of the patterns.
func (fp FilePatterns) Match(path string) bool {
	path = strings.ToLower(path)
	for _, re := range fp {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}
