// Package gitssh serves git over SSH (clone, fetch and push of
// owner/repo.git) with a built-in SSH server. Users authenticate with
// their SSH keys, machines with deploy keys; what they may do is decided
// by the same githttp.Transport as for smart HTTP.
package gitssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/githttp"
	"repohost/impl/lfs"
	"repohost/store"
	"repohost/store/gitstore"
)

// Server is the SSH server.
type Server struct {
	d      *app.Deps
	git    *githttp.Transport
	lfs    *lfs.Service
	config *ssh.ServerConfig

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	// preAuth counts, per source address, the connections still in their
	// handshake or authentication.
	preAuth map[string]int
	wg      sync.WaitGroup
}

// Extensions of ssh.Permissions naming who authenticated.
const (
	extUserID      = "repohost-user-id"
	extUserKey     = "repohost-user-key"
	extFingerprint = "repohost-deploy-key"
)

// HostKeyFile is where the server's host key lives under the data
// directory; it is made on first start and kept, so clients see the same
// host key every time.
const HostKeyFile = "ssh/host_ed25519_key"

// LoadHostKey reads the host key under dataDir, generating it first when
// there is none.
func LoadHostKey(dataDir string) (ssh.Signer, error) {
	path := filepath.Join(dataDir, HostKeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, gerr := ed25519.GenerateKey(rand.Reader)
		if gerr != nil {
			return nil, gerr
		}
		block, merr := ssh.MarshalPrivateKey(priv, "repohost host key")
		if merr != nil {
			return nil, merr
		}
		raw = pem.EncodeToMemory(block)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		// Written whole under another name, then linked into place (which
		// fails when the name exists): two servers starting on one data
		// directory keep one key, and neither reads half of it.
		f, err := os.CreateTemp(filepath.Dir(path), ".host_key.new.")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, err
		}
		if _, err := f.Write(raw); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		if err := os.Link(f.Name(), path); errors.Is(err, os.ErrExist) {
			return LoadHostKey(dataDir)
		} else if err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return ssh.ParsePrivateKey(raw)
}

// New returns a server with hostKey over d.
func New(d *app.Deps, hostKey ssh.Signer) *Server {
	s := &Server{d: d, git: githttp.NewTransport(d), lfs: lfs.NewService(d), conns: map[net.Conn]bool{}, preAuth: map[string]int{}}
	s.config = &ssh.ServerConfig{PublicKeyCallback: s.authenticate, MaxAuthTries: 6}
	s.config.AddHostKey(hostKey)
	return s
}

// authenticate accepts a key that is some user's (whose account may sign
// in) or some repositories' deploy key. The user name is not looked at:
// clients connect as "git".
func (s *Server) authenticate(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	ctx := context.Background()
	fp := ssh.FingerprintSHA256(key)
	k, err := s.d.Store.Keys().FindPublicKeyByFingerprint(ctx, fp)
	if err == nil {
		u, err := s.d.Store.Users().FindByID(ctx, k.OwnerID)
		if err != nil {
			return nil, fmt.Errorf("key owner: %w", err)
		}
		if err := auth.AccountState(u); err != nil {
			return nil, err
		}
		_ = s.d.Store.Keys().TouchPublicKey(ctx, k.ID, s.d.Clock.Now().UTC())
		return &ssh.Permissions{Extensions: map[string]string{extUserID: strconv.FormatInt(u.ID, 10), extUserKey: fp}}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	deploy, err := s.d.Store.Keys().FindDeployKeysByFingerprint(ctx, fp)
	if err != nil {
		return nil, err
	}
	if len(deploy) == 0 {
		return nil, errors.New("unknown public key")
	}
	return &ssh.Permissions{Extensions: map[string]string{extFingerprint: fp}}, nil
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.ln != nil {
		_ = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// serveConn serves one connection. Until it has authenticated it counts
// against its address's share of unauthenticated connections (refused
// past Config.SSHMaxPreAuthPerAddress) and must finish within
// Config.SSHHandshakeTimeout; after that it is closed once it has been
// idle, nothing read and nothing written, for Config.SSHIdleTimeout.
func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	addr := remoteHost(c)
	if !s.enterPreAuth(addr) {
		return
	}
	cfg := s.d.Config
	ic := &idleConn{Conn: c}
	if cfg.SSHHandshakeTimeout > 0 {
		_ = c.SetDeadline(time.Now().Add(cfg.SSHHandshakeTimeout))
	}
	conn, chans, reqs, err := ssh.NewServerConn(ic, s.config)
	s.leavePreAuth(addr)
	if err != nil {
		return
	}
	defer conn.Close()
	ic.setIdle(cfg.SSHIdleTimeout)
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(conn.Permissions, ch, creqs)
		}()
	}
}

// enterPreAuth counts a new connection from addr; false when addr has
// as many unauthenticated connections as it may.
func (s *Server) enterPreAuth(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if max := s.d.Config.SSHMaxPreAuthPerAddress; max > 0 && s.preAuth[addr] >= max {
		return false
	}
	s.preAuth[addr]++
	return true
}

func (s *Server) leavePreAuth(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.preAuth[addr]--; s.preAuth[addr] <= 0 {
		delete(s.preAuth, addr)
	}
}

func remoteHost(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// idleConn moves its deadline on with every read and write once setIdle
// gave it a timeout, so only a connection on which nothing happens for
// that long is closed (a pending read is cut by a write's new deadline
// too, since a deadline applies to calls in progress).
type idleConn struct {
	net.Conn
	idle atomic.Int64 // time.Duration; 0: no idle timeout yet
}

func (c *idleConn) setIdle(d time.Duration) {
	c.idle.Store(int64(d))
	if d > 0 {
		_ = c.Conn.SetDeadline(time.Now().Add(d))
	} else {
		_ = c.Conn.SetDeadline(time.Time{})
	}
}

func (c *idleConn) touch() {
	if d := time.Duration(c.idle.Load()); d > 0 {
		_ = c.Conn.SetDeadline(time.Now().Add(d))
	}
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.touch()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	c.touch()
	return c.Conn.Write(p)
}

// session runs the one git command a client execs; anything else (a
// shell) gets a greeting and ends.
func (s *Server) session(perms *ssh.Permissions, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	protocol := ""
	for req := range reqs {
		switch req.Type {
		case "env":
			// Only GIT_PROTOCOL, of the shape git sends, is taken (and
			// passed on to upload-pack); any other variable is refused,
			// which ssh clients take as a warning at most.
			var kv struct{ Name, Value string }
			if err := ssh.Unmarshal(req.Payload, &kv); err != nil || kv.Name != "GIT_PROTOCOL" || !gitstore.ValidProtocol(kv.Value) {
				_ = req.Reply(false, nil)
				continue
			}
			protocol = kv.Value
			_ = req.Reply(true, nil)
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			status := s.exec(perms, ch, payload.Command, protocol)
			exit(ch, status)
			return
		case "shell":
			_ = req.Reply(true, nil)
			fmt.Fprintf(ch.Stderr(), "Hi there! You've successfully authenticated, but repohost does not provide shell access.\n")
			exit(ch, 0)
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

func exit(ch ssh.Channel, status uint32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], status)
	_, _ = ch.SendRequest("exit-status", false, b[:])
}

// parseCommand reads "git-upload-pack 'owner/repo.git'" (or "git
// upload-pack ..."), the path with or without a leading slash or quotes.
func parseCommand(cmd string) (service, owner, name string, ok bool) {
	cmd = strings.TrimSpace(cmd)
	verb, arg, found := strings.Cut(cmd, " ")
	if verb == "git" {
		verb, arg, found = strings.Cut(strings.TrimSpace(arg), " ")
		verb = "git-" + verb
	}
	if !found || (verb != gitstore.ServiceUploadPack && verb != gitstore.ServiceReceivePack) {
		return "", "", "", false
	}
	owner, name, ok = parseRepoArg(arg)
	if !ok {
		return "", "", "", false
	}
	return verb, owner, name, true
}

// parseRepoArg reads the repository argument of a command: owner/repo
// (".git" optional), quoted or not, with or without a leading slash.
func parseRepoArg(arg string) (owner, name string, ok bool) {
	arg = strings.TrimSpace(arg)
	if len(arg) >= 2 && (arg[0] == '\'' || arg[0] == '"') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	arg = strings.TrimPrefix(strings.TrimPrefix(arg, "~"), "/")
	owner, name, found := strings.Cut(arg, "/")
	if !found || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return owner, name, true
}

// errKeyGone is a session of a connection whose key was removed, or whose
// account may no longer sign in, since it authenticated.
var errKeyGone = errors.New("the key is no longer valid")

// caller turns what authenticate found into the transport's caller,
// checked again for each session: a connection may outlive its key's
// removal or its account's suspension.
func (s *Server) caller(ctx context.Context, perms *ssh.Permissions) (githttp.Caller, error) {
	if id := perms.Extensions[extUserID]; id != "" {
		uid, _ := strconv.ParseInt(id, 10, 64)
		k, err := s.d.Store.Keys().FindPublicKeyByFingerprint(ctx, perms.Extensions[extUserKey])
		if errors.Is(err, store.ErrNotFound) || (err == nil && k.OwnerID != uid) {
			return githttp.Caller{}, errKeyGone
		}
		if err != nil {
			return githttp.Caller{}, err
		}
		u, err := s.d.Store.Users().FindByID(ctx, uid)
		if errors.Is(err, store.ErrNotFound) {
			return githttp.Caller{}, errKeyGone
		}
		if err != nil {
			return githttp.Caller{}, err
		}
		if auth.AccountState(u) != nil {
			return githttp.Caller{}, errKeyGone
		}
		return githttp.Caller{Principal: &auth.Principal{User: u, Signer: u}}, nil
	}
	keys, err := s.d.Store.Keys().FindDeployKeysByFingerprint(ctx, perms.Extensions[extFingerprint])
	if err == nil && len(keys) == 0 {
		err = errKeyGone
	}
	return githttp.Caller{Deploy: keys}, err
}

// exec serves one git command and returns its exit status; protocol is
// the session's GIT_PROTOCOL ("" for none).
func (s *Server) exec(perms *ssh.Permissions, ch ssh.Channel, command, protocol string) uint32 {
	ctx := context.Background()
	fail := func(msg string) uint32 {
		fmt.Fprintf(ch.Stderr(), "repohost: %s\n", msg)
		return 1
	}
	lfsOp := ""
	service, owner, name, ok := parseCommand(command)
	if !ok {
		if owner, name, lfsOp, ok = parseLFSAuthenticate(command); !ok {
			return fail("only git-upload-pack, git-receive-pack and git-lfs-authenticate of owner/repo.git are served")
		}
	}
	c, err := s.caller(ctx, perms)
	if errors.Is(err, errKeyGone) {
		return fail("your key is no longer valid; connect again")
	}
	if err != nil {
		s.d.Log.Error("git ssh: caller", "err", err)
		return fail("internal server error")
	}
	if lfsOp != "" && c.Principal == nil {
		return fail("git-lfs-authenticate needs a user's key; deploy keys cannot use LFS")
	}
	write := service == gitstore.ServiceReceivePack || lfsOp == "upload"
	repo, err := s.git.Authorize(ctx, c, owner, name, write)
	var no *githttp.Refusal
	if errors.As(err, &no) {
		return fail(no.Message)
	}
	if err != nil {
		s.d.Log.Error("git ssh: authorize", "err", err)
		return fail("internal server error")
	}
	if lfsOp != "" {
		return s.lfsAuthenticate(c, repo, lfsOp, ch, fail)
	}
	if write {
		return s.receivePack(ctx, c, repo, ch, fail)
	}
	return s.uploadPack(ctx, repo, protocol, ch, fail)
}

// uploadPack serves a fetch with git's own upload-pack on the bare
// repository: over a stream the negotiation is a conversation, which git
// itself conducts; it only reads.
func (s *Server) uploadPack(ctx context.Context, repo *store.Repository, protocol string, ch ssh.Channel, fail func(string) uint32) uint32 {
	err := s.d.Git.UploadPack(ctx, repo.Owner.Name, repo.Name, gitstore.UploadPackStream, protocol, ch, ch, ch.Stderr())
	s.d.Metrics.GitOperation("upload-pack", err)
	if errors.Is(err, store.ErrNotFound) {
		return fail("repository not found")
	}
	if err != nil {
		// git has told the client already; the log gets its stderr.
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			s.d.Log.Warn("git ssh: upload-pack", "repo", repo.FullName(), "err", err)
			return uint32(exitErr.ExitCode())
		}
		s.d.Log.Error("git ssh: upload-pack", "repo", repo.FullName(), "err", err)
		return 1
	}
	return 0
}

// receivePack serves a push: the advertisement, then the push applied by
// the shared Transport, then git's report.
func (s *Server) receivePack(ctx context.Context, c githttp.Caller, repo *store.Repository, ch ssh.Channel, fail func(string) uint32) uint32 {
	g, err := s.d.OpenGit(repo)
	if err != nil {
		s.d.Log.Error("git ssh: open repository", "err", err)
		return fail("internal server error")
	}
	if err := g.AdvertiseReceivePackStream(ctx, ch); err != nil {
		s.d.Log.Error("git ssh: advertise", "err", err)
		return fail("internal server error")
	}
	push, err := s.git.ReceivePack(ctx, c, repo, g, ch, nil)
	if errors.Is(err, gitstore.ErrProtocol) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fail(err.Error())
	}
	if err != nil {
		s.d.Log.Error("git ssh: receive-pack", "repo", repo.FullName(), "err", err)
		return fail("internal server error")
	}
	if err := push.WriteReport(ch); err != nil {
		s.d.Log.Error("git ssh: report", "repo", repo.FullName(), "err", err)
		return 1
	}
	return 0
}
