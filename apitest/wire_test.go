package apitest_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

// Wire differences clients trip on: the settings endpoints tell what this
// server does, and avatar_url has the reference's form and is served.

func TestSettingsTellWhatTheServerDoes(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.MaxContentsBlob = 4096; c.MaxAssetBytes = 3 << 20 })
	var repo models.GeneralRepoSettings
	e.Do("GET", "settings/repository", nil, nil).Expect(t, http.StatusOK).JSON(t, &repo)
	want := models.GeneralRepoSettings{}
	if repo != want {
		t.Errorf("settings/repository %+v, want %+v", repo, want)
	}
	// Release assets are the attachments: any type, one per upload, as
	// large as Config.MaxAssetBytes.
	var att models.GeneralAttachmentSettings
	e.Do("GET", "settings/attachment", nil, nil).Expect(t, http.StatusOK).JSON(t, &att)
	if !att.Enabled || att.AllowedTypes != "*/*" || att.MaxFiles != 1 || att.MaxSize != 3 {
		t.Errorf("settings/attachment %+v", att)
	}
	var api models.GeneralAPISettings
	e.Do("GET", "settings/api", nil, nil).Expect(t, http.StatusOK).JSON(t, &api)
	if api.DefaultMaxBlobSize != 4096 || api.MaxResponseItems != 50 || api.DefaultPagingNum != 30 {
		t.Errorf("settings/api %+v", api)
	}
}

func TestAvatarURL(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	md5hex := func(s string) string {
		sum := md5.Sum([]byte(s))
		return hex.EncodeToString(sum[:])
	}

	var u models.User
	e.Do("GET", "users/alice", nil, nil).Expect(t, http.StatusOK).JSON(t, &u)
	if want := e.URL + "avatars/" + md5hex("alice@example.com"); u.AvatarURL != want {
		t.Fatalf("avatar_url %s, want %s", u.AvatarURL, want)
	}
	// An organization without an address is named by its name.
	org := roCreateOrg(t, e, cred, map[string]any{"username": "Acme"})
	if want := e.URL + "avatars/" + md5hex("acme"); org.AvatarURL != want {
		t.Fatalf("org avatar_url %s, want %s", org.AvatarURL, want)
	}

	path := strings.TrimPrefix(u.AvatarURL, e.URL[:len(e.URL)-1])
	r := e.Do("GET", path, nil, nil).Expect(t, http.StatusOK)
	if r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("Content-Type %s", r.Header.Get("Content-Type"))
	}
	img, err := png.Decode(bytes.NewReader(r.Body))
	if err != nil || img.Bounds().Dx() < 64 {
		t.Fatalf("avatar: %v", err)
	}
	again := e.Do("GET", path, nil, nil).Expect(t, http.StatusOK)
	if !bytes.Equal(again.Body, r.Body) {
		t.Fatal("the avatar changed between two requests")
	}
	e.Do("GET", "/avatars/not-a-hash", nil, nil).Expect(t, http.StatusNotFound)
}

// TestGPGKeyTokenIsPlainText: the token a GPG key signs is the bare 64
// hex characters in text/plain, as the reference sends it, so a client
// signs exactly the token (not a JSON string with its quotes).
func TestGPGKeyTokenIsPlainText(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("tokalice", false)
	r := e.Do("GET", "user/gpg_key_token", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	if len(r.Body) != 64 || strings.Trim(string(r.Body), "0123456789abcdef") != "" {
		t.Errorf("token %q: want 64 lower-case hex characters", r.Body)
	}
	e.Do("GET", "user/gpg_key_token", nil, nil).Expect(t, http.StatusUnauthorized)
}
