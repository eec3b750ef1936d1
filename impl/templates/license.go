package templates

import (
	"strings"
)

// LicenseValues fill a license's placeholders.
type LicenseValues struct {
	// Owner is the name of the repository's owner (its login).
	Owner string
	// Email is the owner's commit address.
	Email string
	// Repo is the repository's name.
	Repo string
	// Year is the current year, four digits.
	Year string
}

// placeholders are the spellings of each value in the license texts, the
// reference's list: every one of them is a placeholder wherever it occurs
// (checked against the texts by the tests), unlike words such as AUTHOR.
type placeholders struct {
	owner, email, repo, year []string
	// line, when set, is the only kind of line filled in.
	line func(string) bool
}

var commonPlaceholders = placeholders{
	owner: []string{
		"<name of author>",
		"<owner>",
		"[NAME]",
		"[name of copyright owner]",
		"[name of copyright holder]",
		"<COPYRIGHT HOLDERS>",
		"<copyright holders>",
		"<AUTHOR>",
		"<author's name or designee>",
		"[one or more legally recognised persons or entities offering the Work under the terms and conditions of this Licence]",
	},
	email: []string{"[EMAIL]"},
	repo: []string{
		"<program>",
		"<one line to give the program's name and a brief idea of what it does.>",
	},
	year: []string{"<year>", "[YEAR]", "{YEAR}", "[yyyy]", "[Year]", "[year]"},
}

// specialPlaceholders are licenses whose placeholders are plain words that
// also occur elsewhere in the text, so only one line is filled.
var specialPlaceholders = map[string]placeholders{
	"0BSD": {
		owner: []string{"AUTHOR"}, email: []string{"EMAIL"}, year: []string{"YEAR"},
		line: func(l string) bool { return strings.Contains(l, "Copyright (C) YEAR by AUTHOR EMAIL") },
	},
}

// FillLicense fills the placeholders of the license text of id (canonical)
// line by line, in the reference's order (owner, email, repository, year).
// Every line of the result ends in a newline and a CR before one is
// dropped, as the reference writes the file.
func FillLicense(id, text string, v LicenseValues) string {
	p, ok := specialPlaceholders[id]
	if !ok {
		p = commonPlaceholders
	}
	var b strings.Builder
	b.Grow(len(text) + 64)
	for _, line := range splitLines(text) {
		if p.line == nil || p.line(line) {
			for _, s := range p.owner {
				line = strings.ReplaceAll(line, s, v.Owner)
			}
			for _, s := range p.email {
				line = strings.ReplaceAll(line, s, v.Email)
			}
			for _, s := range p.repo {
				line = strings.ReplaceAll(line, s, v.Repo)
			}
			for _, s := range p.year {
				line = strings.ReplaceAll(line, s, v.Year)
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// splitLines cuts text into lines without their "\n" (or "\r\n"); a
// final newline does not start another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
