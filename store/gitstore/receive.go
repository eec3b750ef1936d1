package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/pktline"

	"github.com/go-git/go-git/v6/plumbing/protocol/capability"
	"github.com/go-git/go-git/v6/plumbing/protocol/packp"
)

// Push is one receive-pack request as read: its objects are stored, its
// ref updates not yet made.
type Push struct {
	// Updates are the reference updates the client asks for, in its
	// order. After a failed unpack every one is already refused.
	Updates []*RefUpdate
	// Atomic: the client asked for all the updates or none (git push
	// --atomic).
	Atomic bool
	// Options are the client's push options (git push -o), in its order.
	Options []string
	unpack  string
	report  bool
	// repo is the repository the push was read into: a view that sees
	// the quarantined objects and admits them when a ref moves.
	repo *GitRepo
	q    *quarantine
}

// Repo is the repository to apply the push's updates with (see
// impl/refs): it reads the pushed objects, which enter the repository
// itself only when one of the updates is made.
func (p *Push) Repo() *GitRepo { return p.repo }

// Close drops what is left of the push's quarantine: the objects of a
// push none of whose updates was made never reach the repository.
func (p *Push) Close() { p.q.remove() }

// Limits of the push options a push may carry (git's own receive-pack has
// none but the pkt-line size; these keep a request's memory bounded).
const (
	maxPushOptions     = 100
	maxPushOptionBytes = 64 << 10
)

// ReadPush reads a push (a receive-pack request) and stores the objects it
// sends. The ref updates are left to the caller (impl/refs decides and
// applies them through Repos.UpdateRefs), and WriteReport answers the
// client afterwards.
//
// A request that starts with a flush-pkt carries no commands: it is valid,
// asks for nothing and gets an empty answer (no report). Stock git sends
// exactly that ("0000") as a probe before streaming a pack larger than its
// http.postBuffer, and pushes only when the probe succeeds.
//
// go-git's receive-pack session is not used for this because it applies
// every command it gets, without a hook in between and without comparing a
// ref's old value before moving it.
func (g *GitRepo) ReadPush(ctx context.Context, body io.Reader) (*Push, error) {
	br := bufio.NewReader(body)
	if head, err := br.Peek(4); err == nil && string(head) == "0000" {
		return &Push{unpack: "ok", repo: g}, nil
	}
	req, err := readUpdateRequest(br, g.hexSize())
	if err != nil {
		return nil, err
	}
	p := &Push{Updates: req.updates, unpack: "ok", report: req.report, Atomic: req.atomic, repo: g}
	if req.pushOptions {
		if p.Options, err = readPushOptions(br); err != nil {
			return nil, err
		}
	}
	needPack := false
	for _, u := range p.Updates {
		needPack = needPack || !u.IsDelete()
	}
	// A shallow client's pack may stop at commits whose parents it lacks.
	// The server's repositories are complete, so that is harmless when
	// the server has those commits already; when it does not, taking the
	// push would leave history with holes (git's own receive-pack refuses
	// it the same way unless receive.shallowUpdate is set).
	shallowRefused := false
	for _, h := range req.shallow {
		if _, err := g.r.Storer.EncodedObject(plumbing.AnyObject, h); err != nil {
			shallowRefused = true
		}
	}
	connected := true
	if needPack && !shallowRefused {
		q, err := g.newQuarantine()
		if err != nil {
			return nil, err
		}
		p.q = q
		if p.repo, err = g.withQuarantine(q); err != nil {
			q.remove()
			return nil, err
		}
		if err := p.repo.unpack(ctx, br); err != nil {
			q.remove()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.unpack = "unpack failed: " + err.Error()
		} else {
			q.sto.Reindex()
			var tips []plumbing.Hash
			for _, u := range p.Updates {
				if !u.IsDelete() {
					tips = append(tips, u.New)
				}
			}
			if err := p.repo.checkConnected(ctx, tips); err != nil {
				if ctx.Err() != nil {
					q.remove()
					return nil, ctx.Err()
				}
				connected = false
			}
		}
	}
	if needPack {
		// Over a stream (SSH) the client closes its side after the pack;
		// a push that brings no pack (only deletions) sends nothing more
		// and waits for the report, so nothing is read after its commands.
		_, _ = io.Copy(io.Discard, br)
	}
	for _, u := range p.Updates {
		switch {
		case p.unpack != "ok":
			u.Err = refErr("unpacker error", ErrProtocol)
		case shallowRefused:
			u.Err = refErr("shallow update not allowed", ErrProtocol)
		case !connected && !u.IsDelete():
			u.Err = refErr("missing necessary objects", ErrProtocol)
		}
	}
	return p, nil
}

// unpackLimit is git's receive.unpackLimit default: a pack with fewer
// objects is exploded into loose objects, a larger one kept as a pack.
const unpackLimit = 100

// unpack stores the pack that r continues with, as git's receive-pack
// does: git unpack-objects for a small one, git index-pack --fix-thin for
// a larger one, each reading it as it arrives through a pipe, so the
// server holds a copy buffer whatever the pack's size. Only so many run
// at once (receiveSlots); the others wait.
func (g *GitRepo) unpack(ctx context.Context, r io.Reader) error {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("read the pack header: %w", err)
	}
	if string(hdr[:4]) != "PACK" {
		return errors.New("not a pack")
	}
	version, objects := binary.BigEndian.Uint32(hdr[4:8]), binary.BigEndian.Uint32(hdr[8:12])
	if g.receiveSlots != nil {
		if err := takeSlot(ctx, g.receiveSlots); err != nil {
			return err
		}
		defer func() { <-g.receiveSlots }()
	}
	packHeader := fmt.Sprintf("--pack_header=%d,%d", version, objects)
	args := []string{"--git-dir=" + g.path, "unpack-objects", "-q", packHeader}
	if objects >= unpackLimit {
		args = []string{"--git-dir=" + g.path, "index-pack", "--stdin", "--fix-thin", packHeader}
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.path}, g.q.env()...)
	cmd.Stdin = r
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, left: stderrKeep}
	// git stops reading at the pack's end; a client that keeps its side
	// open past it must not keep this request waiting for its input copy.
	cmd.WaitDelay = uploadPackWaitDelay
	// Ended early (the client hung up): SIGTERM, on which git removes
	// its temporary pack; WaitDelay kills it if it does not stop.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return fmt.Errorf("%v: %s", err, strings.TrimPrefix(msg, "fatal: "))
	}
	if g.q == nil {
		// The repository's view of its packs was taken before this one.
		g.reindex()
	}
	return nil
}

// slotWaitKey holds, in a context, what to call around a wait for a
// receive slot (WithSlotWait).
type slotWaitKey struct{}

// WithSlotWait returns ctx carrying waiting, which a push calls with true
// before it waits for a free receive slot and with false once it has one.
// While it waits it reads nothing of the client's pack, and a transport
// that ends stalled requests must not take the wait for the client's
// stall (the HTTP transport suspends its read deadline meanwhile).
func WithSlotWait(ctx context.Context, waiting func(bool)) context.Context {
	return context.WithValue(ctx, slotWaitKey{}, waiting)
}

// takeSlot puts a token into slots, waiting for room unless ctx ends first.
func takeSlot(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	if waiting, ok := ctx.Value(slotWaitKey{}).(func(bool)); ok {
		waiting(true)
		defer waiting(false)
	}
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limitedBuffer keeps the first left bytes written to it and drops the
// rest, so a chatty process cannot grow the server's memory.
type limitedBuffer struct {
	b    *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if k := min(len(p), l.left); k > 0 {
		l.b.Write(p[:k])
		l.left -= k
	}
	return len(p), nil
}

// updateRequest is the command part of a receive-pack request: the
// commits the client's history is cut at (a shallow clone's), the ref
// updates, and whether the client wants a report.
type updateRequest struct {
	shallow     []plumbing.Hash
	updates     []*RefUpdate
	report      bool
	atomic      bool
	pushOptions bool
}

// readUpdateRequest reads the command part of a receive-pack request, up
// to its flush-pkt, leaving r at the pack. Per git's pack-protocol, any
// number of "shallow <oid>" lines come first, then "<old> <new> <ref>"
// commands, the first carrying the capabilities after a NUL; every line
// may end in LF (stock git ends shallow lines with one, which go-git's
// decoder refuses, hence this reader).
func readUpdateRequest(r io.Reader, hexSize int) (*updateRequest, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, a...))
	}
	sc := pktline.NewScanner(r)
	req := &updateRequest{}
	first := true
	for {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, bad("%v", err)
			}
			return nil, bad("the request ends before its flush-pkt")
		}
		line := sc.Bytes()
		if len(line) == 0 { // flush-pkt
			break
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if rest, ok := bytes.CutPrefix(line, []byte("shallow ")); ok && len(req.updates) == 0 {
			h, ok := parseOID(rest, hexSize)
			if !ok {
				return nil, bad("invalid shallow line %q", line)
			}
			req.shallow = append(req.shallow, h)
			continue
		}
		if first {
			cmd, caps, found := bytes.Cut(line, []byte{0})
			if !found {
				return nil, bad("the first command carries no capabilities")
			}
			for _, c := range bytes.Fields(caps) {
				switch string(c) {
				case capability.ReportStatus, capReportStatusV2:
					req.report = true
				case capability.Atomic:
					req.atomic = true
				case capability.PushOptions:
					req.pushOptions = true
				}
			}
			line, first = cmd, false
		}
		parts := bytes.SplitN(line, []byte(" "), 3)
		if len(parts) != 3 || len(parts[2]) == 0 {
			return nil, bad("invalid command %q", line)
		}
		old, ok1 := parseOID(parts[0], hexSize)
		nw, ok2 := parseOID(parts[1], hexSize)
		if !ok1 || !ok2 || (old.IsZero() && nw.IsZero()) {
			return nil, bad("invalid command %q", line)
		}
		req.updates = append(req.updates, &RefUpdate{Name: plumbing.ReferenceName(parts[2]), Old: old, New: nw})
	}
	if len(req.updates) == 0 {
		return nil, bad("no commands")
	}
	return req, nil
}

// capReportStatusV2 is report-status-v2, which git clients prefer when it
// is advertised. Without proc-receive rewriting refs, its report is the
// same as report-status's.
const capReportStatusV2 = "report-status-v2"

// readPushOptions reads the push options that follow the commands of a
// client that asked for push-options, up to their flush-pkt.
func readPushOptions(r io.Reader) ([]string, error) {
	sc := pktline.NewScanner(r)
	var opts []string
	size := 0
	for {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
			}
			return nil, fmt.Errorf("%w: the push options end before their flush-pkt", ErrProtocol)
		}
		line := sc.Bytes()
		if len(line) == 0 {
			return opts, nil
		}
		size += len(line)
		if len(opts) == maxPushOptions || size > maxPushOptionBytes {
			return nil, fmt.Errorf("%w: too many push options", ErrProtocol)
		}
		opt := string(bytes.TrimSuffix(line, []byte("\n")))
		if strings.ContainsRune(opt, 0) {
			return nil, fmt.Errorf("%w: a push option contains a NUL", ErrProtocol)
		}
		opts = append(opts, opt)
	}
}

// parseOID reads a hexadecimal object id of hexSize digits (40 for
// SHA-1, 64 for SHA-256).
func parseOID(b []byte, hexSize int) (plumbing.Hash, bool) {
	if len(b) != hexSize {
		return plumbing.ZeroHash, false
	}
	if _, err := hex.Decode(make([]byte, len(b)/2), b); err != nil {
		return plumbing.ZeroHash, false
	}
	return plumbing.FromHex(string(b))
}

// WriteReport writes the report-status the client asked for (nothing when
// it did not): refused updates appear as "ng" with their reason.
func (p *Push) WriteReport(w io.Writer) error {
	if !p.report {
		return nil
	}
	rs := &packp.ReportStatus{}
	rs.UnpackStatus = p.unpack
	for _, u := range p.Updates {
		status := "ok"
		if u.Err != nil {
			status = u.Err.Error()
		}
		rs.CommandStatuses = append(rs.CommandStatuses, &packp.CommandStatus{ReferenceName: u.Name, Status: status})
	}
	return rs.Encode(w)
}
