package gitstore

import (
	"context"
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
)

// The two services of git's smart protocol.
const (
	ServiceUploadPack  = "git-upload-pack"
	ServiceReceivePack = "git-receive-pack"
)

// ErrProtocol means a git client sent something the protocol does not allow.
var ErrProtocol = errors.New("malformed git protocol request")

// fixedLoader hands go-git's server the repository already opened.
type fixedLoader struct{ sto storer.Storer }

func (l fixedLoader) Load(*transport.Endpoint) (storer.Storer, error) { return l.sto, nil }

func (g *GitRepo) server() (transport.Transport, *transport.Endpoint) {
	ep, _ := transport.NewEndpoint("/repository")
	return server.NewServer(fixedLoader{g.r.Storer}), ep
}

// AdvertiseReceivePack writes the smart-HTTP reference advertisement of
// receive-pack, "# service=..." header included: go-git's, asking pushers
// for self-contained packs (no-thin), which is what the pack writer stores.
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

func (g *GitRepo) advertiseReceivePack(ctx context.Context, smartHTTP bool, w io.Writer) error {
	srv, ep := g.server()
	sess, err := srv.NewReceivePackSession(ep, nil)
	if err != nil {
		return err
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	// go-git's session offers report-status, delete-refs and ofs-delta;
	// ReadPush also takes atomic pushes, push options and
	// report-status-v2. A thin pack is completed from the repository
	// (index-pack --fix-thin), yet clients are asked for self-contained
	// ones (no-thin), as before.
	for _, c := range []capability.Capability{capReportStatusV2, capability.Atomic, capability.PushOptions, "no-thin"} {
		if err := ar.Capabilities.Add(c); err != nil {
			return err
		}
	}
	if smartHTTP {
		ar.Prefix = [][]byte{[]byte("# service=" + ServiceReceivePack), pktline.Flush}
	}
	return ar.Encode(w)
}
