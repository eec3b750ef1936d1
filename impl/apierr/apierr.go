// Package apierr is the one place where an error becomes an HTTP status and a
// body. Handlers return errors built here or store sentinels; go-swagger's
// binding errors come through ServeError.
package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	oaerrors "github.com/go-openapi/errors"
	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/requestid"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// DocsURL is sent as "url" in every error body, as the reference does.
const DocsURL = "/api/swagger"

// Error is an expected failure with the status and message a client sees.
type Error struct {
	Status  int
	Message string
	// Body, when set, replaces the {message, url} body (the invalid-topics shape).
	Body any
	// Bare sends {message} without url, as the reference does for a few
	// middleware refusals (sudo).
	Bare bool
	// RetryAfter, when set, is sent as the Retry-After header (429, 503).
	RetryAfter time.Duration
	cause      error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.cause }

func newf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Constructors for the statuses handlers use.
func BadRequest(format string, args ...any) *Error {
	return newf(http.StatusBadRequest, format, args...)
}
func Unauthorized(format string, args ...any) *Error {
	return newf(http.StatusUnauthorized, format, args...)
}
func Forbidden(format string, args ...any) *Error { return newf(http.StatusForbidden, format, args...) }
func NotFound(format string, args ...any) *Error  { return newf(http.StatusNotFound, format, args...) }
func Conflict(format string, args ...any) *Error  { return newf(http.StatusConflict, format, args...) }
func Validation(format string, args ...any) *Error {
	return newf(http.StatusUnprocessableEntity, format, args...)
}
func PreconditionFailed(format string, args ...any) *Error {
	return newf(http.StatusPreconditionFailed, format, args...)
}

// MethodNotAllowed is the 405 the reference answers for a merge it refuses
// (protection, style, state).
func MethodNotAllowed(format string, args ...any) *Error {
	return newf(http.StatusMethodNotAllowed, format, args...)
}

// PayloadTooLarge is the 413 for a request body over the server's limit.
func PayloadTooLarge(format string, args ...any) *Error {
	return newf(http.StatusRequestEntityTooLarge, format, args...)
}

// TooManyRequests is the 429 for a caller who must wait before retrying.
func TooManyRequests(retryAfter time.Duration, format string, args ...any) *Error {
	e := newf(http.StatusTooManyRequests, format, args...)
	e.RetryAfter = retryAfter
	return e
}

// retryUnavailable is how long a client is asked to wait while the database
// is unreachable: a restart takes a few seconds.
const retryUnavailable = 5 * time.Second

// RepoArchived is the 423 answered for a change to an archived repository.
func RepoArchived() *Error { return newf(http.StatusLocked, "repo is archived") }

// InvalidTopics is the 422 with the {invalidTopics, message} body.
func InvalidTopics(invalid []string, message string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: message,
		Body: &models.APIInvalidTopicsError{InvalidTopics: invalid, Message: message}}
}

// StatusClientClosedRequest is what a request the client cancelled answers
// (nginx's 499): not a server error.
const StatusClientClosedRequest = 499

// Translator turns errors into responses and logs what the client must not see.
type Translator struct {
	Log *slog.Logger
}

// classify maps any error to the status and message a client sees.
func (t Translator) classify(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.Canceled):
		// The client went away (or gave up) before the answer: its doing,
		// not a fault of the server. Nobody reads the answer; the access
		// log shows the request with the status nginx made usual for it.
		return newf(StatusClientClosedRequest, "client closed request")
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Reading the request ran past its stall deadline: the client
		// stopped sending (impl's progressDeadlines).
		return newf(http.StatusRequestTimeout, "the request body stopped arriving")
	case errors.Is(err, store.ErrNotFound):
		return NotFound("not found")
	case errors.Is(err, store.ErrDuplicate):
		return Validation("already exists")
	case errors.Is(err, store.ErrUnavailable):
		e := newf(http.StatusServiceUnavailable, "the database is unreachable for the moment; retry later")
		e.RetryAfter = retryUnavailable
		return e
	case errors.Is(err, store.ErrInvalid):
		return Validation("a value contains characters that cannot be stored")
	case errors.Is(err, store.ErrConflict):
		return Conflict("the resource was changed by someone else meanwhile; retry with its new state")
	case errors.Is(err, gitstore.ErrRefused), errors.Is(err, gitstore.ErrTooMuchHistory):
		// The push policy's refusal says which branch and which rule; a
		// change too large to check against a rule is refused like one.
		return Forbidden("%s", err.Error())
	case errors.Is(err, gitstore.ErrBadPath), errors.Is(err, gitstore.ErrFileExists),
		errors.Is(err, gitstore.ErrPathConflict), errors.Is(err, gitstore.ErrSHAMismatch),
		errors.Is(err, gitstore.ErrBranchExists), errors.Is(err, gitstore.ErrBadRefName):
		// The git store's messages name the path or branch and what is
		// wrong with it; none carries anything internal.
		return Validation("%s", err.Error())
	case errors.Is(err, gitstore.ErrMergeConflict):
		return Conflict("the merge has conflicts")
	case errors.Is(err, gitstore.ErrTagExists):
		return Conflict("%s", err.Error())
	case errors.Is(err, gitstore.ErrNotACommit):
		return NotFound("%s", err.Error())
	case errors.Is(err, gitstore.ErrBadName):
		return NotFound("not found")
	case errors.Is(err, gitstore.ErrProtocol):
		return BadRequest("%s", err.Error())
	default:
		// Never leak internals: the detail stays in the log.
		return &Error{Status: http.StatusInternalServerError, Message: "internal server error"}
	}
}

// report logs what a client is not told (the cause of a 5xx, a client
// that went away), when the answer is written: w leads to the request's
// id, which the line carries.
func (t Translator) report(w http.ResponseWriter, err error, e *Error) {
	if t.Log == nil {
		return
	}
	var level slog.Level
	var msg string
	switch {
	case e.Status == StatusClientClosedRequest:
		level, msg = slog.LevelInfo, "request cancelled by the client"
	case errors.Is(err, store.ErrUnavailable):
		level, msg = slog.LevelWarn, "database unavailable"
	case e.Status == http.StatusInternalServerError:
		level, msg = slog.LevelError, "internal error"
	default:
		return
	}
	args := []any{"err", err}
	if id := requestid.FromWriter(w); id != "" {
		args = append(args, "request_id", id)
	}
	t.Log.Log(context.Background(), level, msg, args...)
}

// Respond returns a responder that writes err in the spec's error shape.
func (t Translator) Respond(err error) middleware.Responder {
	e := t.classify(err)
	return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) {
		t.report(w, err, e)
		write(w, e)
	})
}

func write(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up so a client never retries too early.
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(e.Status)
	var body any = &models.APIError{Message: e.Message, URL: DocsURL}
	switch {
	case e.Body != nil:
		body = e.Body
	case e.Bare:
		body = map[string]string{"message": e.Message}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// Write sends err directly, for code that runs outside the generated router
// (authentication middleware, git over HTTP).
func (t Translator) Write(w http.ResponseWriter, err error) {
	e := t.classify(err)
	t.report(w, err, e)
	write(w, e)
}

// ServeError replaces go-swagger's default error writer: binding and
// validation failures become 422 {message, url} (its 6xx codes and its 400
// for malformed JSON never reach a client), routing failures keep their
// status, and everything answers in the same shape.
func (t Translator) ServeError(w http.ResponseWriter, _ *http.Request, err error) {
	var notAllowed *oaerrors.MethodNotAllowedError
	if errors.As(err, &notAllowed) {
		w.Header().Set("Allow", strings.Join(notAllowed.Allowed, ","))
	}
	e := t.fromOpenAPI(err)
	t.report(w, err, e)
	write(w, e)
}

func (t Translator) fromOpenAPI(err error) *Error {
	var composite *oaerrors.CompositeError
	if errors.As(err, &composite) {
		if len(composite.Errors) == 0 {
			return Validation("%s", composite.Error())
		}
		// The reference reports only the first failure; so do we.
		return t.fromOpenAPI(composite.Errors[0])
	}
	var verr *oaerrors.Validation
	if errors.As(err, &verr) {
		return Validation("%s", describeValidation(verr))
	}
	var perr *oaerrors.ParseError
	if errors.As(err, &perr) {
		var own *Error
		if errors.As(perr.Reason, &own) {
			// Our body reader's own refusals (413) keep their status.
			return own
		}
		if perr.In == "body" && perr.Reason != nil {
			// Like the reference's deserialization errors: no field name.
			reason := perr.Reason.Error()
			if !strings.HasPrefix(reason, "[") {
				reason = "[]: " + reason
			}
			return Validation("%s", reason)
		}
		return Validation("[%s]: cannot parse %q", fieldName(perr.Name), perr.Value)
	}
	var api oaerrors.Error
	if errors.As(err, &api) {
		code := int(api.Code())
		switch {
		case code == http.StatusNotFound:
			return NotFound("not found")
		case code == http.StatusMethodNotAllowed:
			return newf(code, "method not allowed")
		case code == http.StatusUnauthorized:
			return Unauthorized("token is required")
		case code >= 600 || code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
			return Validation("%s", api.Error())
		case code >= 400 && code < 500:
			return newf(code, "%s", api.Error())
		}
	}
	return t.classify(err)
}

// describeValidation renders a failure like the reference's binding errors:
// "[Field]: Rule".
func describeValidation(v *oaerrors.Validation) string {
	rule := strings.TrimSpace(v.Error())
	switch v.Code() {
	case oaerrors.RequiredFailCode:
		rule = "Required"
	case oaerrors.TooLongFailCode, oaerrors.MaxItemsFailCode:
		rule = "MaxSize"
	case oaerrors.TooShortFailCode:
		rule = "MinSize"
	case oaerrors.PatternFailCode:
		rule = "AlphaDashDot"
	case oaerrors.EnumFailCode:
		rule = "In"
	}
	if v.Name == "" {
		return rule
	}
	return fmt.Sprintf("[%s]: %s", fieldName(v.Name), rule)
}

// fieldName turns "body.full_name" into "FullName".
func fieldName(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
