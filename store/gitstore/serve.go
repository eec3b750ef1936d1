package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/format/pktline"
	"github.com/go-git/go-git/v6/plumbing/protocol/capability"
	"github.com/go-git/go-git/v6/plumbing/protocol/packp"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// The two services of git's smart protocol.
const (
	ServiceUploadPack  = "git-upload-pack"
	ServiceReceivePack = "git-receive-pack"
)

// ErrProtocol means a git client sent something the protocol does not allow.
var ErrProtocol = errors.New("malformed git protocol request")

// AdvertiseReceivePack writes the smart-HTTP reference advertisement of
// receive-pack, "# service=..." header included, asking pushers for
// self-contained packs (no-thin), which is what the pack writer stores.
// Fetches are advertised and served by git's own upload-pack (see
// Store.UploadPack).
func (g *GitRepo) AdvertiseReceivePack(ctx context.Context, w io.Writer) error {
	return g.advertiseReceivePack(ctx, true, w)
}

// AdvertiseReceivePackStream writes the reference advertisement that
// starts a push over a stream (git over SSH): AdvertiseReceivePack without
// the smart-HTTP header.
func (g *GitRepo) AdvertiseReceivePackStream(ctx context.Context, w io.Writer) error {
	return g.advertiseReceivePack(ctx, false, w)
}

// advertiseReceivePack builds the advertisement with go-git's packp
// encoder: every branch, tag and other reference, HEAD first (with its
// symref), and the capabilities ReadPush handles: report-status (and -v2),
// delete-refs, ofs-delta, atomic, push-options, no-thin (a thin pack would
// be completed from the repository, yet clients are asked for
// self-contained ones) and the repository's object-format, without which
// a git client refuses to push a SHA-256 repository.
func (g *GitRepo) advertiseReceivePack(ctx context.Context, smartHTTP bool, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ar := &packp.AdvRefs{}
	ar.Capabilities.Set(capability.Agent, capability.DefaultAgent())
	for _, c := range []capability.Capability{capability.ReportStatus, capReportStatusV2, capability.DeleteRefs, capability.OFSDelta, capability.Atomic, capability.PushOptions, capability.NoThin} {
		ar.Capabilities.Set(c)
	}
	format := g.ObjectFormat()
	ar.Capabilities.Set(capability.ObjectFormat, format)
	refs, err := g.r.Storer.IterReferences()
	if err != nil {
		return err
	}
	var head *plumbing.Reference
	if err := refs.ForEach(func(r *plumbing.Reference) error {
		switch {
		case r.Name() == plumbing.HEAD:
			if r.Type() != plumbing.SymbolicReference {
				return nil
			}
			t, err := storer.ResolveReference(g.r.Storer, r.Target())
			if errors.Is(err, plumbing.ErrReferenceNotFound) {
				return nil // unborn
			} else if err != nil {
				return err
			}
			ar.Capabilities.Set(capability.SymRef, plumbing.HEAD.String()+":"+t.Name().String())
			head = plumbing.NewHashReference(plumbing.HEAD, t.Hash())
		case r.Type() == plumbing.HashReference && r.Name().IsUnderRefs():
			ar.References = append(ar.References, r)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Slice(ar.References, func(i, j int) bool { return ar.References[i].Name() < ar.References[j].Name() })
	if head != nil {
		ar.References = append([]*plumbing.Reference{head}, ar.References...)
	}
	if smartHTTP {
		if err := (&packp.SmartReply{Service: ServiceReceivePack}).Encode(w); err != nil {
			return err
		}
	}
	if len(ar.References) == 0 {
		// packp writes a SHA-1 zero id before "capabilities^{}"; a
		// client reads that id in the object format advertised.
		if _, err := pktline.WriteString(w, fmt.Sprintf("%s capabilities^{}\x00%s\n", ZeroID(format), ar.Capabilities.String())); err != nil {
			return err
		}
		return pktline.WriteFlush(w)
	}
	return ar.Encode(w)
}
