package impl

import (
	"io"
	"net/http"
	"time"

	"repohost/impl/app"
)

// progressChunk is how much data must flow to move a deadline forward.
const progressChunk = 16 << 10

// HTTPServer is the net/http server for handler with the configured
// timeouts: a client has ReadHeaderTimeout to send its headers, an idle
// keep-alive connection is closed after IdleTimeout, and request bodies and
// answers stall out after StallTimeout without progress (see
// progressDeadlines).
func HTTPServer(handler http.Handler, c app.Config) *http.Server {
	return &http.Server{
		Handler:           progressDeadlines(c.StallTimeout, handler),
		ReadHeaderTimeout: c.HeaderTimeout,
		IdleTimeout:       c.IdleTimeout,
	}
}

// progressDeadlines bounds how long a request may stall. Fixed read and
// write timeouts would cut off a long git push or clone; none at all lets a
// client hold a connection forever by trickling a byte every few seconds.
// So each direction gets a deadline that moves forward by stall every time
// another progressChunk has flowed: a transfer of any length survives as
// long as it keeps a modest rate (16 KiB per stall period).
func progressDeadlines(stall time.Duration, next http.Handler) http.Handler {
	if stall <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		_ = rc.SetReadDeadline(now.Add(stall))
		// Computing an answer (a pack, an archive) may take a while before
		// its first byte, so writing starts with a longer allowance.
		_ = rc.SetWriteDeadline(now.Add(5 * stall))
		if r.Body != nil && r.Body != http.NoBody {
			// A body still arriving is progress for the answer too: its
			// allowance starts after the last of the body, however long
			// the upload took.
			r.Body = &progressReader{ReadCloser: r.Body, extend: func(t time.Time) {
				_ = rc.SetReadDeadline(t.Add(stall))
				_ = rc.SetWriteDeadline(t.Add(5 * stall))
			}}
		}
		next.ServeHTTP(&progressWriter{ResponseWriter: w, extend: func(t time.Time) { _ = rc.SetWriteDeadline(t.Add(stall)) }}, r)
	})
}

// progress counts bytes and calls extend after every progressChunk.
type progress struct {
	pending int
	extend  func(now time.Time)
}

func (p *progress) add(n int) {
	p.pending += n
	if p.pending >= progressChunk {
		p.pending = 0
		p.extend(time.Now())
	}
}

type progressReader struct {
	io.ReadCloser
	extend func(now time.Time)
	p      progress
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	if r.p.extend == nil {
		r.p.extend = r.extend
	}
	r.p.add(n)
	return n, err
}

type progressWriter struct {
	http.ResponseWriter
	extend func(now time.Time)
	p      progress
}

func (w *progressWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if w.p.extend == nil {
		w.p.extend = w.extend
	}
	w.p.add(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines).
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
