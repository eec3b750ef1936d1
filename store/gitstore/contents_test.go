package gitstore_test

import (
	"errors"
	"testing"

	"repohost/store/gitstore"
)

func TestCleanTreePath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                "",
		"/":               "",
		"a":               "a",
		"/docs/a.md/":     "docs/a.md",
		"git~2":           "git~2",
		"a.git":           "a.git",
		"docs/.gitignore": "docs/.gitignore",
		"sp ace/ü":        "sp ace/ü",
	} {
		got, err := gitstore.CleanTreePath(in)
		if err != nil || got != want {
			t.Errorf("CleanTreePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"a//b", "./a", "a/..", ".git", "x/.GIT/config", "a\\b", "a\x00b", "a\x01b", "\r\nX",
		"a\tb", "a\x7fb", "git~1", "GIT~1/x", ".git ", "x/.git.", ".git::$INDEX_ALLOCATION"} {
		if got, err := gitstore.CleanTreePath(in); !errors.Is(err, gitstore.ErrBadPath) {
			t.Errorf("CleanTreePath(%q) = %q, %v; want ErrBadPath", in, got, err)
		}
	}
}
