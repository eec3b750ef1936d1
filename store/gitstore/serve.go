package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
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

// AdvertiseRefs writes the smart-HTTP reference advertisement of service,
// "# service=..." header included. Beyond go-git's own capabilities it
// offers multi_ack_detailed for fetches (negotiated in UploadPack), and asks
// pushers for self-contained packs (no-thin), which is what the pack writer
// stores.
func (g *GitRepo) AdvertiseRefs(ctx context.Context, service string, w io.Writer) error {
	return g.advertise(ctx, service, true, w)
}

// AdvertiseRefsStream writes the reference advertisement that starts a
// session over a stream (git over SSH): AdvertiseRefs without the
// smart-HTTP header.
func (g *GitRepo) AdvertiseRefsStream(ctx context.Context, service string, w io.Writer) error {
	return g.advertise(ctx, service, false, w)
}

func (g *GitRepo) advertise(ctx context.Context, service string, smartHTTP bool, w io.Writer) error {
	srv, ep := g.server()
	var ar *packp.AdvRefs
	switch service {
	case ServiceUploadPack:
		sess, err := srv.NewUploadPackSession(ep, nil)
		if err != nil {
			return err
		}
		if ar, err = sess.AdvertisedReferencesContext(ctx); err != nil {
			return err
		}
		if err := ar.Capabilities.Add(capability.MultiACKDetailed); err != nil {
			return err
		}
		g.peelTags(ar)
	case ServiceReceivePack:
		sess, err := srv.NewReceivePackSession(ep, nil)
		if err != nil {
			return err
		}
		if ar, err = sess.AdvertisedReferencesContext(ctx); err != nil {
			return err
		}
		if err := ar.Capabilities.Add(capability.Capability("no-thin")); err != nil {
			return err
		}
	default:
		return fmt.Errorf("service %q: %w", service, ErrProtocol)
	}
	if smartHTTP {
		ar.Prefix = [][]byte{[]byte("# service=" + service), pktline.Flush}
	}
	return ar.Encode(w)
}

// peelTags adds the commit each annotated tag points at, so clients can
// follow tags that point into what they fetch.
func (g *GitRepo) peelTags(ar *packp.AdvRefs) {
	for name, h := range ar.References {
		if !strings.HasPrefix(name, "refs/tags/") {
			continue
		}
		if t, err := g.r.TagObject(h); err == nil {
			if c, err := g.peel(t.Target); err == nil {
				ar.Peeled[name] = c.Hash
			}
		}
	}
}

// UploadPack answers one stateless upload-pack request (a fetch or clone
// round). go-git's server builds the pack; the negotiation before it is done
// here, because go-git answers every request with a pack and would confuse
// a client still exchanging "have" lines.
//
// Per round the client sends its wants, some haves and either a flush (more
// rounds to come) or "done". With multi_ack_detailed every have we also
// have is acknowledged as common; a round without "done" ends with NAK. On
// "done" the last common commit is acknowledged (NAK without one) and the
// pack follows, leaving out what the common commits already give the client.
func (g *GitRepo) UploadPack(ctx context.Context, body io.Reader, w io.Writer) error {
	req := packp.NewUploadPackRequest()
	if err := req.UploadRequest.Decode(body); err != nil {
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	haves, done, err := readHaves(body)
	if err != nil {
		return err
	}
	detailed := req.Capabilities.Supports(capability.MultiACKDetailed)
	out := pktline.NewEncoder(w)
	var common []plumbing.Hash
	for _, h := range haves {
		if g.r.Storer.HasEncodedObject(h) != nil {
			continue
		}
		common = append(common, h)
		switch {
		case detailed:
			err = out.Encodef("ACK %s common\n", h)
		case len(common) == 1:
			err = out.Encodef("ACK %s\n", h)
		}
		if err != nil {
			return err
		}
	}
	if !done {
		if len(common) == 0 || detailed {
			return out.Encodef("NAK\n")
		}
		return nil
	}
	switch {
	case len(common) == 0:
		err = out.Encodef("NAK\n")
	case detailed:
		err = out.Encodef("ACK %s\n", common[len(common)-1])
	}
	if err != nil {
		return err
	}
	// go-git's session accepts only the capabilities it implements; the
	// negotiation ones were handled above.
	caps := capability.NewList()
	for _, c := range []capability.Capability{capability.OFSDelta, capability.Agent} {
		if req.Capabilities.Supports(c) {
			_ = caps.Set(c, req.Capabilities.Get(c)...)
		}
	}
	req.Capabilities = caps
	req.Haves = common
	srv, ep := g.server()
	sess, err := srv.NewUploadPackSession(ep, nil)
	if err != nil {
		return err
	}
	resp, err := sess.UploadPack(ctx, req)
	if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
		// Everything wanted is already common: an empty pack says so.
		return writeEmptyPack(w)
	}
	if err != nil {
		return err
	}
	defer resp.Close()
	// Only the pack: the acknowledgements are written above.
	_, err = io.Copy(w, resp)
	return err
}

// readHaves reads the "have" lines after the wants, until "done" (done is
// true) or the end of the request.
func readHaves(body io.Reader) (haves []plumbing.Hash, done bool, err error) {
	s := pktline.NewScanner(body)
	for s.Scan() {
		line := strings.TrimSuffix(string(s.Bytes()), "\n")
		switch {
		case line == "":
			// A flush between groups of haves.
		case line == "done":
			return haves, true, nil
		case strings.HasPrefix(line, "have "):
			hex := strings.TrimPrefix(line, "have ")
			if !isHex(hex) || (len(hex) != 40 && len(hex) != 64) {
				return nil, false, fmt.Errorf("%w: bad have line", ErrProtocol)
			}
			haves = append(haves, plumbing.NewHash(hex))
		default:
			return nil, false, fmt.Errorf("%w: unexpected line %q", ErrProtocol, line)
		}
	}
	if err := s.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	return haves, false, nil
}

// writeEmptyPack writes a pack with no objects.
func writeEmptyPack(w io.Writer) error {
	// "PACK", version 2, zero objects, then the SHA-1 of those 12 bytes.
	pack := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0,
		0x02, 0x9d, 0x08, 0x82, 0x3b, 0xd8, 0xa8, 0xea, 0xb5, 0x10,
		0xad, 0x6a, 0xc7, 0x5c, 0x82, 0x3c, 0xfd, 0x3e, 0xd3, 0x1e}
	_, err := w.Write(pack)
	return err
}
