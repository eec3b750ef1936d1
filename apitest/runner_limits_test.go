package apitest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	pingv1 "code.gitea.io/actions-proto-go/ping/v1"
	"code.gitea.io/actions-proto-go/ping/v1/pingv1connect"
	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
	"connectrpc.com/connect"

	"repohost/apitest"
)

// TestRunnerProtocolLimits: an anonymous call to any procedure but
// Register is refused from its headers, before its body is read; every
// message is read only up to its procedure's limit; a runner cannot store
// an unbounded name, version or label list.
func TestRunnerProtocolLimits(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	tok := regToken(t, e, "admin/actions/runners/registration-token", apitest.Basic(e.Admin))

	// A body that never ends: the answer can only come if the server did
	// not wait for it.
	for _, proc := range []string{"Declare", "FetchTask", "UpdateTask", "UpdateLog"} {
		pr, pw := io.Pipe()
		go func() {
			chunk := make([]byte, 64<<10)
			for {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
		}()
		req, _ := http.NewRequest("POST", e.URL+"api/actions/runner.v1.RunnerService/"+proc, pr)
		req.Header.Set("Content-Type", "application/proto")
		req.Header.Set("x-runner-uuid", "00000000-0000-4000-8000-000000000000")
		req.Header.Set("x-runner-token", "wrong")
		res, err := http.DefaultClient.Do(req)
		pr.CloseWithError(errors.New("done"))
		if err != nil {
			t.Fatalf("%s with an endless body: %v", proc, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s by an unknown runner: %d, want 401", proc, res.StatusCode)
		}
	}

	// Register reads anonymous bodies, up to a small limit.
	r := newTestRunner(e, "big")
	_, err := r.client.Register(context.Background(), connect.NewRequest(&runnerv1.RegisterRequest{
		Token: tok, Name: "big", Labels: []string{strings.Repeat("x", 1<<20)}}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("register with a 1 MiB label: %v, want resource_exhausted", err)
	}
	ping := pingv1connect.NewPingServiceClient(http.DefaultClient, e.URL+"api/actions")
	if _, err := ping.Ping(context.Background(), connect.NewRequest(&pingv1.PingRequest{Data: strings.Repeat("x", 1<<20)})); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("ping with 1 MiB: %v, want resource_exhausted", err)
	}
	for name, req := range map[string]*runnerv1.RegisterRequest{
		"long name":    {Token: tok, Name: strings.Repeat("n", 256)},
		"long version": {Token: tok, Name: "v", Version: strings.Repeat("1", 65)},
		"long label":   {Token: tok, Name: "l", Labels: []string{strings.Repeat("l", 256)}},
		"many labels":  {Token: tok, Name: "m", Labels: strings.Split(strings.Repeat("a,", 65)+"a", ",")},
	} {
		if _, err := r.client.Register(context.Background(), connect.NewRequest(req)); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("register with a %s: %v, want invalid_argument", name, err)
		}
	}

	// A registered runner: Declare is bounded the same way, and a log
	// batch far larger than any other message is read.
	run := registerRunner(t, e, tok, "ok", "ubuntu-latest")
	if _, err := run.client.Declare(context.Background(), connect.NewRequest(&runnerv1.DeclareRequest{Version: strings.Repeat("9", 65)})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("declare with a long version: %v, want invalid_argument", err)
	}
	if _, err := run.client.Declare(context.Background(), connect.NewRequest(&runnerv1.DeclareRequest{Version: strings.Repeat("9", 1<<20)})); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("declare with a 1 MiB version: %v, want resource_exhausted", err)
	}
	lines := make([]*runnerv1.LogRow, 2000)
	for i := range lines {
		lines[i] = &runnerv1.LogRow{Content: strings.Repeat("log ", 256)}
	}
	// No such task: the batch is read (not refused for its 2 MB) and the
	// answer is about the task.
	if _, err := run.client.UpdateLog(context.Background(), connect.NewRequest(&runnerv1.UpdateLogRequest{TaskId: 999999, Rows: lines})); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("2 MB log batch for a missing task: %v, want not_found", err)
	}
}
