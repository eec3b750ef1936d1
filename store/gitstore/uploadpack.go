package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"repohost/store"
)

// UploadPackMode says which part of a fetch `git upload-pack` serves.
type UploadPackMode int

const (
	// UploadPackStream is a whole session over one stream (git over SSH):
	// the advertisement, the negotiation and the pack.
	UploadPackStream UploadPackMode = iota
	// UploadPackAdvertise is the smart-HTTP reference advertisement
	// (GET info/refs?service=git-upload-pack), "# service=" header
	// included.
	UploadPackAdvertise
	// UploadPackRequest is one stateless smart-HTTP request (POST
	// git-upload-pack): a negotiation round, or the pack after "done".
	UploadPackRequest
)

// uploadPackSlots bounds the stateless `git upload-pack` requests (the
// ones that build packs over HTTP) a Store runs at once: a clone is CPU-
// and memory-bound in git, and many more of them than the machine has
// cores only makes every one slower. The ones past the bound wait (for as
// long as their context allows). An HTTP request cannot stall for long
// (the server's stall timeout), so a slot is always given back; a session
// over SSH waits on its client for as long as the client likes, so it
// takes none (the advertisement, quick and cheap, takes none either).
func uploadPackSlots() int { return max(4, 2*runtime.NumCPU()) }

// uploadPackWaitDelay is how long a finished or killed upload-pack may
// leave its standard input copy running (a client that stops sending)
// before the process's pipes are closed.
const uploadPackWaitDelay = 5 * time.Second

// stderrKeep bounds what is kept of upload-pack's standard error for the
// log.
const stderrKeep = 4 << 10

// UploadPack serves a fetch or clone of owner/name with git's own `git
// upload-pack` on the bare repository: git's pack building (stored deltas
// reused, no delta search per request) and its negotiation, shallow
// requests included. It only reads the repository. in is the client's
// request (nil for UploadPackAdvertise), out receives git's answer as it
// is produced, and clientErr, when not nil, git's messages for the client
// (over SSH, the channel's stderr). Cancelling ctx kills the process. A missing repository is
// store.ErrNotFound, with nothing written; a request git calls a protocol
// error is ErrProtocol (with git's one-line reason, which quotes only the
// request); any other failure is an error carrying the end of git's
// standard error, for the log only.
//
// protocol is what the client asked for in its Git-Protocol header (HTTP)
// or GIT_PROTOCOL variable (SSH), "" for none: git's own value
// ("version=2"), passed on to git as GIT_PROTOCOL when ValidProtocol
// accepts it and ignored otherwise, so git speaks the version the client
// asked for in the advertisement and the requests after it alike. A
// version 2 advertisement over smart HTTP has no "# service=" header, as
// git http-backend sends it.
//
// Partial clones are served (uploadpack.allowFilter), and so are the
// lazy fetches of the objects such a clone left out, which want objects
// no ref points at: any object a ref reaches may be wanted
// (uploadpack.allowReachableSHA1InWant), never one no ref reaches.
func (s *Store) UploadPack(ctx context.Context, owner, name string, mode UploadPackMode, protocol string, in io.Reader, out, clientErr io.Writer) error {
	dir, err := s.Path(owner, name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	if !ValidProtocol(protocol) {
		protocol = ""
	}
	args := []string{"-c", "uploadpack.allowFilter=true", "-c", "uploadpack.allowReachableSHA1InWant=true",
		"upload-pack", "--strict"}
	switch mode {
	case UploadPackStream:
	case UploadPackAdvertise:
		args = append(args, "--stateless-rpc", "--advertise-refs")
	case UploadPackRequest:
		args = append(args, "--stateless-rpc")
	default:
		return fmt.Errorf("upload-pack mode %d", mode)
	}
	args = append(args, dir)

	if mode == UploadPackRequest {
		select {
		case s.uploadSlots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-s.uploadSlots }()
	}

	if mode == UploadPackAdvertise && !isV2(protocol) {
		const header = "# service=" + ServiceUploadPack + "\n"
		if _, err := fmt.Fprintf(out, "%04x%s0000", len(header)+4, header); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	// No system or user configuration: the repository's own is all that
	// applies.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
	if protocol != "" {
		cmd.Env = append(cmd.Env, "GIT_PROTOCOL="+protocol)
	}
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout = in, out
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if clientErr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, clientErr)
	}
	cmd.WaitDelay = uploadPackWaitDelay
	err = cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("git upload-pack: %w (%v)", ctx.Err(), err)
	}
	msg := strings.TrimSpace(stderr.String())
	if line := protocolError(msg); line != "" && mode != UploadPackAdvertise {
		// What the client sent is at fault, and git says what: its
		// message quotes only the request.
		return fmt.Errorf("%w: %s", ErrProtocol, line)
	}
	if msg != "" {
		return fmt.Errorf("git upload-pack: %w: %s", err, msg)
	}
	return fmt.Errorf("git upload-pack: %w", err)
}

// maxProtocol bounds a GIT_PROTOCOL value (git sends "version=2").
const maxProtocol = 256

// ValidProtocol tells whether v has the shape of the GIT_PROTOCOL value
// git clients send: colon-separated key=value (or bare key) items of
// letters, digits and ".-_", such as "version=2". Anything else is not
// passed to git.
func ValidProtocol(v string) bool {
	if v == "" || len(v) > maxProtocol {
		return false
	}
	for _, item := range strings.Split(v, ":") {
		key, value, _ := strings.Cut(item, "=")
		if key == "" || !protocolWord(key) || !protocolWord(value) {
			return false
		}
	}
	return true
}

func protocolWord(w string) bool {
	for _, c := range w {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}

// isV2 tells whether a valid protocol value asks for version 2 (git takes
// the highest version listed).
func isV2(protocol string) bool {
	for _, item := range strings.Split(protocol, ":") {
		if item == "version=2" {
			return true
		}
	}
	return false
}

// protocolError returns the line of git's standard error that reports a
// malformed request ("fatal: protocol error: bad line length character"),
// without its "fatal: ", or "".
func protocolError(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "protocol error") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "fatal: ")
			if len(line) > 200 {
				line = line[:200]
			}
			return line
		}
	}
	return ""
}

// tailBuffer keeps the last stderrKeep bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > stderrKeep {
		p = p[len(p)-stderrKeep:]
	}
	t.buf.Write(p)
	if over := t.buf.Len() - stderrKeep; over > 0 {
		t.buf.Next(over)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
