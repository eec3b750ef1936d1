package sqlstore

import "testing"

func TestEscapeLike(t *testing.T) {
	for in, want := range map[string]string{
		"plain":   "plain",
		"%":       `\%`,
		"_":       `\_`,
		`\`:       `\\`,
		`a%b_c\d`: `a\%b\_c\\d`,
		`\%`:      `\\\%`,
	} {
		if got := escapeLike(in); got != want {
			t.Errorf("escapeLike(%q) = %q, want %q", in, got, want)
		}
	}
	if got := likePattern("A_b"); got != `%a\_b%` {
		t.Errorf("likePattern = %q", got)
	}
}
