package apitest_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
)

// The reference's PackagePayload and Package (modules/structs), field for
// field.
var (
	packagePayloadFields = []string{"action", "organization", "package", "repository", "sender"}
	packageFields        = []string{"created_at", "creator", "html_url", "id", "name", "owner", "repository", "type", "version"}
)

// apiObject reads path as cred and returns the decoded JSON object.
func apiObject(t *testing.T, e *apitest.Env, cred apitest.Cred, path string) map[string]any {
	t.Helper()
	var m map[string]any
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &m)
	return m
}

// checkPackageCall checks one package delivery: headers, signature, the
// reference's shape, and its parts against what the API shows.
func checkPackageCall(t *testing.T, c hookCall, action string, pkg, org, sender map[string]any) {
	t.Helper()
	checkSigned(t, c, "s3cret")
	if c.event() != "package" || c.typ() != "package" {
		t.Errorf("package delivery headers: event %q, type %q", c.event(), c.typ())
	}
	p := c.payload(t)
	if got := keysOf(p); !slices.Equal(got, packagePayloadFields) {
		t.Errorf("package payload fields %v, want %v", got, packagePayloadFields)
	}
	if got := keysOf(p["package"]); !slices.Equal(got, packageFields) {
		t.Errorf("package fields %v, want %v", got, packageFields)
	}
	if p["action"] != action {
		t.Errorf("action %v, want %s", p["action"], action)
	}
	if p["repository"] != nil {
		t.Errorf("repository %v, want null as the reference sends", p["repository"])
	}
	for name, want := range map[string]map[string]any{"package": pkg, "organization": org, "sender": sender} {
		got, _ := p[name].(map[string]any)
		if want == nil {
			if p[name] != nil {
				t.Errorf("%s %v, want null", name, p[name])
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s %s %s\n  differs from the API's\n  %s", action, name, g, w)
		}
	}
}

// TestWebhookPackage: a package version created by an upload and removed
// by a version delete reaches the hooks of its owner (an organization or
// a user), of the repository it is linked to and the system hooks that
// listen for "package"; hooks that do not listen get nothing.
func TestWebhookPackage(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a, adm := apitest.Basic(alice), apitest.Basic(e.Admin)
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "src"}, a).Expect(t, http.StatusCreated)
	if err := e.Deps.Events.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}

	orgRC, userRC, repoRC, sysRC, deafRC := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	mkHook(t, e, a, "orgs/acme/hooks", giteaHook(orgRC.URL, "package"))
	mkHook(t, e, a, "user/hooks", giteaHook(userRC.URL, "package"))
	mkHook(t, e, a, "repos/acme/src/hooks", giteaHook(repoRC.URL, "package"))
	sys := giteaHook(sysRC.URL, "package")
	sys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", sys)
	// Every scope again, listening for everything but packages.
	others := []string{"create", "delete", "push", "issues", "release", "repository"}
	mkHook(t, e, a, "orgs/acme/hooks", giteaHook(deafRC.URL, others...))
	mkHook(t, e, a, "user/hooks", giteaHook(deafRC.URL, others...))
	mkHook(t, e, a, "repos/acme/src/hooks", giteaHook(deafRC.URL, others...))
	deafSys := giteaHook(deafRC.URL, others...)
	deafSys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", deafSys)

	org := apiObject(t, e, a, "orgs/acme")
	sender := apiObject(t, e, nil, "users/alice")

	// An organization's package: a first file creates the version, a
	// second one adds to it without a new event.
	pkUpload(t, e, a, "acme", "tool", "1.0.0", "tool.bin", []byte("tool bytes")).Expect(t, http.StatusCreated)
	pkUpload(t, e, a, "acme", "tool", "1.0.0", "notes.txt", []byte("notes")).Expect(t, http.StatusCreated)
	orgPkg := apiObject(t, e, a, "packages/acme/generic/tool/1.0.0")
	c := orgRC.waitFor(t, 1, 10*time.Second)[0]
	checkPackageCall(t, c, "created", orgPkg, org, sender)
	sys1 := sysRC.waitFor(t, 1, 10*time.Second)[0]
	checkPackageCall(t, sys1, "created", orgPkg, org, sender)
	if sys1.delivery() == c.delivery() {
		t.Errorf("two hooks got one delivery id %s", c.delivery())
	}

	e.Do("DELETE", "packages/acme/generic/tool/1.0.0", nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", "packages/acme/generic/tool", nil, a).Expect(t, http.StatusNotFound)
	// The version and its package are gone; the payload still describes
	// them as they were.
	checkPackageCall(t, orgRC.waitFor(t, 2, 10*time.Second)[1], "deleted", orgPkg, org, sender)
	checkPackageCall(t, sysRC.waitFor(t, 2, 10*time.Second)[1], "deleted", orgPkg, org, sender)

	// A user's package: no organization.
	pkUpload(t, e, a, "alice", "lib", "2.0.0", "lib.tgz", []byte("lib bytes")).Expect(t, http.StatusCreated)
	userPkg := apiObject(t, e, a, "packages/alice/generic/lib/2.0.0")
	checkPackageCall(t, userRC.waitFor(t, 1, 10*time.Second)[0], "created", userPkg, nil, sender)
	e.Do("DELETE", "packages/alice/generic/lib/2.0.0", nil, a).Expect(t, http.StatusNoContent)
	checkPackageCall(t, userRC.waitFor(t, 2, 10*time.Second)[1], "deleted", userPkg, nil, sender)
	sysRC.waitFor(t, 4, 10*time.Second)

	// A package linked to a repository also reaches that repository's
	// hooks; the package names its repository, the payload's stays null.
	pkUpload(t, e, a, "acme", "kit", "0.1.0", "kit.bin", []byte("kit")).Expect(t, http.StatusCreated)
	orgRC.waitFor(t, 3, 10*time.Second)
	e.Do("POST", "packages/acme/generic/kit/-/link/src", nil, a).Expect(t, http.StatusCreated)
	pkUpload(t, e, a, "acme", "kit", "0.2.0", "kit.bin", []byte("kit 2")).Expect(t, http.StatusCreated)
	linked := apiObject(t, e, a, "packages/acme/generic/kit/0.2.0")
	if linked["repository"] == nil {
		t.Fatalf("linked package without its repository: %v", linked)
	}
	checkPackageCall(t, repoRC.waitFor(t, 1, 10*time.Second)[0], "created", linked, org, sender)
	checkPackageCall(t, orgRC.waitFor(t, 4, 10*time.Second)[3], "created", linked, org, sender)

	// Each hook heard each event once; the deaf ones nothing.
	time.Sleep(500 * time.Millisecond)
	for name, want := range map[string]struct {
		rc *receiver
		n  int
	}{"organization": {orgRC, 4}, "user": {userRC, 2}, "repository": {repoRC, 1}, "system": {sysRC, 6}, "without package": {deafRC, 0}} {
		if got := want.rc.all(); len(got) != want.n {
			var names []string
			for _, c := range got {
				names = append(names, c.typ()+"/"+c.payloadAction())
			}
			t.Errorf("%s hook got %d deliveries %v, want %d", name, len(got), names, want.n)
		}
	}
}

// TestWebhookPackageFormats: chat receivers get a message naming the
// package, its version and what happened.
func TestWebhookPackageFormats(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	rcs := map[string]*receiver{}
	for _, typ := range []string{"slack", "discord", "msteams", "matrix", "telegram", "dingtalk", "feishu", "wechatwork", "packagist"} {
		rc := newReceiver(t)
		rcs[typ] = rc
		config := map[string]string{"url": rc.URL + "/" + typ, "content_type": "json"}
		if typ == "slack" {
			config["channel"] = "#dev"
		}
		mkHook(t, e, a, "user/hooks", map[string]any{"type": typ, "active": true, "events": []string{"package"}, "config": config})
	}
	pkUpload(t, e, a, "alice", "gizmo", "3.1.4", "gizmo.bin", []byte("gizmo")).Expect(t, http.StatusCreated)
	for typ, rc := range rcs {
		c := rc.waitFor(t, 1, 10*time.Second)[0]
		body := string(c.Body)
		if c.event() != "package" {
			t.Errorf("%s receiver got event %q", typ, c.event())
		}
		if typ == "packagist" {
			// Packagist is told which repository to update; this
			// package is linked to none.
			if !strings.Contains(body, `"repository":{"url":""}`) {
				t.Errorf("packagist receiver got %s", body)
			}
			continue
		}
		for _, want := range []string{"gizmo", "3.1.4", "created", "alice/-/packages/generic/gizmo/3.1.4"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s receiver's message lacks %q:\n%s", typ, want, body)
			}
		}
	}
}
