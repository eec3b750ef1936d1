package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"

	"repohost/restapi"
)

// Contract checks responses against swagger.yml: the status must be
// declared for the operation, the body must match the declared schema and
// declared headers must be present unless the response lists them in
// x-optional-headers.
type Contract struct {
	doc    *loads.Document
	routes []route
}

type route struct {
	method string
	re     *regexp.Regexp
	path   string
	op     *spec.Operation
}

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
	c := &Contract{doc: doc}
	base := doc.Spec().BasePath
	for path, item := range doc.Spec().Paths.Paths {
		pattern := regexp.QuoteMeta(base + path)
		pattern = regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(pattern, `[^/]+`)
		re := regexp.MustCompile("^" + pattern + "$")
		for method, op := range map[string]*spec.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put,
			"PATCH": item.Patch, "DELETE": item.Delete, "HEAD": item.Head} {
			if op != nil {
				c.routes = append(c.routes, route{method: method, re: re, path: path, op: op})
			}
		}
	}
	// Literal segments beat templated ones (/users/search before /users/{username}).
	sort.Slice(c.routes, func(i, j int) bool {
		return strings.Count(c.routes[i].path, "{") < strings.Count(c.routes[j].path, "{")
	})
	return c, nil
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

// Operation finds the operation serving method and path, or nil.
func (c *Contract) Operation(method, path string) (*spec.Operation, string) {
	for _, r := range c.routes {
		if r.method == method && r.re.MatchString(path) {
			return r.op, r.path
		}
	}
	return nil, ""
}

// Operations lists every operation in the spec as "METHOD path".
func (c *Contract) Operations() map[string]*spec.Operation {
	out := map[string]*spec.Operation{}
	for _, r := range c.routes {
		out[r.method+" "+r.path] = r.op
	}
	return out
}

// Check validates one response; body is the raw response body.
func (c *Contract) Check(method, path string, status int, header http.Header, body []byte) error {
	op, tmpl := c.Operation(method, path)
	if op == nil {
		return nil // outside the API (e.g. /swagger.v1.json)
	}
	name := fmt.Sprintf("%s %s (%s)", method, tmpl, op.ID)
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
	if err := t.contract.Check(req.Method, req.URL.Path, resp.StatusCode, resp.Header, body); err != nil {
		t.fail(err)
	}
	return resp, nil
}
