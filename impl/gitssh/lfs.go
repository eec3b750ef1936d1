package gitssh

import (
	"encoding/json"
	"strings"

	"golang.org/x/crypto/ssh"

	"repohost/impl/githttp"
	"repohost/impl/rooturl"
	"repohost/store"
)

// parseLFSAuthenticate reads "git-lfs-authenticate 'owner/repo.git'
// upload|download" (git-lfs may add further arguments, which are
// ignored).
func parseLFSAuthenticate(cmd string) (owner, name, op string, ok bool) {
	fields := strings.Fields(strings.TrimSpace(cmd))
	if len(fields) < 3 || fields[0] != "git-lfs-authenticate" {
		return "", "", "", false
	}
	op = fields[2]
	if op != "upload" && op != "download" {
		return "", "", "", false
	}
	owner, name, ok = parseRepoArg(fields[1])
	return owner, name, op, ok
}

// lfsAuthenticate answers git-lfs-authenticate as the reference's serv
// command does: once the caller passed the checks of a fetch (download) or
// a push (upload), a short-lived token for the repository's LFS API over
// HTTP, as JSON on stdout. Deploy keys get none: the token names a user.
func (s *Server) lfsAuthenticate(c githttp.Caller, repo *store.Repository, op string, ch ssh.Channel, fail func(string) uint32) uint32 {
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
