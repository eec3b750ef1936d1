package apitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-openapi/spec"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/store"
)

// FuzzOperations sends mutated requests to every operation of swagger.yml,
// built from the spec itself: path parameters, query parameters, JSON
// bodies (whole and field by field) and multipart forms, as the site admin
// and as an anonymous caller, against a server with a user, an
// organization, a repository (auto-initialised, a template), an issue and
// the other things the paths name (comment, label, milestone, release,
// project, protection rule, tracked time). No answer may be a 5xx, and
// every answer must be one swagger.yml declares for the operation.
//
// An input is an operationId and the mutation bytes decoded by
// decodeMutations: one byte for the caller, then records of a target (a
// parameter, the body, a body field), a mutation kind and a payload that
// some kinds use. `go test` runs a fixed seed corpus (fuzzSeedsPerOp cases
// per operation: the unmutated request as both callers, then every target
// with a spread of kinds); `go test -fuzz=FuzzOperations ./apitest/`
// explores further (starting from three seeds per operation, or the full
// seeds of one operation with REPOHOST_FUZZ_OP=<operationId>, which limits
// both runs to that operation).
func FuzzOperations(f *testing.F) {
	ops := fuzzOperations(f)
	only := os.Getenv("REPOHOST_FUZZ_OP")
	perOp := fuzzSeedsPerOp
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" && only == "" {
		// Under -fuzz every seed is first run with coverage, which takes
		// minutes for the whole corpus; a few per operation let the
		// fuzzer start mutating within a minute or two.
		perOp = 3
	}
	for _, op := range ops {
		if only != "" && op.id != only {
			continue
		}
		for _, data := range op.seeds(perOp) {
			f.Add(op.id, data)
		}
	}
	// One server for every input, as in FuzzCreateBodies; the world puts
	// back what an input deleted or changed before the next one runs. The
	// sign-in throttle must not lock the admin out while the fuzzer sends
	// thousands of requests.
	e := apitest.NewWithConfig(f, func(c *app.Config) { c.LoginFailures = 1 << 30 })
	w := newFuzzWorld(e)
	f.Fuzz(func(t *testing.T, id string, data []byte) {
		op := pickOperation(ops, id)
		if only != "" && op.id != only {
			t.Skip("REPOHOST_FUZZ_OP selects another operation")
		}
		w.send(t, op, data)
	})
}

// fuzzVerbose (REPOHOST_FUZZ_VERBOSE=1, with -v) logs every request and
// its answer.
var fuzzVerbose = os.Getenv("REPOHOST_FUZZ_VERBOSE") != ""

// fuzzSeedsPerOp caps the seed corpus (operations with few parameters
// have fewer): about 6,000 requests in all, which run in under a minute
// per database on a busy 2-core machine.
const fuzzSeedsPerOp = 48

// fuzzOp is one operation of the spec with its parameters sorted out.
type fuzzOp struct {
	id, method, path string
	pathParams       []spec.Parameter
	queryParams      []spec.Parameter
	body             *spec.Schema // nil without a JSON body
	fields           []string     // the body's top-level properties, sorted
	form             []spec.Parameter
	targets          []fuzzTarget
}

// fuzzTarget is what a mutation changes.
type fuzzTarget struct {
	kind  targetKind
	index int    // into pathParams or queryParams
	field string // body field
}

type targetKind int

const (
	targetPath targetKind = iota
	targetQuery
	targetExtraQuery // a parameter the operation does not declare
	targetBody       // the whole body
	targetField      // one field of the body
	targetForm       // the multipart form
)

func fuzzOperations(tb testing.TB) []*fuzzOp {
	c, err := apitest.SharedContract()
	if err != nil {
		tb.Fatal(err)
	}
	var ops []*fuzzOp
	for key, o := range c.Operations() {
		method, path, _ := strings.Cut(key, " ")
		op := &fuzzOp{id: o.ID, method: method, path: path}
		for _, p := range o.Parameters {
			switch p.In {
			case "path":
				op.pathParams = append(op.pathParams, p)
			case "query":
				op.queryParams = append(op.queryParams, p)
			case "body":
				op.body = p.Schema
			case "formData":
				op.form = append(op.form, p)
			}
		}
		// Path parameters in the order they appear in the path.
		sort.SliceStable(op.pathParams, func(i, j int) bool {
			return strings.Index(path, "{"+op.pathParams[i].Name+"}") < strings.Index(path, "{"+op.pathParams[j].Name+"}")
		})
		for i := range op.pathParams {
			op.targets = append(op.targets, fuzzTarget{kind: targetPath, index: i})
		}
		for i := range op.queryParams {
			op.targets = append(op.targets, fuzzTarget{kind: targetQuery, index: i})
		}
		op.targets = append(op.targets, fuzzTarget{kind: targetExtraQuery})
		if op.body != nil {
			op.targets = append(op.targets, fuzzTarget{kind: targetBody})
			for name := range objectSchema(op.body).Properties {
				op.fields = append(op.fields, name)
			}
			sort.Strings(op.fields)
			for _, name := range op.fields {
				op.targets = append(op.targets, fuzzTarget{kind: targetField, field: name})
			}
		}
		if len(op.form) > 0 {
			op.targets = append(op.targets, fuzzTarget{kind: targetForm})
		}
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops
}

// pickOperation maps any string to an operation: an operationId to itself,
// anything else (the fuzzer mutates this argument too) to one by hash.
func pickOperation(ops []*fuzzOp, id string) *fuzzOp {
	for _, op := range ops {
		if op.id == id {
			return op
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return ops[int(h.Sum32()%uint32(len(ops)))]
}

// objectSchema looks through allOf wrappers (nullable references).
func objectSchema(s *spec.Schema) *spec.Schema {
	for s != nil && len(s.Properties) == 0 && len(s.AllOf) > 0 {
		s = &s.AllOf[0]
	}
	return s
}

// seedPayload is the payload of the seeds' payload-driven kinds.
var seedPayload = []byte("fuzz\x00\xff../%s{\"a\":[1]}")

// seeds is the operation's share of the seed corpus: the request as the
// spec describes it, as the admin and anonymously, then mutations round
// by round, each target with another kind every round, so that a capped
// corpus still reaches every target; every fourth is sent anonymously.
func (op *fuzzOp) seeds(limit int) [][]byte {
	out := [][]byte{{credAdmin}, {credAnonymous}}
	for round := 0; len(out) < limit; round++ {
		added := false
		for ti, tg := range op.targets {
			n := kindCount(tg)
			if round >= n {
				continue
			}
			kind := (round + ti*7) % n
			cred := byte(credAdmin)
			if len(out)%4 == 3 {
				cred = credAnonymous
			}
			rec := []byte{cred, byte(ti), byte(kind), byte(len(seedPayload))}
			out = append(out, append(rec, seedPayload...))
			added = true
			if len(out) == limit {
				break
			}
		}
		if !added {
			break
		}
	}
	return out
}

const (
	credAdmin     = 0
	credAnonymous = 1
)

// mutation is one decoded record.
type mutation struct {
	target  fuzzTarget
	kind    int
	payload []byte
}

// decodeMutations reads data: the caller, then records of target, kind,
// payload length and payload. Short or missing parts read as zero.
func (op *fuzzOp) decodeMutations(data []byte) (anonymous bool, ms []mutation) {
	if len(data) == 0 {
		return false, nil
	}
	anonymous = data[0]&1 == credAnonymous
	rest := data[1:]
	for len(rest) >= 2 && len(ms) < 8 {
		tg := op.targets[int(rest[0])%len(op.targets)]
		m := mutation{target: tg, kind: int(rest[1]) % kindCount(tg)}
		rest = rest[2:]
		if len(rest) > 0 {
			n := min(int(rest[0]), len(rest)-1)
			m.payload = rest[1 : 1+n]
			rest = rest[1+n:]
		}
		ms = append(ms, m)
	}
	return anonymous, ms
}

// pathValue is a mutated path parameter; raw ones go into the path as they
// are instead of escaped.
type pathValue struct {
	v   string
	raw bool
}

var pathKinds = []func(p []byte) pathValue{
	func([]byte) pathValue { return pathValue{v: ""} },
	func([]byte) pathValue { return pathValue{v: strings.Repeat("a", 300)} },
	func([]byte) pathValue { return pathValue{v: strings.Repeat("x", 10_000)} },
	func([]byte) pathValue { return pathValue{v: "ünïcødé-😀-中文"} },
	func([]byte) pathValue { return pathValue{v: ".."} },
	func([]byte) pathValue { return pathValue{v: "%00"} },
	func([]byte) pathValue { return pathValue{v: "a\x00b"} },
	func([]byte) pathValue { return pathValue{v: "a\x01\x1f\x7fb"} },
	func([]byte) pathValue { return pathValue{v: "a\r\nX-Injected: 1"} },
	func([]byte) pathValue { return pathValue{v: "a/b"} },
	func([]byte) pathValue { return pathValue{v: "a/b", raw: true} },
	func([]byte) pathValue { return pathValue{v: "../../../etc/passwd"} },
	func([]byte) pathValue { return pathValue{v: "-1"} },
	func([]byte) pathValue { return pathValue{v: "0"} },
	func([]byte) pathValue { return pathValue{v: "99999999999999999999999"} },
	func([]byte) pathValue { return pathValue{v: "9223372036854775807"} },
	func([]byte) pathValue { return pathValue{v: "1.5"} },
	func([]byte) pathValue { return pathValue{v: "\u202ertl\u200d"} },
	func([]byte) pathValue { return pathValue{v: " x "} },
	func(p []byte) pathValue { return pathValue{v: string(p)} },
	func([]byte) pathValue { return pathValue{v: "."} },
	func([]byte) pathValue { return pathValue{v: "%2e%2e", raw: true} },
	func([]byte) pathValue { return pathValue{v: ".git"} },
	func([]byte) pathValue { return pathValue{v: "a.lock"} },
	func([]byte) pathValue { return pathValue{v: "\xff\xfe"} },
	func([]byte) pathValue { return pathValue{v: "*"} },
}

// queryKinds return the values of a mutated query parameter (several for a
// repeated one).
var queryKinds = []func(p spec.Parameter, payload []byte) []string{
	func(spec.Parameter, []byte) []string { return []string{""} },
	func(spec.Parameter, []byte) []string { return []string{"abc"} },
	func(spec.Parameter, []byte) []string { return []string{"-1"} },
	func(spec.Parameter, []byte) []string { return []string{"0"} },
	func(spec.Parameter, []byte) []string { return []string{"99999999999999999999999"} },
	func(spec.Parameter, []byte) []string { return []string{"-9223372036854775808"} },
	func(spec.Parameter, []byte) []string { return []string{"9223372036854775807"} },
	func(spec.Parameter, []byte) []string { return []string{strings.Repeat("q", 10_000)} },
	func(spec.Parameter, []byte) []string { return []string{"ünïcødé😀"} },
	func(spec.Parameter, []byte) []string { return []string{"a\x00b"} },
	func(spec.Parameter, []byte) []string { return []string{"1e309"} },
	func(spec.Parameter, []byte) []string { return []string{"maybe"} },
	func(spec.Parameter, []byte) []string { return []string{"2020-13-45T99:99:99Z"} },
	func(spec.Parameter, []byte) []string { return []string{"1", "abc"} },
	func(spec.Parameter, []byte) []string { return []string{"a,,b,%,_,*,\\"} },
	func(_ spec.Parameter, p []byte) []string { return []string{string(p)} },
	func(spec.Parameter, []byte) []string { return []string{"\r\n\t"} },
	func(spec.Parameter, []byte) []string { return []string{strings.Repeat("é", 60_000)} },
	func(spec.Parameter, []byte) []string { return []string{"NaN"} },
	func(spec.Parameter, []byte) []string { return []string{" 1 "} },
	func(p spec.Parameter, _ []byte) []string { return []string{plausibleQuery(p)} },
	func(spec.Parameter, []byte) []string { return []string{strings.Repeat("1,", 5_000) + "1"} },
	func(spec.Parameter, []byte) []string { return []string{"\xff\xfe"} },
}

// plausibleQuery is a well-formed value for p.
func plausibleQuery(p spec.Parameter) string {
	if len(p.Enum) > 0 {
		return fmt.Sprint(p.Enum[len(p.Enum)-1])
	}
	switch p.Type {
	case "integer", "number":
		return "2"
	case "boolean":
		return "true"
	case "array":
		return "1,2"
	}
	if p.Format == "date-time" {
		return "2030-01-02T03:04:05Z"
	}
	return "fuzz"
}

var extraQueryKinds = []func(p []byte) string{
	func([]byte) string { return "zzz=1" },
	func([]byte) string { return "page=1&page=2&limit=-5" },
	func(p []byte) string { return url.QueryEscape(string(p)) + "=" + url.QueryEscape(string(p)) },
	func([]byte) string { return "%zz=%" },
	func([]byte) string { return strings.Repeat("&", 500) },
	func([]byte) string { return "limit=1e3&page=0x10" },
}

// bodyKinds replace the whole body; the malformed bodies of
// FuzzCreateBodies come after these.
var bodyKinds = []func(p []byte) []byte{
	func(p []byte) []byte { return p },
	func([]byte) []byte { return []byte(`{"zzz_extra":{"a":[1,{"b":null}]}}`) },
}

// fieldKinds give the JSON (or nil: remove the field) of one body field
// from its schema.
var fieldKinds = []func(s *spec.Schema, name string, p []byte) json.RawMessage{
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`null`) },
	wrongType,
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`1e309`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`9223372036854775808`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`-1`) },
	func(*spec.Schema, string, []byte) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", 3000) + strings.Repeat("]", 3000))
	},
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`"a\u0000b"`) },
	func(*spec.Schema, string, []byte) json.RawMessage {
		return json.RawMessage(`"` + strings.Repeat("o", 100_000) + `"`)
	},
	func(*spec.Schema, string, []byte) json.RawMessage { return jsonString("ünïcødé😀\u202e中文") },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`""`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`[]`) },
	func(*spec.Schema, string, []byte) json.RawMessage {
		return json.RawMessage(`[` + strings.Repeat(`"x",`, 9_999) + `"x"]`)
	},
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`{}`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`true`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`0`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`"\ud800"`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`"../../x"`) },
	func(_ *spec.Schema, _ string, p []byte) json.RawMessage {
		if json.Valid(p) {
			return json.RawMessage(p)
		}
		return jsonString(string(p))
	},
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`-9223372036854775809`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`1.5`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return nil },
	func(s *spec.Schema, name string, _ []byte) json.RawMessage { return mustJSON(plausible(s, name, 0)) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`"  \n\t "`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`[null,1,"a",{}]`) },
	func(*spec.Schema, string, []byte) json.RawMessage { return json.RawMessage(`"2020-02-30T25:61:61Z"`) },
}

// formKinds build the multipart body of an upload and its content type.
var formKinds = []func(field string, p []byte) ([]byte, string){
	func(field string, _ []byte) ([]byte, string) { return multipartBody(field, "a.txt", []byte("hello\n")) },
	func(field string, _ []byte) ([]byte, string) { return multipartBody(field, "../../evil", []byte("x")) },
	func(field string, _ []byte) ([]byte, string) { return multipartBody(field, "", []byte("x")) },
	func(field string, _ []byte) ([]byte, string) { return multipartBody(field, "a\x00b.txt", []byte("x")) },
	func(string, []byte) ([]byte, string) { return multipartBody("other", "a.txt", []byte("x")) },
	func(string, []byte) ([]byte, string) { return []byte(`{}`), "application/json" },
	func(string, []byte) ([]byte, string) {
		return []byte("--x\r\nContent-Disposition: form-data; name=\"attachment\"\r\n"), "multipart/form-data; boundary=x"
	},
	func(field string, p []byte) ([]byte, string) { return multipartBody(field, "ünï😀.bin", p) },
	func(field string, _ []byte) ([]byte, string) {
		return multipartBody(field, strings.Repeat("n", 5000)+".txt", []byte("x"))
	},
	func(string, []byte) ([]byte, string) { return nil, "multipart/form-data" },
}

func multipartBody(field, filename string, content []byte) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename))
	h.Set("Content-Type", "application/octet-stream")
	part, _ := mw.CreatePart(h)
	_, _ = part.Write(content)
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// kindCount is the number of mutation kinds of a target.
func kindCount(tg fuzzTarget) int {
	switch tg.kind {
	case targetPath:
		return len(pathKinds)
	case targetQuery:
		return len(queryKinds)
	case targetExtraQuery:
		return len(extraQueryKinds)
	case targetBody:
		return len(bodyKinds) + len(malformedBodies())
	case targetField:
		return len(fieldKinds)
	case targetForm:
		return len(formKinds)
	}
	return 1
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// wrongType is a JSON value of another type than the schema's.
func wrongType(s *spec.Schema, _ string, _ []byte) json.RawMessage {
	s = objectSchema(s)
	switch {
	case s == nil:
		return json.RawMessage(`{"a":1}`)
	case s.Type.Contains("string"):
		return json.RawMessage(`123`)
	case s.Type.Contains("integer"), s.Type.Contains("number"):
		return json.RawMessage(`"12"`)
	case s.Type.Contains("boolean"):
		return json.RawMessage(`"true"`)
	case s.Type.Contains("array"):
		return json.RawMessage(`{"0":"a"}`)
	}
	return json.RawMessage(`[1,2]`)
}

// plausible is a well-formed value for schema s of a property called name:
// what a careful client would send, so that a mutation of one field meets
// handlers beyond the validation of the others.
func plausible(s *spec.Schema, name string, depth int) any {
	s = objectSchema(s)
	if s == nil || depth > 4 {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch {
	case s.Type.Contains("boolean"):
		return false
	case s.Type.Contains("integer"), s.Type.Contains("number"):
		if name == "time" {
			return 60
		}
		return 1
	case s.Type.Contains("array"):
		var item *spec.Schema
		if s.Items != nil {
			item = s.Items.Schema
		}
		v := plausible(item, strings.TrimSuffix(name, "s"), depth+1)
		if v == nil {
			return []any{}
		}
		return []any{v}
	case s.Type.Contains("object") || len(s.Properties) > 0:
		out := map[string]any{}
		for _, req := range s.Required {
			p := s.Properties[req]
			out[req] = plausible(&p, req, depth+1)
		}
		return out
	}
	if s.Format == "date-time" || strings.HasSuffix(name, "_date") || name == "due_on" || name == "deadline" {
		return "2030-01-02T03:04:05Z"
	}
	switch name {
	case "email", "emails":
		return "fuzz@example.com"
	case "branch", "ref", "target", "target_commitish", "default_branch", "old_branch_name", "old_ref_name",
		"new_branch_name", "rule_name", "branch_name":
		return "main"
	case "content":
		return "aGVsbG8K"
	case "color":
		return "#ff0000"
	case "sha", "new_commit_id", "old_commit_id":
		return strings.Repeat("0", 40)
	case "tag_name", "tag":
		return "v1"
	case "password":
		return "fuzz-pass-1"
	case "owner":
		return "fuzzer"
	case "scope", "scopes":
		return "all"
	case "topic", "topics":
		return "fuzz"
	case "visibility":
		return "public"
	}
	return "fuzz-" + strings.ReplaceAll(name, "_", "-")
}

// baseBodyHints complete the unmutated body of operations whose required
// fields alone are refused (or do nothing), so that their mutations start
// from a request that works.
var baseBodyHints = map[string]map[string]any{
	"adminCreateUser":                    {"password": "fuzz-pass-1", "must_change_password": false},
	"adminEditUser":                      {"source_id": 0},
	"generateRepo":                       {"git_content": true, "topics": true, "labels": true},
	"issueCreateMilestone":               {"title": "fuzz-milestone"},
	"issueDeleteCommentReaction":         {"content": "+1"},
	"issueDeleteIssueReaction":           {"content": "+1"},
	"issuePostCommentReaction":           {"content": "+1"},
	"issuePostIssueReaction":             {"content": "+1"},
	"repoCreateBranch":                   {"new_branch_name": "fuzz-branch"},
	"repoCreateBranchProtection":         {"rule_name": "fuzz-rule"},
	"repoUpdateBranchProtectionPriories": {"ids": []int{1}},
	"userAddEmail":                       {"emails": []string{"fuzz-extra@example.com"}},
	"userCreateToken":                    {"scopes": []string{"read:repository"}},
	"repoUpdateTopics":                   {"topics": []string{"fuzz", "fuzz-two"}},
	"issueAddLabel":                      {"labels": []any{"fuzz-label-1"}},
}

// fuzzWorld is the server's state the operations act on. Every name in a
// path resolves to a thing that exists when the input is sent: what an
// earlier input deleted or broke (renamed, archived, a unit switched off)
// is made again first, so a delete early in the corpus does not turn the
// rest into 404s. Inputs run one at a time (each -fuzz worker is a
// process with its own server), so the world needs no lock.
type fuzzWorld struct {
	e     *apitest.Env
	admin apitest.Cred
	// adminRow is the admin as created, put back when an input changed it.
	adminRow store.User
	ids      map[string]int64 // by resource kind, for the current repository
	repoID   int64
	client   *http.Client
	n        int // makes the names of re-created things unique
	// creating is set while an operation that creates files is built.
	creating bool
}

const (
	fuzzUser = "fuzzer"
	fuzzOrg  = "fuzzorg"
	fuzzRepo = "fuzzrepo"
	fuzzRule = "protected-*"
)

func newFuzzWorld(e *apitest.Env) *fuzzWorld {
	w := &fuzzWorld{e: e, admin: apitest.Basic(e.Admin), adminRow: *e.Admin.User, ids: map[string]int64{},
		client: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       2 * time.Minute,
		}}
	return w
}

// call is a request of the world's own, as the admin; its answers are
// checked against the contract like any other.
func (w *fuzzWorld) call(t *testing.T, method, path string, body any, want int) *apitest.Response {
	t.Helper()
	r := w.e.DoFor(t, method, path, body, w.admin)
	if r.Status != want {
		t.Logf("world: %s %s answered %d, want %d: %.300s", method, path, r.Status, want, r.Body)
	}
	return r
}

// restoreAdmin puts the admin's row back when an input changed it (its
// password, name, flags), so later inputs still act as the admin.
func (w *fuzzWorld) restoreAdmin(t *testing.T) {
	ctx := context.Background()
	u, err := w.e.DB.Users().FindByID(ctx, w.adminRow.ID)
	if err == nil && u.Name == w.adminRow.Name && u.IsAdmin && u.IsActive && !u.ProhibitLogin &&
		!u.MustChangePassword && u.PasswordHash == w.adminRow.PasswordHash {
		return
	}
	err = w.e.DB.WithTx(ctx, func(ctx context.Context) error {
		cur, err := w.e.DB.Users().FindByIDForUpdate(ctx, w.adminRow.ID)
		if err != nil {
			return err
		}
		row := w.adminRow
		row.CreatedAt, row.UpdatedAt = cur.CreatedAt, cur.UpdatedAt
		return w.e.DB.Users().Update(ctx, &row)
	})
	if err != nil {
		t.Fatalf("world: put the admin back: %v", err)
	}
}

func (w *fuzzWorld) user(t *testing.T) *store.User {
	ctx := context.Background()
	u, err := w.e.DB.Users().FindByName(ctx, fuzzUser)
	if err == nil && !u.IsOrganization() {
		return u
	}
	w.n++
	w.call(t, "POST", "admin/users", map[string]any{"username": fuzzUser, "password": "fuzz-pass-1",
		"email": fmt.Sprintf("fuzzer-%d@example.com", w.n), "must_change_password": false}, http.StatusCreated)
	u, err = w.e.DB.Users().FindByName(ctx, fuzzUser)
	if err != nil {
		t.Fatalf("world: no user %s: %v", fuzzUser, err)
	}
	return u
}

func (w *fuzzWorld) org(t *testing.T) {
	u, err := w.e.DB.Users().FindByName(context.Background(), fuzzOrg)
	if err == nil && u.IsOrganization() {
		return
	}
	w.user(t)
	w.call(t, "POST", "admin/users/"+fuzzUser+"/orgs", map[string]any{"username": fuzzOrg, "visibility": "public"}, http.StatusCreated)
}

// repo makes sure fuzzer/fuzzrepo exists as created: public, a template,
// not archived, every unit on, "main" its default branch and on disk.
// Anything else and it is deleted and made again.
func (w *fuzzWorld) repo(t *testing.T) *store.Repository {
	u := w.user(t)
	ctx := context.Background()
	r, err := w.e.DB.Repos().FindByName(ctx, u.ID, fuzzRepo)
	if err == nil && w.intact(r) {
		if r.ID != w.repoID {
			w.repoID, w.ids = r.ID, map[string]int64{}
		}
		return r
	}
	if err == nil {
		w.call(t, "DELETE", "repos/"+fuzzUser+"/"+fuzzRepo, nil, http.StatusNoContent)
	}
	w.call(t, "POST", "admin/users/"+fuzzUser+"/repos", map[string]any{"name": fuzzRepo, "auto_init": true,
		"template": true, "default_branch": "main"}, http.StatusCreated)
	r, err = w.e.DB.Repos().FindByName(ctx, u.ID, fuzzRepo)
	if err != nil {
		t.Fatalf("world: no repository %s/%s: %v", fuzzUser, fuzzRepo, err)
	}
	w.repoID, w.ids = r.ID, map[string]int64{}
	return r
}

func (w *fuzzWorld) intact(r *store.Repository) bool {
	if r.IsPrivate || !r.IsTemplate || r.IsArchived || r.IsEmpty || r.DefaultBranch != "main" || !r.HasIssues ||
		!r.HasReleases || !r.HasProjects || !r.HasCode || !r.EnableTimeTracker {
		return false
	}
	g, err := w.e.Deps.Git.OpenGit(r.Owner.Name, r.Name)
	if err != nil {
		return false
	}
	_, err = g.GetBranch("main")
	return err == nil
}

// thing makes sure the repository has one resource of a kind: exists
// tells whether the remembered id is still there, create makes one and
// returns its id.
func (w *fuzzWorld) thing(t *testing.T, kind string, exists func(r *store.Repository, id int64) bool,
	create func(t *testing.T, repoPath string) int64) int64 {
	r := w.repo(t)
	if id, ok := w.ids[kind]; ok && exists(r, id) {
		return id
	}
	id := create(t, "repos/"+fuzzUser+"/"+fuzzRepo)
	w.ids[kind] = id
	return id
}

// created reads the id of a created resource from its answer.
func created(r *apitest.Response, field string) int64 {
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		return 0
	}
	n, _ := v[field].(float64)
	return int64(n)
}

func (w *fuzzWorld) issue(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "issue", func(r *store.Repository, index int64) bool {
		_, err := w.e.DB.Issues().FindByIndex(ctx, r.ID, index)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		return created(w.call(t, "POST", repo+"/issues", map[string]any{"title": "fuzz issue", "body": "b"}, http.StatusCreated), "number")
	})
}

func (w *fuzzWorld) comment(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "comment", func(r *store.Repository, id int64) bool {
		c, err := w.e.DB.Comments().FindByID(ctx, id)
		if err != nil {
			return false
		}
		is, err := w.e.DB.Issues().FindByID(ctx, c.IssueID)
		return err == nil && is.RepoID == r.ID
	}, func(t *testing.T, repo string) int64 {
		index := w.issue(t)
		return created(w.call(t, "POST", fmt.Sprintf("%s/issues/%d/comments", repo, index), map[string]any{"body": "c"}, http.StatusCreated), "id")
	})
}

func (w *fuzzWorld) label(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "label", func(r *store.Repository, id int64) bool {
		_, err := w.e.DB.Labels().Find(ctx, r.ID, id)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		w.n++
		return created(w.call(t, "POST", repo+"/labels", map[string]any{"name": fmt.Sprintf("fuzz-label-%d", w.n), "color": "#ff0000"}, http.StatusCreated), "id")
	})
}

// orgLabel is a label of fuzzorg (an input may have deleted the previous
// one).
func (w *fuzzWorld) orgLabel(t *testing.T) int64 {
	w.org(t)
	ctx := context.Background()
	if id, ok := w.ids["orgLabel"]; ok {
		if o, err := w.e.DB.Users().FindByName(ctx, fuzzOrg); err == nil {
			if _, err := w.e.DB.Labels().FindOfOrg(ctx, o.ID, id); err == nil {
				return id
			}
		}
	}
	w.n++
	id := created(w.call(t, "POST", "orgs/"+fuzzOrg+"/labels", map[string]any{"name": fmt.Sprintf("fuzz-org-label-%d", w.n), "color": "#ff0000"}, http.StatusCreated), "id")
	w.ids["orgLabel"] = id
	return id
}

// oauth2App is an OAuth2 application of the admin's (an input may have
// deleted the previous one).
func (w *fuzzWorld) oauth2App(t *testing.T) int64 {
	if id, ok := w.ids["oauth2"]; ok {
		if _, err := w.e.DB.OAuth2().FindApp(context.Background(), w.adminRow.ID, id); err == nil {
			return id
		}
	}
	id := created(w.call(t, "POST", "user/applications/oauth2", map[string]any{"name": "fuzz", "redirect_uris": []string{"https://fuzz.example/cb"}}, http.StatusCreated), "id")
	w.ids["oauth2"] = id
	return id
}

func (w *fuzzWorld) milestone(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "milestone", func(r *store.Repository, id int64) bool {
		_, err := w.e.DB.Milestones().Find(ctx, r.ID, id)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		w.n++
		return created(w.call(t, "POST", repo+"/milestones", map[string]any{"title": fmt.Sprintf("fuzz-ms-%d", w.n)}, http.StatusCreated), "id")
	})
}

func (w *fuzzWorld) project(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "project", func(r *store.Repository, id int64) bool {
		_, err := w.e.DB.Projects().Find(ctx, r.ID, id)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		return created(w.call(t, "POST", repo+"/projects", map[string]any{"title": "fuzz project"}, http.StatusCreated), "id")
	})
}

// release is the release of tag v1.
func (w *fuzzWorld) release(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "release", func(r *store.Repository, id int64) bool {
		rel, err := w.e.DB.Releases().FindByID(ctx, r.ID, id)
		return err == nil && rel.TagName == "v1"
	}, func(t *testing.T, repo string) int64 {
		if rel, err := w.e.DB.Releases().FindByTag(ctx, w.repoID, "v1"); err == nil {
			return rel.ID
		}
		return created(w.call(t, "POST", repo+"/releases", map[string]any{"tag_name": "v1", "target_commitish": "main", "name": "v1"}, http.StatusCreated), "id")
	})
}

func (w *fuzzWorld) asset(t *testing.T) int64 {
	ctx := context.Background()
	rel := w.release(t)
	return w.thing(t, "asset", func(_ *store.Repository, id int64) bool {
		_, err := w.e.DB.ReleaseAttachments().FindByID(ctx, rel, id)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		body, ct := multipartBody("attachment", "a.txt", []byte("asset\n"))
		req, _ := http.NewRequest("POST", fmt.Sprintf("%sapi/v1/%s/releases/%d/assets?name=a.txt", w.e.URL, repo, rel), bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		w.admin(req)
		resp, err := w.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			t.Logf("world: upload answered %d: %.300s", resp.StatusCode, raw)
		}
		return created(&apitest.Response{Status: resp.StatusCode, Body: raw}, "id")
	})
}

func (w *fuzzWorld) protection(t *testing.T) {
	ctx := context.Background()
	w.thing(t, "protection", func(r *store.Repository, _ int64) bool {
		_, err := w.e.DB.Protections().FindByName(ctx, r.ID, fuzzRule)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		w.call(t, "POST", repo+"/branch_protections", map[string]any{"rule_name": fuzzRule}, http.StatusCreated)
		return 1
	})
}

func (w *fuzzWorld) trackedTime(t *testing.T) int64 {
	ctx := context.Background()
	return w.thing(t, "time", func(_ *store.Repository, id int64) bool {
		_, err := w.e.DB.TrackedTimes().FindByID(ctx, id)
		return err == nil
	}, func(t *testing.T, repo string) int64 {
		index := w.issue(t)
		return created(w.call(t, "POST", fmt.Sprintf("%s/issues/%d/times", repo, index), map[string]any{"time": 60}, http.StatusOK), "id")
	})
}

// pathBase is the unmutated value of path parameter name in path.
func (w *fuzzWorld) pathBase(t *testing.T, path, name string) string {
	segBefore := func() string {
		i := strings.Index(path, "/{"+name+"}")
		if i < 0 {
			return ""
		}
		return path[strings.LastIndex(path[:i], "/")+1 : i]
	}
	switch name {
	case "owner", "template_owner", "username", "user", "target":
		w.user(t)
		return fuzzUser
	case "repo", "template_repo":
		w.repo(t)
		return fuzzRepo
	case "org":
		w.org(t)
		return fuzzOrg
	case "index":
		return strconv.FormatInt(w.issue(t), 10)
	case "attachment_id":
		return strconv.FormatInt(w.asset(t), 10)
	case "branch":
		return "main"
	case "name":
		w.protection(t)
		return fuzzRule
	case "tag":
		w.release(t)
		return "v1"
	case "filepath":
		if strings.HasSuffix(path, "/contents/{filepath}") && w.creating {
			return "fuzz-new.txt"
		}
		return "README.md"
	case "archive":
		return "main.zip"
	case "topic":
		return "fuzz"
	case "secretname", "variablename":
		return "FUZZ_NAME"
	case "token":
		return "fuzz-token"
	case "id":
		switch segBefore() {
		case "comments":
			return strconv.FormatInt(w.comment(t), 10)
		case "labels":
			if strings.HasPrefix(path, "/orgs/") {
				return strconv.FormatInt(w.orgLabel(t), 10)
			}
			return strconv.FormatInt(w.label(t), 10)
		case "milestones":
			return strconv.FormatInt(w.milestone(t), 10)
		case "releases":
			return strconv.FormatInt(w.release(t), 10)
		case "projects":
			return strconv.FormatInt(w.project(t), 10)
		case "times":
			return strconv.FormatInt(w.trackedTime(t), 10)
		case "oauth2":
			return strconv.FormatInt(w.oauth2App(t), 10)
		}
	}
	return "1"
}

// fuzzRequest is one request built from an operation and mutations.
type fuzzRequest struct {
	method, path, query string // path escaped, relative to /api/v1
	body                []byte
	contentType         string
	anonymous           bool
	// params are the path parameters as sent, unescaped.
	params map[string]string
}

func (r fuzzRequest) String() string {
	who := "as the admin"
	if r.anonymous {
		who = "anonymously"
	}
	q := ""
	if r.query != "" {
		q = "?" + r.query
	}
	s := fmt.Sprintf("%s /api/v1%s%s %s", r.method, truncateMiddle(r.path, 400), truncateMiddle(q, 400), who)
	if r.body != nil {
		s += fmt.Sprintf(" with %s body %q", r.contentType, truncateMiddle(string(r.body), 400))
	}
	return s
}

func truncateMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("…(%d bytes)…", len(s)-n) + s[len(s)-n/2:]
}

var placeholderRe = regexp.MustCompile(`\{[^}]+\}`)

// build turns data into a request for op.
func (w *fuzzWorld) build(t *testing.T, op *fuzzOp, data []byte) fuzzRequest {
	anonymous, ms := op.decodeMutations(data)
	req := fuzzRequest{method: op.method, anonymous: anonymous}

	w.creating = op.id == "repoCreateFile"
	pathVals := map[string]pathValue{}
	for _, p := range op.pathParams {
		pathVals[p.Name] = pathValue{v: w.pathBase(t, op.path, p.Name)}
	}
	type kv struct{ k, v string }
	var query []kv
	queryVals := map[string][]string{}
	for _, p := range op.queryParams {
		if p.Required {
			queryVals[p.Name] = []string{plausibleQuery(p)}
		}
	}
	var body map[string]json.RawMessage
	var rawBody []byte
	if op.body != nil {
		body = map[string]json.RawMessage{}
		if base, ok := plausible(op.body, "", 0).(map[string]any); ok {
			for k, v := range base {
				body[k] = mustJSON(v)
			}
		}
		for k, v := range baseBodyHints[op.id] {
			body[k] = mustJSON(v)
		}
	}
	var formBody []byte
	formType := ""
	if len(op.form) > 0 {
		formBody, formType = formKinds[0](op.form[0].Name, nil)
	}
	var extra []string
	for _, m := range ms {
		switch m.target.kind {
		case targetPath:
			pathVals[op.pathParams[m.target.index].Name] = pathKinds[m.kind](m.payload)
		case targetQuery:
			p := op.queryParams[m.target.index]
			queryVals[p.Name] = queryKinds[m.kind](p, m.payload)
		case targetExtraQuery:
			extra = append(extra, extraQueryKinds[m.kind](m.payload))
		case targetBody:
			if m.kind < len(bodyKinds) {
				rawBody = bodyKinds[m.kind](m.payload)
			} else {
				rawBody = []byte(malformedBodies()[m.kind-len(bodyKinds)])
			}
		case targetField:
			props := objectSchema(op.body).Properties
			s := props[m.target.field]
			if v := fieldKinds[m.kind](&s, m.target.field, m.payload); v == nil {
				delete(body, m.target.field)
			} else {
				body[m.target.field] = v
			}
			rawBody = nil
		case targetForm:
			formBody, formType = formKinds[m.kind](op.form[0].Name, m.payload)
		}
	}
	req.params = map[string]string{}
	for k, v := range pathVals {
		req.params[k] = v.v
	}
	req.path = placeholderRe.ReplaceAllStringFunc(op.path, func(ph string) string {
		v := pathVals[ph[1:len(ph)-1]]
		if v.raw {
			return v.v
		}
		return url.PathEscape(v.v)
	})
	names := make([]string, 0, len(queryVals))
	for k := range queryVals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range queryVals[k] {
			query = append(query, kv{k, v})
		}
	}
	var qs []string
	for _, q := range query {
		qs = append(qs, url.QueryEscape(q.k)+"="+url.QueryEscape(q.v))
	}
	req.query = strings.Join(append(qs, extra...), "&")
	switch {
	case rawBody != nil:
		req.body, req.contentType = rawBody, "application/json"
	case body != nil:
		req.body, req.contentType = marshalFields(body), "application/json"
	case formType != "":
		req.body, req.contentType = formBody, formType
	}
	return req
}

// marshalFields writes the body's fields in a stable order.
func marshalFields(body map[string]json.RawMessage) []byte {
	names := make([]string, 0, len(body))
	for k := range body {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(jsonString(k))
		buf.WriteByte(':')
		buf.Write(body[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// send builds the input's request, sends it and checks the answer: no
// 5xx, and a status and body swagger.yml declares for the operation.
func (w *fuzzWorld) send(t *testing.T, op *fuzzOp, data []byte) {
	w.restoreAdmin(t)
	fr := w.build(t, op, data)
	target := w.e.URL + "api/v1" + fr.path
	if fr.query != "" {
		target += "?" + fr.query
	}
	var rd io.Reader
	if fr.body != nil {
		rd = bytes.NewReader(fr.body)
	}
	req, err := http.NewRequest(fr.method, target, rd)
	if err != nil {
		// Not a request a client can send (the URL does not parse).
		t.Skipf("%s: %v", fr, err)
	}
	if fr.contentType != "" {
		req.Header.Set("Content-Type", fr.contentType)
	}
	if !fr.anonymous {
		w.admin(req)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		// No answer at all (the connection closed, or none came within
		// the client's timeout).
		t.Fatalf("%s: %v", fr, err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if fuzzVerbose {
		t.Logf("%s %x: %s → %d %.200s", op.id, data[:min(len(data), 3)], fr, resp.StatusCode, raw)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s: answered %d: %.500s", fr, resp.StatusCode, raw)
	}
	routerRefusal := resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed
	if routerRefusal && resp.Header.Get(apitest.OperationHeader) == "" {
		// A mutated path parameter (empty, holding "/", or "." segments)
		// that routes to no operation: the router's own 404 or 405, which
		// no operation of the contract describes.
		return
	}
	c, _ := apitest.SharedContract()
	if err := c.Check(fr.method, req.URL.EscapedPath(), resp.StatusCode, resp.Header, raw); err != nil {
		t.Fatalf("%s: %v", fr, err)
	}
	if !utf8.Valid(raw) && strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Fatalf("%s: a JSON answer that is not UTF-8: %q", fr, truncateMiddle(string(raw), 300))
	}
}
