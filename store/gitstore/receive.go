package gitstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
)

// Push is one receive-pack request as read: its objects are stored, its
// ref updates not yet made.
type Push struct {
	// Updates are the reference updates the client asks for, in its
	// order. After a failed unpack every one is already refused.
	Updates []*RefUpdate
	unpack  string
	report  bool
}

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
func (g *GitRepo) ReadPush(body io.Reader) (*Push, error) {
	br := bufio.NewReader(body)
	if head, err := br.Peek(4); err == nil && string(head) == "0000" {
		return &Push{unpack: "ok"}, nil
	}
	req := packp.NewReferenceUpdateRequest()
	if err := req.Decode(br); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	p := &Push{Updates: make([]*RefUpdate, 0, len(req.Commands)), unpack: "ok",
		report: req.Capabilities.Supports(capability.ReportStatus)}
	needPack := false
	for _, cmd := range req.Commands {
		p.Updates = append(p.Updates, &RefUpdate{Name: cmd.Name, Old: cmd.Old, New: cmd.New})
		needPack = needPack || !cmd.New.IsZero()
	}
	if needPack && req.Packfile != nil {
		mark := g.fs.mark()
		if err := packfile.UpdateObjectStorage(g.r.Storer, req.Packfile); err != nil && !errors.Is(err, packfile.ErrEmptyPackfile) {
			p.unpack = "unpack failed: " + err.Error()
			g.fs.removeTempsSince(mark)
		}
	}
	if needPack && req.Packfile != nil {
		// Over a stream (SSH) the client closes its side after the pack;
		// a push that brings no pack (only deletions) sends nothing more
		// and waits for the report, so nothing is read after its commands.
		_, _ = io.Copy(io.Discard, req.Packfile)
	}
	if p.unpack != "ok" {
		for _, u := range p.Updates {
			u.Err = refErr("unpacker error", ErrProtocol)
		}
	}
	return p, nil
}

// WriteReport writes the report-status the client asked for (nothing when
// it did not): refused updates appear as "ng" with their reason.
func (p *Push) WriteReport(w io.Writer) error {
	if !p.report {
		return nil
	}
	rs := packp.NewReportStatus()
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
