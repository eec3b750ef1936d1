package apitest_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
)

func TestBodyOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.MaxBodyBytes = 1024 })
	u := e.CreateUser("alice", false)
	big := map[string]any{"name": "big", "description": strings.Repeat("x", 2048)}
	e.Do("POST", "user/repos", big, apitest.Basic(u)).Expect(t, http.StatusRequestEntityTooLarge)
	// Nothing was created, and a body within the limit still works.
	e.Do("GET", "repos/alice/big", nil, apitest.Basic(u)).Expect(t, http.StatusNotFound)
	e.Do("POST", "user/repos", map[string]any{"name": "small"}, apitest.Basic(u)).Expect(t, http.StatusCreated)
}

func TestPasswordsLongerThanBcryptTakesAreAccepted(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	for _, n := range []int{72, 73, 100, 255} {
		name := fmt.Sprintf("long%d", n)
		pw := strings.Repeat("p", n-1) + "!"
		e.Do("POST", "admin/users", map[string]any{
			"username": name, "email": name + "@example.com", "password": pw, "must_change_password": false,
		}, apitest.Basic(e.Admin)).Expect(t, http.StatusCreated)
		signIn := func(password string) int {
			return e.Do("GET", "user", nil, func(r *http.Request) { r.SetBasicAuth(name, password) }).Status
		}
		if got := signIn(pw); got != http.StatusOK {
			t.Errorf("%d-byte password: sign-in answered %d", n, got)
		}
		// Every byte counts: bcrypt alone would ignore what follows byte 72.
		if n > 72 {
			if got := signIn(pw[:72]); got != http.StatusUnauthorized {
				t.Errorf("%d-byte password: its first 72 bytes signed in (%d)", n, got)
			}
		}
	}
	// Changing to a long password through the admin edit works too.
	pw := strings.Repeat("q", 200)
	e.Do("PATCH", "admin/users/long72", map[string]any{"login_name": "long72", "source_id": 0, "password": pw},
		apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	e.Do("GET", "user", nil, func(r *http.Request) { r.SetBasicAuth("long72", pw) }).Expect(t, http.StatusOK)
}

func TestFailedSignInsAreThrottled(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.LoginFailures = 3; c.LoginWindow = time.Hour })
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	token := e.Token(alice, "read:user")
	wrong := func(r *http.Request) { r.SetBasicAuth("alice", "not-her-password") }
	for i := 0; i < 3; i++ {
		e.Do("GET", "user", nil, wrong).Expect(t, http.StatusUnauthorized)
	}
	// Locked now from this address, even with the right password, and
	// told for how long.
	r := e.Do("GET", "user", nil, apitest.Basic(alice)).Expect(t, http.StatusTooManyRequests)
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 3600 {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// From another address her right password still works: wrong
	// passwords sent from anywhere cannot lock her out. That address
	// has its own count.
	other := clientFrom(t, "127.0.0.2")
	if got := signInFrom(t, e, other, "alice", alice.Password); got != http.StatusOK {
		t.Fatalf("alice from another address after the lock: %d, want 200", got)
	}
	for i := 0; i < 3; i++ {
		if got := signInFrom(t, e, other, "alice", "still-wrong"); got != http.StatusUnauthorized {
			t.Fatalf("wrong password %d from another address: %d", i, got)
		}
	}
	if got := signInFrom(t, e, other, "alice", alice.Password); got != http.StatusTooManyRequests {
		t.Fatalf("alice from the other address after its own failures: %d, want 429", got)
	}
	// Another account from the same address is still fine...
	e.Do("GET", "user", nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
	// ...until the address has failed five times the account limit: then
	// guessing cannot simply move on from account to account.
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("nobody%d", i)
		e.Do("GET", "user", nil, func(r *http.Request) { r.SetBasicAuth(name, "guess") }).Expect(t, http.StatusUnauthorized)
	}
	e.Do("GET", "user", nil, apitest.Basic(bob)).Expect(t, http.StatusTooManyRequests)
	// Tokens are not passwords: they keep working.
	e.Do("GET", "user", nil, apitest.TokenCred(token)).Expect(t, http.StatusOK)
}

func TestCorrectSignInsAreNeverThrottled(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.LoginFailures = 3; c.LoginWindow = time.Hour })
	alice := e.CreateUser("alice", false)
	wrong := func(r *http.Request) { r.SetBasicAuth("alice", "typo") }
	for i := 0; i < 20; i++ {
		if i%5 == 0 {
			// Two typos, then the right password, which clears the count.
			e.Do("GET", "user", nil, wrong).Expect(t, http.StatusUnauthorized)
		}
		e.Do("GET", "user", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	}
}

func TestAbsoluteURLsIgnoreTheHostHeader(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	u := e.CreateUser("alice", false)
	e.Do("POST", "user/repos", map[string]any{"name": "r"}, apitest.Basic(u)).Expect(t, http.StatusCreated)
	for i := 0; i < 3; i++ {
		e.Do("POST", "user/repos", map[string]any{"name": fmt.Sprintf("more%d", i)}, apitest.Basic(u)).Expect(t, http.StatusCreated)
	}
	evil := func(r *http.Request) { r.SetBasicAuth(u.User.Name, u.Password); r.Host = "evil.example" }
	var repo struct {
		CloneURL string `json:"clone_url"`
		HTMLURL  string `json:"html_url"`
	}
	e.Do("GET", "repos/alice/r", nil, evil).Expect(t, http.StatusOK).JSON(t, &repo)
	for _, got := range []string{repo.CloneURL, repo.HTMLURL} {
		if !strings.HasPrefix(got, e.URL) {
			t.Errorf("URL %q does not start with the root URL %q", got, e.URL)
		}
	}
	link := e.Do("GET", "users/alice/repos?limit=1", nil, evil).Expect(t, http.StatusOK).Header.Get("Link")
	if link == "" || strings.Contains(link, "evil.example") || !strings.Contains(link, e.URL) {
		t.Errorf("Link = %q, want links under %q", link, e.URL)
	}
}

func TestStalledRequestBodiesAndIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.StallTimeout = 500 * time.Millisecond
		c.IdleTimeout = 500 * time.Millisecond
	})
	addr := strings.TrimPrefix(strings.TrimSuffix(e.URL, "/"), "http://")
	closedWithin := func(conn net.Conn, limit time.Duration) bool {
		_ = conn.SetReadDeadline(time.Now().Add(limit))
		_, err := bufio.NewReader(conn).ReadString(0)
		ne, isNetErr := err.(net.Error)
		return err != nil && !(isNetErr && ne.Timeout())
	}

	// A body trickled a byte at a time never reaches a handler.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /api/v1/user/repos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	go func() {
		for i := 0; i < 20; i++ {
			time.Sleep(300 * time.Millisecond)
			if _, err := slow.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	if !closedWithin(slow, 5*time.Second) {
		t.Error("a trickled body held its connection open")
	}

	// An idle keep-alive connection is closed.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !closedWithin(idle, 5*time.Second) {
		t.Error("an idle keep-alive connection stayed open")
	}
}

func TestOverlongQueryStringsAre422(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	u := e.CreateUser("alice", false)
	e.Do("POST", "user/repos", map[string]any{"name": "r"}, apitest.Basic(u)).Expect(t, http.StatusCreated)
	long := strings.Repeat("a", 60_000)
	for _, path := range []string{
		"users/search?q=" + long,
		"topics/search?q=" + long,
		"admin/users?q=" + long,
		"admin/emails/search?q=" + long,
		"repos/search?q=" + long,
		"repos/issues/search?q=" + long,
		"repos/alice/r/issues?q=" + long,
		"repos/alice/r/milestones?name=" + long,
	} {
		r := e.Do("GET", path, nil, apitest.Basic(e.Admin))
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("GET %s…: %d, want 422", path[:30], r.Status)
		}
		if len(r.Header.Get("Link")) > 4096 {
			t.Errorf("GET %s…: a %d-byte Link header", path[:30], len(r.Header.Get("Link")))
		}
	}
}

func TestOverlongListsInBodiesAre422(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	u := e.CreateUser("alice", false)
	e.Do("POST", "user/repos", map[string]any{"name": "r", "auto_init": true}, apitest.Basic(u)).Expect(t, http.StatusCreated)
	ids := make([]int64, 32767)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	e.Do("POST", "repos/alice/r/branch_protections/priority", map[string]any{"ids": ids}, apitest.Basic(u)).
		Expect(t, http.StatusUnprocessableEntity)
	labels := make([]int64, 5000)
	e.Do("POST", "repos/alice/r/issues", map[string]any{"title": "t", "labels": labels}, apitest.Basic(u)).
		Expect(t, http.StatusUnprocessableEntity)
}

// clientFrom is an HTTP client whose connections come from ip (any
// 127.0.0.0/8 address reaches the test server on Linux), so a test can act
// as a second client address.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// signInFrom asks GET /user with Basic user:pass through c and returns the
// status.
func signInFrom(t *testing.T, e *apitest.Env, c *http.Client, user, pass string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", e.URL+"api/v1/user", nil)
	req.SetBasicAuth(user, pass)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
