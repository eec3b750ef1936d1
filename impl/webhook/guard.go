package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
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
	// blocked, when set, is checked first: what it matches is refused
	// whatever the rest allows (the reference's [migrations]
	// BLOCKED_DOMAINS).
	blocked *AllowList
	// setting names the setting a refusal points at.
	setting string
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
	if a.blocked != nil && a.blocked.allows(host, ip) {
		return false
	}
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
			return a.check(host, ip)
		}
		return guarded.DialContext(ctx, network, addr)
	}
}

func (a *AllowList) check(host string, ip netip.Addr) error {
	if a.allows(host, ip) {
		return nil
	}
	setting := a.setting
	if setting == "" {
		setting = "the webhook allow-list (--webhook-allowed-hosts)"
	}
	return fmt.Errorf("%w: %s resolves to %s, outside %s", ErrForbiddenAddress, host, ip, setting)
}

// ParseMigrationGuard is the reference's [migrations] settings as one
// list: allowed are host globs and CIDR ranges (empty: any external
// address), blocked the same refused before anything else, and
// allowLocal adds loopback and private addresses.
func ParseMigrationGuard(allowed, blocked string, allowLocal bool) (*AllowList, error) {
	a, err := ParseAllowList(allowed)
	if err != nil {
		return nil, err
	}
	a.setting = "the migration allow-list (--migrations-allowed-domains, --migrations-blocked-domains, --migrations-allow-local-networks)"
	if allowLocal {
		a.loopback, a.private = true, true
	}
	if strings.TrimSpace(blocked) != "" {
		b, err := ParseAllowList(blocked)
		if err != nil {
			return nil, err
		}
		a.blocked = b
	}
	return a, nil
}

// ErrNotRemote is why a clone address that is not an http(s) URL (a
// local path, file://, ssh, git://) is refused.
var ErrNotRemote = errors.New("only http and https addresses may be cloned from or pushed to")

// CheckHost resolves host and returns the first address the list allows;
// any address it does not allow fails the whole name, so a name cannot
// point at an internal address beside a public one.
func (a *AllowList) CheckHost(ctx context.Context, host string) (netip.Addr, error) {
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ips = []netip.Addr{ip}
	} else {
		if ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return netip.Addr{}, err
		}
	}
	if len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("%s has no address", host)
	}
	for _, ip := range ips {
		if err := a.check(host, ip); err != nil {
			return netip.Addr{}, err
		}
	}
	return ips[0].Unmap(), nil
}

// GitConfig is the git -c settings that keep one git command talking to
// the http(s) remote rawURL through the list: the host is resolved and
// checked here and pinned (http.curloptResolve), so git cannot resolve
// it to another address; redirects are not followed and every transport
// but http and https is off (no file://, ssh, ext:: or local paths).
func (a *AllowList) GitConfig(ctx context.Context, rawURL string) ([]string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrNotRemote
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	ip, err := a.CheckHost(ctx, host)
	if err != nil {
		return nil, err
	}
	var args []string
	if _, err := netip.ParseAddr(host); err != nil {
		addr := ip.String()
		if ip.Is6() {
			addr = "[" + addr + "]"
		}
		args = append(args, "-c", "http.curloptResolve="+host+":"+port+":"+addr)
	}
	return append(args,
		"-c", "http.followRedirects=false",
		"-c", "http.proxy=",
		"-c", "protocol.allow=never",
		"-c", "protocol.https.allow=always",
		"-c", "protocol.http.allow=always",
		"-c", "credential.helper=",
		"-c", "core.askPass=",
	), nil
}
