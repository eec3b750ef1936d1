package gitssh

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"golang.org/x/crypto/ssh"

	"repohost/impl/githttp"
	"repohost/impl/rooturl"
)

// parseLFSAuthenticate reads "git-lfs-authenticate 'owner/repo.git'
// upload|download" (git-lfs may add further arguments, which are
// ignored).
func parseLFSAuthenticate(cmd string) (owner, name, op string, ok bool) {
	fields := strings.Fields(strings.TrimSpace(cmd))
	if len(fields) < 3 || fields[0] != "git-lfs-authenticate" {
		return "", "", "", false
	}
	arg, op := fields[1], fields[2]
	if op != "upload" && op != "download" {
		return "", "", "", false
	}
	if len(arg) >= 2 && (arg[0] == '\'' || arg[0] == '"') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	arg = strings.TrimPrefix(strings.TrimPrefix(arg, "~"), "/")
	owner, name, found := strings.Cut(arg, "/")
	if !found || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", "", false
	}
	return owner, name, op, true
}

// lfsAuthenticate answers git-lfs-authenticate as the reference's serv
// command does: after the same checks as a fetch (download) or a push
// (upload), a short-lived token for the repository's LFS API over HTTP,
// as JSON on stdout. Deploy keys get none: the token names a user.
func (s *Server) lfsAuthenticate(ctx context.Context, perms *ssh.Permissions, ch ssh.Channel, owner, name, op string, fail func(string) uint32) uint32 {
	c, err := s.caller(ctx, perms)
	if errors.Is(err, errKeyGone) {
		return fail("your key is no longer valid; connect again")
	}
	if err != nil {
		s.d.Log.Error("git ssh: caller", "err", err)
		return fail("internal server error")
	}
	if c.Principal == nil {
		return fail("git-lfs-authenticate needs a user's key; deploy keys cannot use LFS")
	}
	repo, err := s.git.Authorize(ctx, githttp.Caller{Principal: c.Principal}, owner, name, op == "upload")
	var no *githttp.Refusal
	if errors.As(err, &no) {
		return fail(no.Message)
	}
	if err != nil {
		s.d.Log.Error("git ssh: authorize", "err", err)
		return fail("internal server error")
	}
	tok, err := s.lfs.IssueToken(repo, c.Principal.User.ID, op, rooturl.Normalize(s.d.Config.RootURL))
	if err != nil {
		s.d.Log.Error("git ssh: lfs token", "err", err)
		return fail("internal server error")
	}
	if err := json.NewEncoder(ch).Encode(tok); err != nil {
		return 1
	}
	return 0
}
