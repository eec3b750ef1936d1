package impl

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-openapi/runtime"
)

// TestEmptyBodyKnown reads requests as the server does (http.NoBody for
// none): one without a body reaches the generated router marked
// "Content-Length: 0", so binding does not wrap its body to peek at it; one
// with a body is left as it came.
func TestEmptyBodyKnown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw      string
		wantBody string
		hasBody  bool
	}{
		{raw: "GET /api/v1/user HTTP/1.1\r\nHost: x\r\n\r\n"},
		{raw: "DELETE /api/v1/repos/o/r HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"},
		{raw: "POST /api/v1/user/repos HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{\"a\"", wantBody: `{"a"`, hasBody: true},
		{raw: "POST /api/v1/user/repos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", wantBody: "{}", hasBody: true},
	} {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tc.raw)))
		if err != nil {
			t.Fatal(err)
		}
		var sawHasBody bool
		var body string
		var bodyWrapped bool
		emptyBodyKnown(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			before := r.Body
			sawHasBody = runtime.HasBody(r)
			bodyWrapped = r.Body != before
			b, _ := io.ReadAll(r.Body)
			body = string(b)
		})).ServeHTTP(nil, req)
		if sawHasBody != tc.hasBody || body != tc.wantBody {
			t.Errorf("%q: HasBody %v, body %q; want %v, %q", tc.raw, sawHasBody, body, tc.hasBody, tc.wantBody)
		}
		if !tc.hasBody && bodyWrapped {
			t.Errorf("%q: the body of a request without one was wrapped", tc.raw)
		}
	}
}
