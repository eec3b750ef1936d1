package app

import (
	"strings"
	"testing"
)

func TestParseStorage(t *testing.T) {
	a, err := ParseStorage("http://k:s@127.0.0.1:9000/bucket/base?location=eu&serve_direct=true", "packages", true, StorageSettings{})
	if err != nil {
		t.Fatal(err)
	}
	c := a.S3
	if c == nil || c.Endpoint != "127.0.0.1:9000" || c.Bucket != "bucket" || c.BasePath != "base/packages" ||
		c.AccessKey != "k" || c.SecretKey != "s" || c.Location != "eu" || c.UseSSL || !a.ServeDirect {
		t.Fatalf("shared address: %+v %+v", a, c)
	}
	// A kind's own address is used as given; keys may come from elsewhere.
	a, err = ParseStorage("https://s3.example.com/b", "lfs", false, StorageSettings{AccessKey: "ak", SecretKey: "sk"})
	if err != nil || a.S3.BasePath != "" || !a.S3.UseSSL || a.S3.AccessKey != "ak" || a.S3.SecretKey != "sk" || a.ServeDirect {
		t.Fatalf("own address: %+v, %v", a.S3, err)
	}
	if a, err := ParseStorage("local:/srv/files", "attachments", true, StorageSettings{}); err != nil || a.Dir != "/srv/files/attachments" {
		t.Fatalf("local dir: %+v, %v", a, err)
	}
	if a, err := ParseStorage("local", "attachments", true, StorageSettings{}); err != nil || a.S3 != nil || a.Dir != "" {
		t.Fatalf("local: %+v, %v", a, err)
	}
	// A bad address is refused without repeating its secret.
	for _, bad := range []string{"ftp://k:topsecret@h/b", "http://k:topsecret@h", "http://k:topsecret@h/b?serve_direct=maybe"} {
		_, err := ParseStorage(bad, "packages", true, StorageSettings{})
		if err == nil || strings.Contains(err.Error(), "topsecret") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
