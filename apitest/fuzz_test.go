package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
)

// createEndpoints are the POST operations that take a JSON body and create
// something. {u} is the site admin, who sends every request.
var createEndpoints = []struct {
	path  string
	valid []string // well-formed bodies that should succeed at least once
}{
	{"admin/users", []string{
		`{"username":"fuzz-user","email":"fuzz-user@example.com","password":"fuzz-pass-1","must_change_password":false}`,
		`{"username":"fuzz-user2","email":"fuzz-user2@example.com","password":"p","full_name":"Fuzz","visibility":"private","restricted":true,"source_id":0,"login_name":"x","send_notify":false}`,
	}},
	{"orgs", []string{
		`{"username":"fuzz-org","full_name":"Fuzz Org","visibility":"limited","website":"https://example.com","location":"here","description":"d"}`,
	}},
	{"user/repos", []string{
		`{"name":"fuzz-repo","auto_init":true,"private":false}`,
		`{"name":"fuzz-repo2","auto_init":true,"private":true,"default_branch":"trunk","description":"d","readme":"Default","object_format_name":"sha256"}`,
	}},
	{"admin/users/admin/orgs", []string{
		`{"username":"fuzz-admin-org","visibility":"public"}`,
	}},
	{"users/admin/tokens", []string{
		`{"name":"fuzz-token","scopes":["all"]}`,
		`{"name":"fuzz-token2","scopes":["read:repository","write:user"]}`,
	}},
	{"user/emails", []string{
		`{"emails":["fuzz1@example.com","fuzz2@example.com"]}`,
	}},
}

// malformedBodies go to every endpoint: broken JSON, the wrong JSON types,
// huge and strange strings. None may make the server answer 5xx.
func malformedBodies() []string {
	huge := strings.Repeat("a", 200_000)
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	return []string{
		``,
		` `,
		`{`,
		`{"username":`,
		`{"name":"x"`,
		`{"name":"x",}`,
		`}`,
		`null`,
		`[]`,
		`[{}]`,
		`{}`,
		`0`,
		`-1`,
		`1e400`,
		`true`,
		`"a string"`,
		deep,
		`{"a":` + deep + `}`,
		// wrong types
		`{"username":123,"email":true,"password":[],"name":{},"emails":"x@example.com","scopes":"all"}`,
		`{"username":null,"email":null,"name":null,"emails":null,"scopes":null}`,
		`{"username":["a"],"name":["a"],"emails":[1,2,3],"scopes":[1,{}]}`,
		`{"private":"true","auto_init":"yes","must_change_password":1,"restricted":"false"}`,
		`{"source_id":"5","username":"fuzz-n","email":"fuzz-n@example.com"}`,
		`{"source_id":1e300,"username":"fuzz-n2","email":"fuzz-n2@example.com"}`,
		`{"source_id":-9223372036854775809,"username":"fuzz-n3","email":"fuzz-n3@example.com"}`,
		`{"visibility":"secret","username":"fuzz-v"}`,
		`{"object_format_name":"md5","trust_model":"nobody","name":"fuzz-e"}`,
		// huge strings, in every name-like field
		`{"username":"` + huge + `","email":"` + huge + `@example.com","password":"` + huge + `"}`,
		`{"name":"` + huge + `","description":"` + huge + `"}`,
		`{"username":"fuzz-h","full_name":"` + huge + `","website":"` + huge + `"}`,
		`{"name":"fuzz-h","scopes":["` + huge + `"]}`,
		`{"emails":["` + huge + `@example.com"]}`,
		`{"name":"fuzz-branch","default_branch":"` + strings.Repeat("b", 100) + `"}`,
		// unicode
		`{"username":"ünïcødé","email":"ünïcødé@example.com","password":"p","name":"ünïcødé","emails":["ünï@exämple.com"]}`,
		`{"username":"fuzz-u","email":"fuzz-u@example.com","password":"p","full_name":"😀 ‮rtl‬ 中文"}`,
		`{"name":"fuzz-u","description":"😀 中文 ‮","scopes":["all"]}`,
		`{"username":"\ud800","name":"\udfff","emails":["\ud800@example.com"]}`,
		"{\"username\":\"\xff\xfe\",\"name\":\"\xc3\x28\"}",
		// NUL, escaped and raw
		`{"username":"a\u0000b","email":"a\u0000b@example.com","password":"p\u0000","name":"a\u0000b"}`,
		`{"username":"fuzz-nul","email":"fuzz-nul@example.com","password":"p","full_name":"a\u0000b"}`,
		`{"name":"fuzz-nul","description":"a\u0000b","default_branch":"a\u0000b","auto_init":true}`,
		`{"username":"fuzz-nul-org","full_name":"a\u0000b","description":"\u0000","location":"\u0000"}`,
		`{"name":"fuzz\u0000tok","scopes":["all\u0000"]}`,
		`{"emails":["a\u0000@example.com"]}`,
		"{\"username\":\"a\x00b\",\"name\":\"a\x00b\"}",
		"\x00",
		// names that must not reach the file system
		`{"name":"..","auto_init":true}`,
		`{"name":".git","auto_init":true}`,
		`{"name":"fuzz-slash","default_branch":"../../x","auto_init":true}`,
		`{"name":"fuzz-lock","default_branch":"main.lock","auto_init":true}`,
		`{"name":"fuzz-space","default_branch":"a b","auto_init":true}`,
		`{"username":"..","email":"dots@example.com","password":"p"}`,
		`{"username":"admin","email":"admin@example.com","password":"p"}`,
		`{"emails":[]}`,
		`{"emails":["not-an-address","",""]}`,
		`{"name":"","scopes":[]}`,
		`{"name":"fuzz-bad-scope","scopes":["root"]}`,
		// duplicate keys: the last one wins in Go; must not crash either way
		`{"name":"fuzz-dup","name":"fuzz-dup2"}`,
	}
}

// FuzzCreateBodies sends arbitrary bodies to the create endpoints as the site
// admin. Any 5xx fails, and so does any answer the contract does not declare.
// `go test ./apitest/` runs the seeds; `go test -fuzz=FuzzCreateBodies
// ./apitest/` explores further.
func FuzzCreateBodies(f *testing.F) {
	for i, ep := range createEndpoints {
		for _, b := range ep.valid {
			f.Add(byte(i), []byte(b))
		}
		for _, b := range malformedBodies() {
			f.Add(byte(i), []byte(b))
		}
	}
	// One server for every input: the inputs only add rows, and a fresh
	// server per input would make fuzzing a hundred times slower.
	e := apitest.New(f)
	admin := apitest.Basic(e.Admin)
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		ep := createEndpoints[int(which)%len(createEndpoints)]
		r := e.DoFor(t, http.MethodPost, ep.path, body, admin)
		if r.Status >= 500 {
			t.Fatalf("POST /api/v1/%s answered %d for body %.300q: %s", ep.path, r.Status, body, r.Body)
		}
	})
}
