package apitest_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

func sshDial(t *testing.T, addr string, s ssh.Signer) *ssh.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(s)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sshExec runs command in a new session of c and returns its stdout's
// first bytes (up to 4: a pkt-line length is enough to know git answered),
// its stderr and its error.
func sshExec(t *testing.T, c *ssh.Client, command string) (string, string, error) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		return "", "", err
	}
	defer sess.Close()
	var stderr bytes.Buffer
	sess.Stderr = &stderr
	out, _ := sess.StdoutPipe()
	stdin, _ := sess.StdinPipe()
	if err := sess.Start(command); err != nil {
		return "", "", err
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(out, head)
	stdin.Close()
	err = sess.Wait()
	return string(head[:n]), stderr.String(), err
}

// closedByServer waits (at most a minute, far past any limit the tests
// set) for the server to close c, and tells whether it did.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := io.Copy(io.Discard, c)
	return err == nil || !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestSSHConnectionLimits: a connection that does not authenticate in
// time is closed, as is an authenticated one left idle; one address
// cannot hold more unauthenticated connections than allowed.
func TestSSHConnectionLimits(t *testing.T) {
	t.Parallel()
	requireTools(t, "git")
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.SSHHandshakeTimeout = 300 * time.Millisecond
		c.SSHIdleTimeout = time.Second
	})
	addr := startSSH(t, e)
	// Silent, and stopped after the banner: both closed.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	banner, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer banner.Close()
	if _, err := banner.Write([]byte("SSH-2.0-probe\r\n")); err != nil {
		t.Fatal(err)
	}
	if !closedByServer(t, silent) || !closedByServer(t, banner) {
		t.Fatal("an unauthenticated connection was kept past the handshake deadline")
	}

	// An authenticated connection that does nothing is closed; one that
	// works is not cut by the handshake deadline.
	alice := e.CreateUser("alice", false)
	key := newEd25519Key(t)
	signer := key.signer
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": key.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	c := sshDial(t, addr, signer)
	defer c.Close()
	if out, stderr, err := sshExec(t, c, "git-upload-pack 'alice/proj.git'"); len(out) != 4 {
		t.Fatalf("upload-pack after authenticating: %q %q %v", out, stderr, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("an idle authenticated connection was kept")
	}
}

// TestSSHPreAuthCap: past the cap, a new unauthenticated connection from
// the same address is closed at once; another address is not affected;
// a freed place is available again.
func TestSSHPreAuthCap(t *testing.T) {
	t.Parallel()
	requireTools(t, "git")
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.SSHHandshakeTimeout = time.Hour
		c.SSHMaxPreAuthPerAddress = 2
	})
	addr := startSSH(t, e)
	greets := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		b := make([]byte, 4)
		_, err := io.ReadFull(c, b)
		return err == nil && string(b) == "SSH-"
	}
	dial := func(local string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	first, second := dial("127.0.0.1"), dial("127.0.0.1")
	if !greets(first) || !greets(second) {
		t.Fatal("connections within the cap were not served")
	}
	if third := dial("127.0.0.1"); greets(third) {
		t.Fatal("a third unauthenticated connection from one address was served")
	}
	if !greets(dial("127.0.0.3")) {
		t.Fatal("another address was refused")
	}
	first.Close()
	// The server notices the close when its handshake read fails; then
	// the place is free again.
	for i := 0; ; i++ {
		c := dial("127.0.0.1")
		if greets(c) {
			break
		}
		if i == 100 {
			t.Fatal("a closed connection's place was not freed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSSHSessionRechecksKey: every session of a connection checks again
// that its key exists and its account may sign in.
func TestSSHSessionRechecksKey(t *testing.T) {
	t.Parallel()
	requireTools(t, "git")
	e := apitest.New(t)
	addr := startSSH(t, e)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	aKey, bKey := newEd25519Key(t), newEd25519Key(t)
	aSigner, bSigner := aKey.signer, bKey.signer
	var key models.PublicKey
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": aKey.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated).JSON(t, &key)
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": bKey.line}, apitest.Basic(bob)).Expect(t, http.StatusCreated)

	ac, bc := sshDial(t, addr, aSigner), sshDial(t, addr, bSigner)
	defer ac.Close()
	defer bc.Close()
	const cmd = "git-upload-pack 'alice/proj.git'"
	for _, c := range []*ssh.Client{ac, bc} {
		if out, stderr, err := sshExec(t, c, cmd); len(out) != 4 {
			t.Fatalf("upload-pack: %q %q %v", out, stderr, err)
		}
	}
	// Alice removes her key; bob's account is suspended.
	e.Do("DELETE", "user/keys/"+strconv.FormatInt(key.ID, 10), nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	e.Do("PATCH", "admin/users/bob", map[string]any{"login_name": "bob", "source_id": 0, "prohibit_login": true}, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	for name, c := range map[string]*ssh.Client{"a removed key": ac, "a suspended account": bc} {
		out, stderr, err := sshExec(t, c, cmd)
		if out != "" || err == nil || !strings.Contains(stderr, "no longer valid") {
			t.Fatalf("a session of %s: %q %q %v", name, out, stderr, err)
		}
	}
}
