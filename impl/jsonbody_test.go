package impl

import "testing"

func TestHasEscapedNUL(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":"x\u0000y"}`:   true,
		`{"a":"\u0000"}`:     true,
		`{"a":"\\u0000"}`:    false, // an escaped backslash, then literal text
		`{"a":"\\\u0000"}`:   true,
		`{"a":"u0000"}`:      false,
		`{"a":"\u00001"}`:    true,
		`{"a":"plain text"}`: false,
	} {
		if got := hasEscapedNUL([]byte(body)); got != want {
			t.Errorf("%s: got %v, want %v", body, got, want)
		}
	}
}
