package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"

	"repohost/impl"
	"repohost/restapi"
)

// Contract checks responses against swagger.yml: the status must be
// declared for the operation, the body must match the declared schema and
// declared headers must be present unless the response lists them in
// x-optional-headers.
//
// It finds the operation the way the server does. Most path parameters
// hold one segment, but file paths, branch, tag and protection-rule names
// may hold slashes ("contents/docs/a.md", "branches/feature/x"), and Gitea
// clients send those slashes unescaped. The generated router cannot match
// a parameter across segments, so the server's front mux folds such a tail
// into one escaped segment before routing (impl.MountAPI). A matcher that
// let every parameter match only "[^/]+" would find no operation for these
// requests and skip their responses; one that let every parameter match
// ".+" would pick operations the server never dispatches to. In effect the
// last parameter of those few routes matches ".+" and every other one
// "[^/]+". Rather than keep its own copy of the list, the Contract sends
// each path through the server's own front mux, and then matches segment by
// segment as the generated router does.
type Contract struct {
	doc    *loads.Document
	base   string
	routes []route // in the generated router's order of preference
	front  http.Handler
}

type route struct {
	method   string
	path     string    // the template in swagger.yml, without the base path
	segments []segment // of the base path and the template
	op       *spec.Operation
}

// segment is one part of a route template between slashes: a literal or a
// parameter (which matches any one non-empty segment).
type segment struct {
	literal string
	param   bool
	// dotted: two parameters joined by a dot ({index}.{diffType}), which
	// match only a segment with a dot in it, and before a plain parameter.
	dotted bool
}

// routedPathHeader carries, inside the Contract only, the path the front mux
// handed to the API.
const routedPathHeader = "X-Contract-Routed-Path"

// LoadContract reads the spec embedded in the generated server.
func LoadContract() (*Contract, error) {
	raw := nullableRefs(restapi.SwaggerJSON)
	doc, err := loads.Analyzed(raw, "")
	if err != nil {
		return nil, err
	}
	doc, err = doc.Expanded()
	if err != nil {
		return nil, err
	}
	c := &Contract{doc: doc, base: doc.Spec().BasePath, front: apiFrontMux()}
	for tmpl, item := range doc.Spec().Paths.Paths {
		for method, op := range operationsOf(item) {
			c.routes = append(c.routes, route{method: method, path: tmpl, segments: templateSegments(c.base + tmpl), op: op})
		}
	}
	sort.SliceStable(c.routes, func(i, j int) bool {
		return routerPrefers(c.routes[i].segments, c.routes[j].segments)
	})
	return c, nil
}

func operationsOf(item spec.PathItem) map[string]*spec.Operation {
	out := map[string]*spec.Operation{}
	for method, op := range map[string]*spec.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put,
		"PATCH": item.Patch, "DELETE": item.Delete, "HEAD": item.Head, "OPTIONS": item.Options} {
		if op != nil {
			out[method] = op
		}
	}
	return out
}

func templateSegments(template string) []segment {
	parts := strings.Split(strings.TrimPrefix(template, "/"), "/")
	out := make([]segment, len(parts))
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			out[i] = segment{param: true, dotted: strings.Contains(p, "}.{")}
		} else {
			out[i] = segment{literal: p}
		}
	}
	return out
}

// routerPrefers reports whether the generated router tries template a
// before b: it walks the path from the left and, where both could go on, a
// literal segment beats a parameter (/users/search before
// /users/{username}, /repos/{owner}/{repo}/releases/tags/{tag} before
// /repos/{owner}/{repo}/releases/{id}/assets).
func routerPrefers(a, b []segment) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].param != b[i].param {
			return !a[i].param
		}
		if a[i].dotted != b[i].dotted {
			return a[i].dotted
		}
	}
	return len(a) < len(b)
}

// matches reports whether the escaped path segments fit the route.
func (r route) matches(parts []string) bool {
	if len(parts) != len(r.segments) {
		return false
	}
	for i, s := range r.segments {
		if s.param && parts[i] == "" || !s.param && parts[i] != s.literal {
			return false
		}
		if s.dotted {
			if before, after, ok := strings.Cut(parts[i], "."); !ok || before == "" || after == "" {
				return false
			}
		}
	}
	return true
}

// apiFrontMux is the server's routing in front of the generated router
// (impl.MountAPI), answering with the escaped path it hands on.
func apiFrontMux() http.Handler {
	mux := http.NewServeMux()
	impl.MountAPI(mux, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(routedPathHeader, r.URL.EscapedPath())
	}))
	return mux
}

// routedPath is the escaped path the generated router matches when the
// server receives escapedPath: as the front mux rewrote it, then cleaned as
// the router does (a trailing slash goes). ok is false when the request
// never reaches the API: the front mux answers a path with "." or ".."
// segments or doubled slashes itself, with a redirect to its clean form.
func (c *Contract) routedPath(method, escapedPath string) (routed string, ok bool) {
	req, err := http.NewRequest(method, "http://contract.invalid"+escapedPath, nil)
	if err != nil {
		return "", false
	}
	rec := httptest.NewRecorder()
	c.front.ServeHTTP(rec, req)
	routed = rec.Header().Get(routedPathHeader)
	if routed == "" {
		return "", false
	}
	return path.Clean(routed), true
}

// nullableRefs rewrites properties written as {$ref, x-nullable: true} into
// {allOf: [$ref], x-nullable: true}: JSON Schema ignores siblings of $ref, so
// without this the validator would refuse the null the spec allows.
func nullableRefs(raw []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return raw
	}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			// The validator knows the OpenAPI 3 "nullable" keyword, not
			// go-swagger's x-nullable; without this an unset time (null)
			// would fail its "type: string".
			if t["x-nullable"] == true {
				t["nullable"] = true
			}
			if props, ok := t["properties"].(map[string]any); ok {
				for name, p := range props {
					pm, ok := p.(map[string]any)
					if ok && pm["$ref"] != nil && pm["x-nullable"] == true {
						props[name] = map[string]any{"x-nullable": true, "allOf": []any{map[string]any{"$ref": pm["$ref"]}}}
					}
				}
			}
			for _, c := range t {
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

// InAPI reports whether a request to escapedPath reaches the API (it is
// under the base path and the front mux hands it on), so that its response
// must belong to an operation.
func (c *Contract) InAPI(method, escapedPath string) bool {
	if !strings.HasPrefix(escapedPath, c.base+"/") {
		return false
	}
	_, ok := c.routedPath(method, escapedPath)
	return ok
}

// Operation finds the operation the server dispatches method and
// escapedPath (as on the wire, e.g. from URL.EscapedPath) to, or nil.
func (c *Contract) Operation(method, escapedPath string) (*spec.Operation, string) {
	routed, ok := c.routedPath(method, escapedPath)
	if !ok {
		return nil, ""
	}
	parts := strings.Split(strings.TrimPrefix(routed, "/"), "/")
	for _, r := range c.routes {
		if r.method == method && r.matches(parts) {
			return r.op, r.path
		}
	}
	return nil, ""
}

// Operations lists every operation in the spec, keyed "METHOD path".
func (c *Contract) Operations() map[string]*spec.Operation {
	out := map[string]*spec.Operation{}
	for _, r := range c.routes {
		out[r.method+" "+r.path] = r.op
	}
	return out
}

// Check validates one response to method and escapedPath (as on the wire);
// body is the raw response body. Responses from outside the API (git over
// HTTP, downloads, /swagger.v1.json, the front mux's redirects) are not
// checked; one from the API that no operation serves is an error.
func (c *Contract) Check(method, escapedPath string, status int, header http.Header, body []byte) error {
	if !c.InAPI(method, escapedPath) {
		return nil
	}
	op, tmpl := c.Operation(method, escapedPath)
	if op == nil {
		return fmt.Errorf("%s %s: no operation in swagger.yml serves this request (status %d, body %s)",
			method, escapedPath, status, truncate(body))
	}
	name := fmt.Sprintf("%s %s (%s)", method, tmpl, op.ID)
	if routed := header.Get(OperationHeader); routed != "" && routed != op.ID {
		return fmt.Errorf("%s %s: the server dispatched it to %s, the Contract checks it as %s", method, escapedPath, routed, name)
	}
	var resp *spec.Response
	if op.Responses != nil {
		if r, ok := op.Responses.StatusCodeResponses[status]; ok {
			resp = &r
		} else if op.Responses.Default != nil {
			resp = op.Responses.Default
		}
	}
	if resp == nil {
		return fmt.Errorf("%s: status %d is not declared in swagger.yml (body %s)", name, status, truncate(body))
	}
	optional, _ := resp.Extensions.GetStringSlice("x-optional-headers")
	for h := range resp.Headers {
		// Swagger 2.0 cannot say a response header is optional; the spec
		// lists such headers (Link on a single page) on the response.
		if slices.Contains(optional, h) {
			continue
		}
		if header.Get(h) == "" {
			return fmt.Errorf("%s: status %d: declared header %s is missing", name, status, h)
		}
	}
	if resp.Schema == nil {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("%s: status %d declares no body but got %s", name, status, truncate(body))
		}
		return nil
	}
	if resp.Schema.Type.Contains("file") {
		// A binary body (raw file, archive) has no schema to check.
		return nil
	}
	if strings.HasPrefix(header.Get("Content-Type"), "text/plain") && len(op.Produces) > 1 && slices.Contains(op.Produces, "text/plain") {
		// An operation that answers JSON or plain text (a comparison as
		// a raw diff) has only its JSON described by the schema.
		return nil
	}
	if resp.Schema.Type.Contains("string") && strings.HasPrefix(header.Get("Content-Type"), "text/plain") {
		// A plain-text string (the GPG verification token) is the body
		// itself, not a JSON string.
		return nil
	}
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		return fmt.Errorf("%s: status %d: body is not JSON: %v: %s", name, status, err, truncate(body))
	}
	// The whole document is the root, so that a recursive reference the
	// expansion had to leave in place (Repository.parent) still resolves.
	res := validate.NewSchemaValidator(resp.Schema, c.doc.Spec(), "", strfmt.Default).Validate(data)
	if err := res.AsError(); err != nil {
		return fmt.Errorf("%s: status %d: body does not match the schema: %v\nbody: %s", name, status, err, truncate(body))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// checkingTransport validates every response that passes through it and
// reports failures to the test.
type checkingTransport struct {
	contract *Contract
	next     http.RoundTripper
	fail     func(error)
}

func (t checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := t.contract.Check(req.Method, req.URL.EscapedPath(), resp.StatusCode, resp.Header, body); err != nil {
		t.fail(err)
	}
	return resp, nil
}
