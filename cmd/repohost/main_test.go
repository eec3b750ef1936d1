package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestAdminUserCreate(t *testing.T) {
	data := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"admin", "user", "create", "--data", data}, extra...)
	}
	if err := run(args("--username", "root1", "--password", "pw-123456", "--email", "root1@example.com", "--admin"), quietLog()); err != nil {
		t.Fatalf("create: %v", err)
	}
	err := run(args("--username", "root1", "--password", "pw-123456", "--email", "other@example.com"), quietLog())
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate user: %v", err)
	}
	err = run(args("--username", "bad name", "--password", "pw", "--email", "x@example.com"), quietLog())
	if err == nil || !strings.Contains(err.Error(), "invalid username") {
		t.Fatalf("invalid user: %v", err)
	}
	if err := run(args("--username", "x"), quietLog()); err == nil {
		t.Fatal("missing flags accepted")
	}
	if err := run([]string{"migrate", "--data", data}, quietLog()); err != nil {
		t.Fatalf("migrate on an up-to-date database: %v", err)
	}
}

// TestServeStartsAndStopsGracefully runs the real binary: it creates the
// first admin, answers, and exits cleanly on SIGTERM.
func TestServeStartsAndStopsGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "repohost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--listen", addr)
	cmd.Env = append(os.Environ(), "REPOHOST_ADMIN_PASSWORD=first-admin-pw", "REPOHOST_DB=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer cmd.Process.Kill()

	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/user", nil)
		req.SetBasicAuth("admin", "first-admin-pw")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET /user as the first admin: %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server did not exit cleanly: %v", err)
	}
	var log strings.Builder
	for l := range lines {
		log.WriteString(l + "\n")
	}
	for _, want := range []string{"created the site admin", `"msg":"request"`, "shutting down"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestServeRefusesABadSigningKey: a signing key that cannot be used stops
// the server before it listens, rather than leaving its commits unsigned.
func TestServeRefusesABadSigningKey(t *testing.T) {
	data := t.TempDir()
	missing := filepath.Join(data, "no-such-key.asc")
	err := run([]string{"serve", "--data", data, "--listen", "127.0.0.1:0", "--signing-key", missing}, quietLog())
	if err == nil || !strings.Contains(err.Error(), "no-such-key.asc") {
		t.Fatalf("missing key file: %v", err)
	}
	garbage := filepath.Join(data, "garbage.asc")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run([]string{"serve", "--data", data, "--listen", "127.0.0.1:0", "--signing-key", garbage}, quietLog())
	if err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Fatalf("unreadable key: %v", err)
	}
}

// TestSecretKeySources: without --secret-key the instance key is generated
// once into the data directory (0600) and kept; with the flag or
// REPOHOST_SECRET_KEY no file is written.
func TestSecretKeySources(t *testing.T) {
	data := t.TempDir()
	if err := run([]string{"migrate", "--data", data}, quietLog()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "secret_key")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no generated key: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	first, _ := os.ReadFile(path)
	if err := run([]string{"migrate", "--data", data}, quietLog()); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(first) {
		t.Error("a second start replaced the generated key")
	}

	given := t.TempDir()
	if err := run([]string{"migrate", "--data", given, "--secret-key", "operator key"}, quietLog()); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPOHOST_SECRET_KEY", "operator key")
	fromEnv := t.TempDir()
	if err := run([]string{"migrate", "--data", fromEnv}, quietLog()); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{given, fromEnv} {
		if _, err := os.Stat(filepath.Join(dir, "secret_key")); !os.IsNotExist(err) {
			t.Errorf("%s: a key file was written although a key was given (%v)", dir, err)
		}
	}
}

// TestSoleProcessOnSQLite: a second server on one embedded database is
// refused while the first runs, and starts once it has stopped.
func TestSoleProcessOnSQLite(t *testing.T) {
	data := t.TempDir()
	release, err := soleProcess(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := soleProcess(data, ""); err == nil || !strings.Contains(err.Error(), "another server process") {
		if r != nil {
			r()
		}
		t.Fatalf("a second process on the embedded database: %v", err)
	}
	release()
	again, err := soleProcess(data, "")
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	again()
}
