package apitest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/signing"
	"repohost/models"
	"repohost/store"
)

// gpgCommit writes a commit of clone's index on top of HEAD, by name
// <email>, signed with key (unsigned when key is nil), moves HEAD to it
// and returns its id. The signature is made by go-crypto over the commit
// without its gpgsig header, as git's gpg.format=openpgp does.
func gpgCommit(t *testing.T, git *gitCLI, clone string, key *openpgp.Entity, name, email, msg string) string {
	t.Helper()
	return writeCommit(t, git, clone, key, name, email, msg, msg)
}

// writeCommit is gpgCommit with the signature made over a commit whose
// message is signedMsg: a forgery when that is not msg.
func writeCommit(t *testing.T, git *gitCLI, clone string, key *openpgp.Entity, name, email, msg, signedMsg string) string {
	t.Helper()
	tree := strings.TrimSpace(git.must(clone, "write-tree"))
	parent := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
	when := time.Now().Unix()
	commit := func(msg string) string {
		return fmt.Sprintf("tree %s\nparent %s\nauthor %s <%s> %d +0000\ncommitter %s <%s> %d +0000\n\n%s\n",
			tree, parent, name, email, when, name, email, when, msg)
	}
	payload := commit(msg)
	raw := payload
	if key != nil {
		var sig bytes.Buffer
		if err := openpgp.ArmoredDetachSign(&sig, key, strings.NewReader(commit(signedMsg)), nil); err != nil {
			t.Fatal(err)
		}
		header := "gpgsig " + strings.Join(strings.Split(strings.TrimSuffix(sig.String(), "\n"), "\n"), "\n ") + "\n"
		i := strings.Index(payload, "\n\n")
		raw = payload[:i+1] + header + payload[i+1:]
	}
	f := filepath.Join(t.TempDir(), "commit")
	if err := os.WriteFile(f, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimSpace(git.must(clone, "hash-object", "-t", "commit", "-w", f))
	git.must(clone, "reset", "-q", "--soft", sha)
	return sha
}

// stage writes file into clone's index.
func stage(t *testing.T, git *gitCLI, clone, file, content string) {
	t.Helper()
	p := filepath.Join(clone, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	git.must(clone, "add", file)
}

// signingSubkeyEntity is an ed25519 key for name <email> that signs with a
// subkey of its own, so signatures name the subkey's id.
func signingSubkeyEntity(t *testing.T, name, email string) *openpgp.Entity {
	t.Helper()
	created := time.Now().Add(-time.Hour)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }}
	ent, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ent.AddSigningSubkey(cfg); err != nil {
		t.Fatal(err)
	}
	return ent
}

// commitsFixture is alice's repository proj with, on main above the
// initial commit: an unsigned commit, one signed with alice's registered
// key, one signed through alice's signing subkey, and one signed with a
// key nobody registered.
type commitsFixture struct {
	e                                     *apitest.Env
	alice, bob                            *apitest.Account
	git                                   *gitCLI
	clone                                 string
	aliceKey, subKey, strayKey            *openpgp.Entity
	aliceKeyID                            int64
	initial, unsigned, signed, sub, stray string
}

func newCommitsFixture(t *testing.T) *commitsFixture {
	t.Helper()
	f := &commitsFixture{e: apitest.New(t), git: newGitCLI(t)}
	e := f.e
	f.alice, f.bob = e.CreateUser("alice", false), e.CreateUser("bob", false)
	token := e.Token(f.alice, "write:repository", "write:user")
	f.clone = brSeed(t, e, f.git, f.alice, token, "proj", true)
	f.initial = strings.TrimSpace(f.git.must(f.clone, "rev-parse", "HEAD"))

	now := time.Now()
	f.aliceKey = gpgKey(t, "Alice", "alice@example.com", packet.PubKeyAlgoEdDSA, false, now.Add(-time.Hour), 0)
	f.subKey = signingSubkeyEntity(t, "Alice Laptop", "alice@example.com")
	f.strayKey = gpgKey(t, "Mallory", "alice@example.com", packet.PubKeyAlgoEdDSA, true, now.Add(-time.Hour), 0)
	var k models.GPGKey
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, f.aliceKey)}, apitest.Basic(f.alice)).
		Expect(t, http.StatusCreated).JSON(t, &k)
	f.aliceKeyID = k.ID
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, f.subKey)}, apitest.Basic(f.alice)).
		Expect(t, http.StatusCreated)

	stage(t, f.git, f.clone, "a.txt", "one\ntwo\n")
	f.unsigned = gpgCommit(t, f.git, f.clone, nil, "Tester", "tester@example.com", "unsigned")
	stage(t, f.git, f.clone, "dir/b.txt", "b\n")
	f.signed = gpgCommit(t, f.git, f.clone, f.aliceKey, "Alice", "alice@example.com", "signed by alice")
	stage(t, f.git, f.clone, "dir/c.txt", "c\n")
	f.sub = gpgCommit(t, f.git, f.clone, f.subKey, "Alice", "Alice@Example.com", "signed by alice's subkey")
	stage(t, f.git, f.clone, "a.txt", "one\n")
	f.stray = gpgCommit(t, f.git, f.clone, f.strayKey, "Alice", "alice@example.com", "signed with an unknown key")
	f.git.must(f.clone, "push", "-q", "origin", "main")
	return f
}

func commitSHAs(cs []*models.Commit) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.SHA)
	}
	return out
}

func byID(cs []*models.Commit) map[string]*models.Commit {
	out := map[string]*models.Commit{}
	for _, c := range cs {
		out[c.SHA] = c
	}
	return out
}

// TestRepoCommitsVerification: each commit says whether a registered key
// verifies its signature, and if not, why, in the reference's words.
func TestRepoCommitsVerification(t *testing.T) {
	t.Parallel()
	f := newCommitsFixture(t)
	e, cred := f.e, apitest.Basic(f.alice)
	var list []*models.Commit
	r := e.Do("GET", "repos/alice/proj/commits", nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	want := []string{f.stray, f.sub, f.signed, f.unsigned, f.initial}
	if got := commitSHAs(list); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("commits %v, want %v", got, want)
	}
	c := byID(list)

	v := c[f.signed].Commit.Verification
	keyID := signing.KeyIDString(f.aliceKey.PrimaryKey.KeyId)
	if !v.Verified || v.Reason != "alice / "+keyID || v.Signer == nil || v.Signer.Name != "alice" ||
		v.Signer.Email != "alice@example.com" || !strings.Contains(v.Signature, "BEGIN PGP SIGNATURE") ||
		!strings.HasPrefix(v.Payload, "tree ") || strings.Contains(v.Payload, "gpgsig") {
		t.Errorf("alice's signed commit: %+v (signer %+v)", v, v.Signer)
	}
	// A subkey's signature names the subkey, and the address matches
	// whatever its case.
	v = c[f.sub].Commit.Verification
	subID := signing.KeyIDString(f.subKey.Subkeys[len(f.subKey.Subkeys)-1].PublicKey.KeyId)
	if !v.Verified || v.Reason != "alice / "+subID {
		t.Errorf("subkey-signed commit: %+v", v)
	}
	for _, w := range []struct {
		sha, reason string
	}{
		{f.stray, "gpg.error.no_gpg_keys_found"},
		{f.unsigned, "gpg.error.not_signed_commit"},
		{f.initial, "gpg.error.not_signed_commit"},
	} {
		if v := c[w.sha].Commit.Verification; v.Verified || v.Reason != w.reason || v.Signer != nil {
			t.Errorf("%s: %+v, want reason %s", w.sha, v, w.reason)
		}
	}
	if v := c[f.unsigned].Commit.Verification; v.Signature != "" || v.Payload != "" {
		t.Errorf("unsigned commit shows a signature: %+v", v)
	}

	// The accounts behind the addresses: alice's commits show her, the
	// tester's address belongs to nobody.
	if a := c[f.signed].Author; a == nil || a.UserName != "alice" || c[f.signed].Committer == nil {
		t.Errorf("signed commit's author %+v", a)
	}
	if a := c[f.sub].Author; a == nil || a.UserName != "alice" {
		t.Errorf("author by a differently cased address: %+v", a)
	}
	if c[f.unsigned].Author != nil || c[f.unsigned].Committer != nil {
		t.Errorf("unsigned commit by nobody's address has accounts %+v %+v", c[f.unsigned].Author, c[f.unsigned].Committer)
	}

	// Files and line counts.
	s := c[f.signed]
	if len(s.Files) != 1 || s.Files[0].Filename != "dir/b.txt" || s.Files[0].Status != "added" ||
		s.Stats == nil || s.Stats.Additions != 1 || s.Stats.Deletions != 0 || s.Stats.Total != 1 {
		t.Errorf("signed commit files %+v stats %+v", s.Files, s.Stats)
	}
	if st := c[f.stray]; len(st.Files) != 1 || st.Files[0].Status != "modified" || st.Stats.Deletions != 1 || st.Stats.Additions != 0 {
		t.Errorf("stray commit files %+v stats %+v", st.Files, st.Stats)
	}
	if s.HTMLURL != e.Server.URL+"/alice/proj/commit/"+f.signed || s.URL != e.Server.URL+"/api/v1/repos/alice/proj/git/commits/"+f.signed ||
		len(s.Parents) != 1 || s.Parents[0].SHA != f.unsigned || s.Commit.Message != "signed by alice\n" ||
		s.Commit.Author.Email != "alice@example.com" || s.Commit.Tree == nil || s.Commit.Tree.SHA == "" {
		t.Errorf("signed commit %+v / %+v", s, s.Commit)
	}

	// One commit, by id or by ref.
	var one models.Commit
	e.Do("GET", "repos/alice/proj/git/commits/"+f.signed, nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if !one.Commit.Verification.Verified || one.SHA != f.signed || len(one.Files) != 1 {
		t.Errorf("single commit %+v", one)
	}
	e.Do("GET", "repos/alice/proj/git/commits/main", nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if one.SHA != f.stray || one.Commit.Verification.Reason != "gpg.error.no_gpg_keys_found" {
		t.Errorf("main's commit %+v", one)
	}
	e.Do("GET", "repos/alice/proj/git/commits/"+f.signed[:10], nil, cred).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/proj/git/commits/0123456789012345678901234567890123456789", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj/git/commits/a..b", nil, cred).Expect(t, http.StatusUnprocessableEntity)

	// The branch API shows the same verdict for a branch's tip.
	var b models.Branch
	e.Do("GET", "repos/alice/proj/branches/main", nil, cred).Expect(t, http.StatusOK).JSON(t, &b)
	if b.Commit.Verification == nil || b.Commit.Verification.Reason != "gpg.error.no_gpg_keys_found" {
		t.Errorf("branch tip verification %+v", b.Commit.Verification)
	}

	// A signature by alice's key over other content: her key is known but
	// does not verify it.
	stage(t, f.git, f.clone, "t.txt", "t\n")
	forged := writeCommit(t, f.git, f.clone, f.aliceKey, "Alice", "alice@example.com", "pay bob", "pay alice")
	f.git.must(f.clone, "push", "-q", "origin", "main")
	e.Do("GET", "repos/alice/proj/git/commits/"+forged, nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if v := one.Commit.Verification; v.Verified || v.Reason != "gpg.error.probable_bad_signature" || v.Signer != nil {
		t.Errorf("forged signature: %+v", v)
	}

	// The same commit once alice removes her key: nothing vouches for it.
	e.Do("DELETE", fmt.Sprintf("user/gpg_keys/%d", f.aliceKeyID), nil, cred).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/proj/git/commits/"+f.signed, nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if v := one.Commit.Verification; v.Verified || v.Reason != "gpg.error.no_gpg_keys_found" {
		t.Errorf("after the key is deleted: %+v", v)
	}
}

// TestRepoCommitsListing: paging headers (the common ones and the
// reference's X-* ones), the sha, path, not, since and until filters, the
// stat, files and verification switches, and who may read.
func TestRepoCommitsListing(t *testing.T) {
	t.Parallel()
	f := newCommitsFixture(t)
	e, cred := f.e, apitest.Basic(f.alice)
	list := func(query string) ([]*models.Commit, *apitest.Response) {
		t.Helper()
		var out []*models.Commit
		r := e.Do("GET", "repos/alice/proj/commits"+query, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &out)
		return out, r
	}
	cs, r := list("?limit=2")
	if got := commitSHAs(cs); len(got) != 2 || got[0] != f.stray || got[1] != f.sub {
		t.Errorf("first page %v", got)
	}
	h := r.Header
	if h.Get("X-Total-Count") != "5" || h.Get("X-Total") != "5" || h.Get("X-Page") != "1" || h.Get("X-PerPage") != "2" ||
		h.Get("X-PageCount") != "3" || h.Get("X-HasMore") != "true" || !strings.Contains(h.Get("Link"), `rel="next"`) {
		t.Errorf("first page headers %v", h)
	}
	cs, r = list("?limit=2&page=3")
	if got := commitSHAs(cs); len(got) != 1 || got[0] != f.initial || r.Header.Get("X-HasMore") != "false" {
		t.Errorf("last page %v, headers %v", got, r.Header)
	}
	cs, _ = list("?limit=2&page=9")
	if len(cs) != 0 {
		t.Errorf("page past the end: %v", commitSHAs(cs))
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"?sha=" + f.signed, []string{f.signed, f.unsigned, f.initial}},
		{"?sha=main&not=" + f.unsigned, []string{f.stray, f.sub, f.signed}},
		{"?path=dir", []string{f.sub, f.signed}},
		{"?path=dir/b.txt", []string{f.signed}},
		{"?path=a.txt", []string{f.stray, f.unsigned}},
		{"?path=/dir/", []string{f.sub, f.signed}},
		{"?path=nothing/here", []string{}},
		{"?until=2001-01-01T00:00:00Z", []string{}},
		{"?since=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), []string{f.stray, f.sub, f.signed, f.unsigned, f.initial}},
	} {
		cs, r := list(c.query)
		if got := commitSHAs(cs); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
		if r.Header.Get("X-Total-Count") != fmt.Sprint(len(c.want)) {
			t.Errorf("%s: X-Total-Count %s, want %d", c.query, r.Header.Get("X-Total-Count"), len(c.want))
		}
	}
	_, r = list("?path=dir&limit=1")
	if r.Header.Get("X-Total-Count") != "2" || r.Header.Get("X-HasMore") != "true" {
		t.Errorf("path filter paging headers %v", r.Header)
	}

	// The switches leave their parts out (null, as the reference sends).
	r = e.Do("GET", "repos/alice/proj/commits?stat=false&files=false&verification=false&limit=1", nil, cred).Expect(t, http.StatusOK)
	var raw []map[string]json.RawMessage
	r.JSON(t, &raw)
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(raw[0]["commit"], &inner); err != nil {
		t.Fatal(err)
	}
	if string(raw[0]["stats"]) != "null" || string(raw[0]["files"]) != "null" || string(inner["verification"]) != "null" {
		t.Errorf("switched off: stats %s files %s verification %s", raw[0]["stats"], raw[0]["files"], inner["verification"])
	}
	var one map[string]json.RawMessage
	e.Do("GET", "repos/alice/proj/git/commits/main?stat=false", nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if string(one["stats"]) != "null" || string(one["files"]) == "null" {
		t.Errorf("single commit without stats: %s / %s", one["stats"], one["files"])
	}

	// Unknown refs, bad input.
	e.Do("GET", "repos/alice/proj/commits?sha=no-such-branch", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj/commits?not=no-such-branch", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj/commits?path=../etc", nil, cred).Expect(t, http.StatusUnprocessableEntity)

	// Who may read: the repository is private.
	for _, c := range []struct {
		name   string
		cred   apitest.Cred
		status int
	}{
		{"anonymous", nil, http.StatusNotFound},
		{"outsider", apitest.Basic(f.bob), http.StatusNotFound},
		{"owner", cred, http.StatusOK},
		{"site admin", apitest.Basic(e.Admin), http.StatusOK},
	} {
		e.Do("GET", "repos/alice/proj/commits", nil, c.cred).Expect(t, c.status)
		e.Do("GET", "repos/alice/proj/git/commits/main", nil, c.cred).Expect(t, c.status)
	}

	// An empty repository has no history to list.
	roCreateRepo(t, e, cred, map[string]any{"name": "empty"})
	r = e.Do("GET", "repos/alice/empty/commits", nil, cred).Expect(t, http.StatusConflict)
	if !strings.Contains(string(r.Body), "Git Repository is empty.") {
		t.Errorf("empty repository: %s", r.Body)
	}
}

// TestRepoCommitsStatementCount: a page of 2 and a page of 5 commits (each
// with signatures by registered keys) run the same number of SQL
// statements: accounts and keys are read once per page.
func TestRepoCommitsStatementCount(t *testing.T) {
	t.Parallel()
	f := newCommitsFixture(t)
	e, cred := f.e, apitest.Basic(f.alice)
	counts := map[int]int64{}
	for _, limit := range []int{2, 5} {
		before := e.Statements()
		e.Do("GET", fmt.Sprintf("repos/alice/proj/commits?limit=%d", limit), nil, cred).Expect(t, http.StatusOK)
		counts[limit] = e.Statements() - before
	}
	if counts[2] != counts[5] {
		t.Errorf("statements: %d for a page of 2, %d for a page of 5", counts[2], counts[5])
	}
}

// instanceKey is an armored private key for the instance, without a
// passphrase.
func instanceKey(t *testing.T) (*openpgp.Entity, []byte) {
	t.Helper()
	ent := gpgKey(t, "Repohost Signer", "signer@repohost.example", packet.PubKeyAlgoEdDSA, true, time.Now().Add(-time.Hour), 0)
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ent.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return ent, b.Bytes()
}

// TestInstanceSignedCommits: with a signing key the server signs the
// commits it writes (auto-init, contents API), reports them verified with
// the instance as signer, and a branch that requires signed commits takes
// them.
func TestInstanceSignedCommits(t *testing.T) {
	t.Parallel()
	ent, armored := instanceKey(t)
	e := apitest.NewWithDeps(t, func(d *app.Deps) {
		s, err := signing.ParseSigner(armored, store.SystemClock{})
		if err != nil {
			t.Fatal(err)
		}
		d.Signer = s
	})
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	keyID := signing.KeyIDString(ent.PrimaryKey.KeyId)
	wantReason := "Repohost Signer / " + keyID
	check := func(what string, v *models.PayloadCommitVerification) {
		t.Helper()
		if v == nil || !v.Verified || v.Reason != wantReason || v.Signer == nil || v.Signer.Name != "Repohost Signer" ||
			v.Signer.Email != "signer@repohost.example" {
			t.Errorf("%s: %+v", what, v)
		}
	}
	var one models.Commit
	e.Do("GET", "repos/alice/proj/git/commits/main", nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	check("auto-init commit", one.Commit.Verification)

	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "enable_push": true, "require_signed_commits": true,
	}, cred).Expect(t, http.StatusCreated)
	var fr models.FileResponse
	e.Do("POST", "repos/alice/proj/contents/a.txt", map[string]any{"content": b64("a")}, cred).
		Expect(t, http.StatusCreated).JSON(t, &fr)
	check("contents create", fr.Verification)
	var list []*models.Commit
	e.Do("GET", "repos/alice/proj/commits", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 2 || list[0].SHA != fr.Commit.SHA {
		t.Fatalf("history %v", commitSHAs(list))
	}
	check("listed contents commit", list[0].Commit.Verification)
	var fd models.FileDeleteResponse
	e.Do("DELETE", "repos/alice/proj/contents/a.txt", map[string]any{"sha": fr.Content.SHA}, cred).
		Expect(t, http.StatusOK).JSON(t, &fd)
	check("contents delete", fd.Verification)
	// git itself agrees the signature is good.
	git := newGitCLI(t)
	dir := filepath.Join(t.TempDir(), "proj")
	git.must(filepath.Dir(dir), "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "proj"), dir)
	payload := git.must(dir, "cat-file", "commit", "HEAD")
	if !strings.Contains(payload, "gpgsig -----BEGIN PGP SIGNATURE-----") {
		t.Errorf("HEAD carries no signature:\n%s", payload)
	}
}

// TestRequireSignedCommitsVerifies: a branch that requires signed commits
// takes a commit a registered key verifies and refuses one whose
// signature no registered key verifies, like an unsigned one.
func TestRequireSignedCommitsVerifies(t *testing.T) {
	t.Parallel()
	f := newCommitsFixture(t)
	e, cred := f.e, apitest.Basic(f.alice)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "enable_push": true, "require_signed_commits": true,
	}, cred).Expect(t, http.StatusCreated)
	before := mainAt(t, e, cred)
	stage(t, f.git, f.clone, "x.txt", "x\n")
	forged := gpgCommit(t, f.git, f.clone, f.strayKey, "Alice", "alice@example.com", "not verifiable")
	if out := f.git.refuse(f.clone, "push", "origin", "main"); !strings.Contains(out, "branch main is protected from unverified commit "+forged) {
		t.Fatalf("push of an unverified signature: %s", out)
	}
	if got := mainAt(t, e, cred); got != before {
		t.Fatalf("main moved to %s", got)
	}
	f.git.must(f.clone, "reset", "-q", "--soft", before)
	good := gpgCommit(t, f.git, f.clone, f.aliceKey, "Alice", "alice@example.com", "verifiable")
	f.git.must(f.clone, "push", "-q", "origin", "main")
	if got := mainAt(t, e, cred); got != good {
		t.Fatalf("main at %s after a verified push, want %s", got, good)
	}
}

// TestSDKRepoCommits: the official SDK lists and reads commits, with
// verification, files and stats as the reference shapes them.
func TestSDKRepoCommits(t *testing.T) {
	t.Parallel()
	f := newCommitsFixture(t)
	c := sdkClient(t, f.e, gitea.SetBasicAuth(f.alice.User.Name, f.alice.Password))
	list, resp, err := c.ListRepoCommits("alice", "proj", gitea.ListCommitOptions{
		ListOptions: gitea.ListOptions{Page: 1, PageSize: 3}, Stat: true, Verification: true, Files: true,
	})
	if err != nil || resp.StatusCode != http.StatusOK || len(list) != 3 {
		t.Fatalf("ListRepoCommits: %v, %v, %d commits", err, resp, len(list))
	}
	if list[0].SHA != f.stray || list[2].SHA != f.signed || list[2].RepoCommit.Verification == nil ||
		!list[2].RepoCommit.Verification.Verified || !strings.HasPrefix(list[2].RepoCommit.Verification.Reason, "alice / ") ||
		list[2].Author == nil || list[2].Author.UserName != "alice" || list[2].Stats == nil || list[2].Stats.Total != 1 ||
		len(list[2].Files) != 1 || list[2].Files[0].Filename != "dir/b.txt" || list[2].CommitMeta == nil ||
		list[2].CommitMeta.Created.IsZero() || list[0].RepoCommit.Verification.Reason != "gpg.error.no_gpg_keys_found" {
		t.Errorf("SDK list: %+v / %+v", list[2], list[2].RepoCommit)
	}
	if resp.NextPage != 2 || resp.LastPage != 2 {
		t.Errorf("SDK paging: next %d last %d", resp.NextPage, resp.LastPage)
	}
	one, resp, err := c.GetSingleCommit("alice", "proj", f.unsigned)
	if err != nil || resp.StatusCode != http.StatusOK || one.SHA != f.unsigned || one.RepoCommit.Verification.Verified ||
		one.RepoCommit.Verification.Reason != "gpg.error.not_signed_commit" || len(one.Parents) != 1 || one.Parents[0].SHA != f.initial {
		t.Errorf("GetSingleCommit: %v %+v", err, one)
	}
	if _, resp, err := c.GetSingleCommit("alice", "proj", strings.Repeat("0", 40)); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing commit: %v %v", err, resp)
	}
}
