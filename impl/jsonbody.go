package impl

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-openapi/runtime"
)

var (
	errNULInBody  = errors.New("[]: text must not contain NUL characters")
	errBodyTooBig = errors.New("[]: request body is too large")
)

// jsonConsumer decodes request bodies like go-openapi's, but refuses text
// holding a NUL character: PostgreSQL cannot store it and SQLite would, so
// refusing it up front gives one answer (422) on both databases.
// Bodies over maxBodyBytes are refused before they are parsed instead of
// filling memory.
func jsonConsumer(maxBodyBytes int64) runtime.Consumer {
	std := runtime.JSONConsumer()
	return runtime.ConsumerFunc(func(r io.Reader, v any) error {
		raw, err := io.ReadAll(io.LimitReader(r, maxBodyBytes+1))
		if err != nil {
			return err
		}
		if int64(len(raw)) > maxBodyBytes {
			return errBodyTooBig
		}
		if hasEscapedNUL(raw) {
			return errNULInBody
		}
		return std.Consume(bytes.NewReader(raw), v)
	})
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
