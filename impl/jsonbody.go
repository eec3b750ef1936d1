package impl

import (
	"bytes"
	"errors"
	"io"
	"repohost/impl/apierr"

	"github.com/go-openapi/runtime"
)

// errNULInBody is the reason a body holding a NUL character is refused.
const errNULInBody = "[]: text must not contain NUL characters"

// jsonConsumer decodes request bodies like go-openapi's, but refuses text
// holding a NUL character: PostgreSQL cannot store it and SQLite would, so
// refusing it up front gives one answer (422) on both databases.
// Bodies over maxBodyBytes are refused before they are parsed instead of
// filling memory.
func jsonConsumer(maxBodyBytes int64) runtime.Consumer {
	std := runtime.JSONConsumer()
	return runtime.ConsumerFunc(func(r io.Reader, v any) error {
		raw, err := readBody(r, maxBodyBytes)
		if err != nil {
			// A timeout or a dropped connection; its text would name
			// addresses, so the client is told only what happened.
			return errors.New("[]: the request body could not be read completely")
		}
		if int64(len(raw)) > maxBodyBytes {
			return apierr.PayloadTooLarge("request body is larger than the %d bytes this server accepts", maxBodyBytes)
		}
		if hasEscapedNUL(raw) {
			return errors.New(errNULInBody)
		}
		return std.Consume(bytes.NewReader(raw), v)
	})
}

// readBody reads at most limit+1 bytes of r. A body whose length the
// bodyBudget middleware passed along is read into one buffer of that size:
// io.ReadAll would grow its buffer by doubling, allocating about twice the
// body on the way.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	sized, ok := r.(interface{ Size() int64 })
	if !ok || sized.Size() <= 0 || sized.Size() > limit {
		return io.ReadAll(io.LimitReader(r, limit+1))
	}
	raw := make([]byte, sized.Size()+1)
	n, err := io.ReadFull(r, raw)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return raw[:n], nil // the whole body, as declared (or shorter)
	case err != nil:
		return nil, err
	}
	// More than declared: read on to the limit so the caller refuses it.
	rest, err := io.ReadAll(io.LimitReader(r, limit+1-int64(n)))
	return append(raw, rest...), err
}

// hasEscapedNUL finds a \u0000 escape in JSON text: a backslash-u that is
// itself preceded by an even number of backslashes.
func hasEscapedNUL(raw []byte) bool {
	for i := 0; ; {
		j := bytes.Index(raw[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		at := i + j
		slashes := 0
		for k := at - 1; k >= 0 && raw[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		i = at + 1
	}
}
