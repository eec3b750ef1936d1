package lfs

import (
	"strings"
	"testing"
)

func TestReadPointer(t *testing.T) {
	oid := strings.Repeat("ab", 32)
	good := "version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize 12345\n"
	p, ok := ReadPointer([]byte(good))
	if !ok || p.Oid != oid || p.Size != 12345 {
		t.Fatalf("ReadPointer(good) = %+v, %v", p, ok)
	}
	for _, bad := range []string{
		"",
		"hello world\n",
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\n",
		"version https://git-lfs.github.com/spec/v1\noid md5:" + oid + "\nsize 1\n",
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid[:10] + "\nsize 1\n",
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize -1\n",
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + strings.ToUpper(oid) + "\nsize 1\n",
		good + strings.Repeat("x", PointerMaxSize),
	} {
		if p, ok := ReadPointer([]byte(bad)); ok {
			t.Errorf("ReadPointer(%q) = %+v, want not a pointer", bad, p)
		}
	}
	if Key(oid) != "ab/ab/"+oid[4:] {
		t.Errorf("Key = %s", Key(oid))
	}
}
