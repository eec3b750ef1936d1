package packages

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"repohost/impl/apierr"
)

// npm publish sends one JSON document: the version's package.json under
// "versions" and the tarball, base64-encoded, as the "data" string of its
// entry under "_attachments". encoding/json reads a string value whole, so
// the document is walked here instead: every value but the attachment's
// data is captured (within a budget) and decoded with encoding/json, and
// the data string is decoded from base64 as it is read, straight into the
// caller's writer. Memory stays at the budget whatever the tarball's size.

// npmDocReader walks a publish document.
type npmDocReader struct {
	r *bufio.Reader
	// budget is what may still be read outside the attachment data.
	budget int64
}

// errNpmDocTooLarge is the document's metadata past its budget.
var errNpmDocTooLarge = errors.New("the package document's metadata is too large")

// readNpmPublish reads a publish document from r into doc (the tarball's
// data left empty), copying the single attachment's decoded bytes to
// tarball. The parts other than that data may take at most budget bytes.
// A document that is not JSON, or that does not have exactly one
// attachment whose data is a base64 string, is a 400.
func readNpmPublish(r io.Reader, budget int64, doc *npmPublishDoc, tarball io.Writer) error {
	d := &npmDocReader{r: bufio.NewReaderSize(r, 64<<10), budget: budget}
	attachments := 0
	err := d.object(func(key string) error {
		switch key {
		case "_attachments":
			return d.attachments(doc, tarball, &attachments)
		case "name", "dist-tags", "versions":
			raw, err := d.value(true)
			if err != nil {
				return err
			}
			field := map[string]any{"name": &doc.Name, "dist-tags": &doc.DistTags, "versions": &doc.Versions}[key]
			if err := json.Unmarshal(raw, field); err != nil {
				return apierr.BadRequest("invalid package document: %s: %v", key, err)
			}
			return nil
		}
		_, err := d.value(false)
		return err
	})
	if err != nil {
		return err
	}
	if attachments != 1 {
		return apierr.BadRequest("the document must hold exactly one tarball")
	}
	if b, err := d.nonSpace(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("unexpected %q after the document", b)
		}
		return apierr.BadRequest("invalid package document: %v", err)
	}
	return nil
}

// attachments reads the "_attachments" object: each entry an object whose
// "data" is streamed to tarball.
func (d *npmDocReader) attachments(doc *npmPublishDoc, tarball io.Writer, count *int) error {
	doc.Attachments = map[string]struct {
		Data string `json:"data"`
	}{}
	return d.object(func(name string) error {
		*count++
		if *count > 1 {
			return apierr.BadRequest("the document must hold exactly one tarball")
		}
		doc.Attachments[name] = struct {
			Data string `json:"data"`
		}{}
		b, err := d.nonSpace()
		if err != nil {
			return d.bad(err)
		}
		if b != '{' {
			return apierr.BadRequest("the attachment %q is not an object with data", name)
		}
		if err := d.r.UnreadByte(); err != nil {
			return err
		}
		sawData := false
		err = d.object(func(key string) error {
			if key != "data" {
				_, err := d.value(false)
				return err
			}
			if sawData {
				return apierr.BadRequest("the attachment has two data fields")
			}
			sawData = true
			return d.base64String(tarball)
		})
		if err == nil && !sawData {
			return apierr.BadRequest("the attachment %q has no data", name)
		}
		return err
	})
}

// object reads a JSON object, calling field for each key with the reader
// positioned at the key's value, which field must consume.
func (d *npmDocReader) object(field func(key string) error) error {
	b, err := d.nonSpace()
	if err != nil {
		return d.bad(err)
	}
	if b != '{' {
		return apierr.BadRequest("invalid package document: expected an object")
	}
	first := true
	for {
		b, err := d.nonSpace()
		if err != nil {
			return d.bad(err)
		}
		if b == '}' && first {
			return nil
		}
		if !first {
			if b == '}' {
				return nil
			}
			if b != ',' {
				return apierr.BadRequest("invalid package document: expected , or }")
			}
			if b, err = d.nonSpace(); err != nil {
				return d.bad(err)
			}
		}
		first = false
		if b != '"' {
			return apierr.BadRequest("invalid package document: expected a key")
		}
		if err := d.r.UnreadByte(); err != nil {
			return err
		}
		raw, err := d.value(true)
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(raw, &key); err != nil {
			return apierr.BadRequest("invalid package document: %v", err)
		}
		if b, err := d.nonSpace(); err != nil || b != ':' {
			return apierr.BadRequest("invalid package document: expected :")
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// value reads one JSON value (checking only its nesting and strings;
// encoding/json checks the rest of what is kept) and returns its bytes
// when keep is set. Everything read counts against the budget.
func (d *npmDocReader) value(keep bool) ([]byte, error) {
	var out []byte
	next := func() (byte, error) {
		b, err := d.r.ReadByte()
		if err != nil {
			return 0, d.bad(err)
		}
		if d.budget--; d.budget < 0 {
			return 0, errNpmDocTooLarge
		}
		if keep {
			out = append(out, b)
		}
		return b, nil
	}
	b, err := d.nonSpace()
	if err != nil {
		return nil, d.bad(err)
	}
	if keep {
		out = append(out, b)
	}
	switch b {
	case '"', '{', '[':
		depth, inString, escaped := 0, b == '"', false
		if !inString {
			depth = 1
		}
		for inString || depth > 0 {
			if b, err = next(); err != nil {
				return nil, err
			}
			switch {
			case escaped:
				escaped = false
			case inString && b == '\\':
				escaped = true
			case b == '"':
				inString = !inString
			case inString:
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				depth--
			}
		}
		return out, nil
	case '}', ']', ',', ':':
		return nil, apierr.BadRequest("invalid package document: unexpected %q", b)
	}
	// A number, true, false or null: up to the next delimiter, which is
	// left to the caller.
	for {
		p, err := d.r.Peek(1)
		if err != nil {
			return nil, d.bad(err)
		}
		if c := p[0]; c == ',' || c == '}' || c == ']' || isSpace(c) {
			return out, nil
		}
		if _, err := next(); err != nil {
			return nil, err
		}
	}
}

// base64String streams a JSON string of base64 to w, decoded.
func (d *npmDocReader) base64String(w io.Writer) error {
	b, err := d.nonSpace()
	if err != nil {
		return d.bad(err)
	}
	if b != '"' {
		return apierr.BadRequest("the attachment's data is not a string")
	}
	s := &jsonStringReader{r: d.r}
	if _, err := io.Copy(w, base64.NewDecoder(base64.StdEncoding, s)); err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) || errors.Is(err, errBadEscape) {
			return apierr.BadRequest("invalid tarball encoding")
		}
		return err
	}
	if !s.done {
		return apierr.BadRequest("invalid tarball encoding")
	}
	return nil
}

var errBadEscape = errors.New("unexpected escape in base64 data")

// jsonStringReader yields the characters of a JSON string whose opening
// quote was read, up to its closing quote (then io.EOF). Base64 needs no
// escapes but "\/", which some encoders write for "/".
type jsonStringReader struct {
	r    *bufio.Reader
	done bool
}

func (s *jsonStringReader) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		if n > 0 && s.r.Buffered() == 0 {
			break // hand over what is there rather than block
		}
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		switch b {
		case '"':
			s.done = true
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		case '\\':
			e, err := s.r.ReadByte()
			if err != nil {
				return n, io.ErrUnexpectedEOF
			}
			switch e {
			case '/':
				b = '/'
			case 'n', 'r':
				continue // line breaks, which base64 decoding skips
			default:
				return n, errBadEscape
			}
		}
		p[n] = b
		n++
	}
	return n, nil
}

func (d *npmDocReader) nonSpace() (byte, error) {
	for {
		b, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if d.budget--; d.budget < 0 {
			return 0, errNpmDocTooLarge
		}
		if !isSpace(b) {
			return b, nil
		}
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// bad is a read failure as the client's error: the document ended early
// or was not JSON. A failure of the body itself (a limit, a dropped
// connection) is passed on for UploadError.
func (d *npmDocReader) bad(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apierr.BadRequest("invalid package document: unexpected end")
	}
	return err
}
