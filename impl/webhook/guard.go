package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"

	"github.com/gobwas/glob"
)

// ErrForbiddenAddress is why a delivery to an address outside the
// allow-list fails.
var ErrForbiddenAddress = errors.New("address not allowed")

// AllowList is the reference's [webhook] ALLOWED_HOST_LIST: which
// addresses deliveries may connect to. It is applied to the address
// actually dialled (after DNS resolution, on every connection including
// each redirect), so a name that resolves, or later re-resolves, to an
// internal address gets no further than the dial.
type AllowList struct {
	all, external, loopback, private bool
	nets                             []netip.Prefix
	hosts                            []glob.Glob
}

// ParseAllowList reads a comma-separated list of "external", "loopback",
// "private", "*", CIDR ranges and host globs; empty means "external".
func ParseAllowList(s string) (*AllowList, error) {
	a := &AllowList{}
	if strings.TrimSpace(s) == "" {
		s = "external"
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		switch item {
		case "":
		case "*":
			a.all = true
		case "external":
			a.external = true
		case "loopback":
			a.loopback = true
		case "private":
			a.private = true
		default:
			if p, err := netip.ParsePrefix(item); err == nil {
				a.nets = append(a.nets, p.Masked())
				continue
			}
			g, err := glob.Compile(item)
			if err != nil {
				return nil, fmt.Errorf("webhook allowed hosts: bad pattern %q: %w", item, err)
			}
			a.hosts = append(a.hosts, g)
		}
	}
	return a, nil
}

// cgnat is the shared address space (RFC 6598), internal like RFC 1918.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func isPrivate(ip netip.Addr) bool { return ip.IsPrivate() || cgnat.Contains(ip) }

// isExternal is a public unicast address: not loopback, private,
// link-local (cloud metadata lives there), multicast or unspecified.
func isExternal(ip netip.Addr) bool {
	return ip.IsGlobalUnicast() && !isPrivate(ip)
}

// allows tells whether a connection to ip, reached by the name host, may
// be made.
func (a *AllowList) allows(host string, ip netip.Addr) bool {
	ip = ip.Unmap()
	switch {
	case a.all:
		return true
	case a.external && isExternal(ip):
		return true
	case a.loopback && ip.IsLoopback():
		return true
	case a.private && isPrivate(ip):
		return true
	}
	for _, p := range a.nets {
		if p.Contains(ip) {
			return true
		}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, g := range a.hosts {
		if g.Match(host) {
			return true
		}
	}
	return false
}

// DialContext dials like net.Dialer but refuses, at connect time, any
// address the list does not allow.
func (a *AllowList) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		guarded := *d
		guarded.Control = func(_, address string, _ syscall.RawConn) error {
			ipText, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(ipText)
			if err != nil {
				return err
			}
			if !a.allows(host, ip) {
				return fmt.Errorf("%w: %s resolves to %s, outside the webhook allow-list (--webhook-allowed-hosts)", ErrForbiddenAddress, host, ip)
			}
			return nil
		}
		return guarded.DialContext(ctx, network, addr)
	}
}
