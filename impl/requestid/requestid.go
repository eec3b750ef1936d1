// Package requestid gives every request an id: sent back in the
// X-Request-ID header, written on the request's access-log line and on
// every line logged for it, so an operator can find all of one request's
// lines (and a client can quote the id in a report).
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// Header carries the id, both ways: a proxy in front may set it, and the
// answer always has it.
const Header = "X-Request-ID"

type key struct{}

// With puts id into ctx.
func With(ctx context.Context, id string) context.Context { return context.WithValue(ctx, key{}, id) }

// FromContext is the id of the request ctx belongs to, "" outside one.
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// FromWriter is the id of the request whose answer w writes: for code that
// holds the writer but not the request (a responder of the generated
// router). Writers that wrap another expose it with Unwrap, as
// http.ResponseController expects.
func FromWriter(w http.ResponseWriter) string {
	for w != nil {
		if c, ok := w.(interface{ RequestID() string }); ok {
			return c.RequestID()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return ""
		}
		w = u.Unwrap()
	}
	return ""
}

// Accept reads an id a proxy in front sent: up to 64 characters of
// letters, digits, '-', '_' and '.', so nothing a client sends can forge
// log lines; anything else is replaced.
func Accept(r *http.Request) string {
	id := r.Header.Get(Header)
	if id == "" || len(id) > 64 {
		return New()
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return New()
		}
	}
	return id
}

// New makes a random id.
func New() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Handler adds request_id to every record logged with a request's
// context (Logger.InfoContext and the like).
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if id := FromContext(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler { return handler{h.Handler.WithAttrs(as)} }
func (h handler) WithGroup(name string) slog.Handler    { return handler{h.Handler.WithGroup(name)} }
