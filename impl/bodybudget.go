package impl

import (
	"io"
	"net/http"

	"github.com/go-openapi/runtime/middleware"
	"golang.org/x/sync/semaphore"

	"repohost/impl/apierr"
)

// largeBody is the size from which a request body counts against the
// decode budget. Nearly every API body is far smaller and never waits.
const largeBody = 1 << 20

// bodyBudget bounds the bytes of large request bodies the API reads and
// decodes at the same time. Decoding a JSON body allocates about three
// times its size (the text, the decoder's buffer, the decoded strings),
// and the generated binding decodes it before a handler can look at the
// caller, so without a bound a few dozen concurrent 8 MiB bodies, from
// anyone, take the process past a gigabyte. With it, a large body waits
// for its turn and memory stays near budget × 3 whatever the
// concurrency; small bodies are never held up.
type bodyBudget struct {
	sem     *semaphore.Weighted
	budget  int64
	maxBody int64
	errors  apierr.Translator
}

func newBodyBudget(budget, maxBody int64, errors apierr.Translator) *bodyBudget {
	if budget < maxBody {
		budget = maxBody // one body of the largest accepted size must fit
	}
	return &bodyBudget{sem: semaphore.NewWeighted(budget), budget: budget, maxBody: maxBody, errors: errors}
}

// middleware runs once the generated router has matched an operation and
// before it binds the body. A body declared larger than the API accepts is
// refused unread; one of unknown length counts as the largest accepted.
func (b *bodyBudget) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size := r.ContentLength
		if size == 0 || (size > 0 && size < largeBody) || r.Body == nil || r.Body == http.NoBody || !bindsBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		if size > b.maxBody {
			b.errors.Write(w, apierr.PayloadTooLarge("request body is larger than the %d bytes this server accepts", b.maxBody))
			return
		}
		weight := size
		if weight < 0 {
			weight = b.maxBody
		}
		if err := b.sem.Acquire(r.Context(), weight); err != nil {
			return // the client went away while it waited
		}
		defer b.sem.Release(weight)
		if size > 0 {
			r.Body = sizedBody{ReadCloser: r.Body, size: size}
		}
		next.ServeHTTP(w, r)
	})
}

// bindsBody tells whether the operation the router matched reads a body;
// the others never read one, whatever its size.
func bindsBody(r *http.Request) bool {
	route := middleware.MatchedRouteFrom(r)
	if route == nil || route.Operation == nil {
		return true // not known: count it
	}
	for _, p := range route.Operation.Parameters {
		if p.In == "body" || p.In == "formData" {
			return true
		}
	}
	return false
}

// sizedBody carries a request body's declared length to the JSON consumer,
// which then reads it into one buffer of that size instead of growing one.
type sizedBody struct {
	io.ReadCloser
	size int64
}

func (s sizedBody) Size() int64 { return s.size }
