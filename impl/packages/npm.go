package packages

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/store"
)

// The npm registry at /api/packages/{owner}/npm/: enough of the protocol
// for npm publish, view, install, dist-tag, search and unpublish. A scoped name
// ("@scope/name") travels as one path segment with its slash escaped
// (%2F), as npm sends it, or as two.

var (
	npmNameRe = regexp.MustCompile(`\A(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*\z`)
	// semverRe is the grammar of semver.org, which npm versions follow.
	semverRe = regexp.MustCompile(`\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\z`)
	// npmTagRe keeps dist-tags out of the version grammar's way.
	npmTagRe = regexp.MustCompile(`\A[A-Za-z][-_.A-Za-z0-9]{0,127}\z`)
)

// npmRequest is a request to the npm registry, its path taken apart.
type npmRequest struct {
	w    http.ResponseWriter
	r    *http.Request
	ctx  context.Context
	name string   // the package name, scope included
	rest []string // what follows the name, unescaped
}

// splitNpmPath takes the segments after /npm/ apart: the package name (one
// segment, or two for a scope sent with its slash unescaped) and the rest.
func splitNpmPath(segs []string) (string, []string) {
	if len(segs) == 0 {
		return "", nil
	}
	if strings.HasPrefix(segs[0], "@") && !strings.Contains(segs[0], "/") && len(segs) > 1 && segs[1] != "-" && !strings.HasPrefix(segs[1], "-") {
		return segs[0] + "/" + segs[1], segs[2:]
	}
	return segs[0], segs[1:]
}

// npmSegments unescapes the segments of the request's path after /npm/.
func npmSegments(r *http.Request) ([]string, error) {
	raw := r.URL.EscapedPath()
	i := strings.Index(raw, "/npm/")
	if i < 0 {
		return nil, apierr.NotFound("not found")
	}
	var out []string
	for _, s := range strings.Split(strings.Trim(raw[i+len("/npm/"):], "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, apierr.BadRequest("invalid path")
		}
		out = append(out, u)
	}
	return out, nil
}

// ServeNpm dispatches every request under /api/packages/{owner}/npm/.
func (h Handlers) ServeNpm(w http.ResponseWriter, r *http.Request) {
	if err := h.serveNpm(w, r); err != nil {
		h.Errors.Write(w, err)
	}
}

func (h Handlers) serveNpm(w http.ResponseWriter, r *http.Request) error {
	segs, err := npmSegments(r)
	if err != nil {
		return err
	}
	m := r.Method
	if len(segs) == 3 && segs[0] == "-" && segs[1] == "v1" && segs[2] == "search" && (m == http.MethodGet || m == http.MethodHead) {
		return h.npmSearch(npmRequest{w: w, r: r, ctx: r.Context()})
	}
	if len(segs) >= 3 && segs[0] == "-" && segs[1] == "package" {
		// /-/package/{name}/dist-tags[/{tag}]
		name, rest := splitNpmPath(segs[2:])
		req := npmRequest{w: w, r: r, ctx: r.Context(), name: name, rest: rest}
		switch {
		case len(rest) == 1 && rest[0] == "dist-tags" && (m == http.MethodGet || m == http.MethodHead):
			return h.npmListTags(req)
		case len(rest) == 2 && rest[0] == "dist-tags" && m == http.MethodPut:
			return h.npmAddTag(req, rest[1])
		case len(rest) == 2 && rest[0] == "dist-tags" && m == http.MethodDelete:
			return h.npmDeleteTag(req, rest[1])
		}
		return apierr.NotFound("not found")
	}
	name, rest := splitNpmPath(segs)
	req := npmRequest{w: w, r: r, ctx: r.Context(), name: name, rest: rest}
	read := m == http.MethodGet || m == http.MethodHead
	switch {
	case len(rest) == 0 && read:
		return h.npmPackument(req)
	case len(rest) == 0 && m == http.MethodPut:
		return h.npmPublish(req)
	case len(rest) == 2 && rest[0] == "-rev" && m == http.MethodPut:
		// npm unpublish first sends the document without the version;
		// the version goes with the DELETE of its tarball that follows.
		return h.npmPreviewUnpublish(req)
	case len(rest) == 2 && rest[0] == "-rev" && m == http.MethodDelete:
		return h.npmDeletePackage(req)
	case len(rest) == 3 && rest[0] == "-" && read:
		return h.npmDownload(req, rest[1], rest[2])
	case len(rest) == 2 && rest[0] == "-" && read:
		return h.npmDownload(req, "", rest[1])
	case len(rest) == 5 && rest[0] == "-" && rest[3] == "-rev" && m == http.MethodDelete:
		return h.npmDeleteVersion(req, rest[1], rest[2])
	case len(rest) == 4 && rest[0] == "-" && rest[2] == "-rev" && m == http.MethodDelete:
		return h.npmDeleteVersion(req, "", rest[1])
	}
	return apierr.NotFound("not found")
}

// owner checks the caller and loads the owner (writable when write) and
// validates the package name.
func (h Handlers) npmOwner(req npmRequest, write bool) (*auth.Principal, *store.User, error) {
	p, owner, err := h.registryCaller(req.r, write)
	if err != nil {
		return nil, nil, err
	}
	if !npmNameRe.MatchString(req.name) {
		return nil, nil, apierr.BadRequest("invalid package name %q", req.name)
	}
	return p, owner, nil
}

func (h Handlers) npmPackage(req npmRequest, write bool) (*auth.Principal, *store.User, *store.Package, error) {
	p, owner, err := h.npmOwner(req, write)
	if err != nil {
		return nil, nil, nil, err
	}
	pkg, err := h.Store.Packages().Find(req.ctx, owner.ID, "npm", req.name)
	return p, owner, pkg, err
}

// npmRegistryURL is the registry's address for owner, as .npmrc names it.
func npmRegistryURL(r *http.Request, owner *store.User) string {
	return app.BaseURL(r) + "api/packages/" + url.PathEscape(owner.Name) + "/npm"
}

// npmTarballName is the file name of a version's tarball: the name
// without its scope, then the version.
func npmTarballName(name, version string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name + "-" + version + ".tgz"
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// npmPublishDoc is what npm publish sends: the version's package.json
// under versions, the tarball base64-encoded under _attachments.
type npmPublishDoc struct {
	Name        string                     `json:"name"`
	DistTags    map[string]string          `json:"dist-tags"`
	Versions    map[string]json.RawMessage `json:"versions"`
	Attachments map[string]struct {
		Data string `json:"data"`
	} `json:"_attachments"`
}

func (h Handlers) npmPublish(req npmRequest) error {
	p, owner, err := h.npmOwner(req, true)
	if err != nil {
		return err
	}
	if len(req.name) > MaxPackageName {
		return apierr.BadRequest("the package name is longer than %d bytes", MaxPackageName)
	}
	// The tarball travels base64-encoded (4 bytes for 3) next to at most
	// a JSON body's worth of metadata: a larger declared body is refused
	// before any of it is read, and the body is cut off past that.
	limit, meta := h.Packages.FileLimit("npm"), h.Config.MaxBodyBytes
	if limit >= 0 {
		maxDoc := (limit+2)/3*4 + meta
		if req.r.ContentLength > maxDoc {
			return h.Packages.FileTooLarge("npm")
		}
		req.r.Body = http.MaxBytesReader(req.w, req.r.Body, maxDoc)
	}
	// Each publish holds a temporary file and a disk stream, not memory;
	// the slots keep many at once from starving the disk.
	release, err := h.Heavy().Acquire(req.ctx)
	if err != nil {
		return err
	}
	defer release()
	tmp, err := h.TempFile()
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	sum := sha512.New()
	out := &limitedWriter{w: io.MultiWriter(tmp, sum), left: limit}
	var doc npmPublishDoc
	if err := readNpmPublish(bodyReader{req.r.Body}, meta, &doc, out); err != nil {
		switch {
		case errors.Is(err, errFileTooLarge):
			return h.Packages.FileTooLarge("npm")
		case errors.Is(err, errNpmDocTooLarge):
			return apierr.PayloadTooLarge("the package document's metadata is larger than the %d bytes allowed", meta)
		}
		return UploadError(err)
	}
	if doc.Name != req.name || len(doc.Versions) != 1 || len(doc.Attachments) != 1 {
		return apierr.BadRequest("the document must name this package and hold exactly one version and one tarball")
	}
	var version string
	var metadata json.RawMessage
	for v, m := range doc.Versions {
		version, metadata = v, m
	}
	var fields struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Dist    struct {
			Integrity string `json:"integrity"`
		} `json:"dist"`
	}
	if err := json.Unmarshal(metadata, &fields); err != nil {
		return apierr.BadRequest("invalid version document: %v", err)
	}
	if len(version) > MaxPackageVersion || !semverRe.MatchString(version) || fields.Version != version || fields.Name != req.name {
		return apierr.BadRequest("invalid version %q", truncate(version, 64))
	}
	if out.n == 0 {
		return apierr.BadRequest("the tarball is empty")
	}
	if want, ok := strings.CutPrefix(fields.Dist.Integrity, "sha512-"); ok {
		if base64.StdEncoding.EncodeToString(sum.Sum(nil)) != want {
			return apierr.BadRequest("the tarball does not match its integrity")
		}
	}
	tags := map[string]bool{}
	for tag, v := range doc.DistTags {
		if v == version && npmTagRe.MatchString(tag) {
			tags[tag] = true
		}
	}
	if len(tags) == 0 {
		tags["latest"] = true
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	v, _, err := h.Packages.AddFile(req.ctx, FileUpload{
		Owner: owner, Creator: p.User, Type: "npm", Name: req.name, Version: version, NewVersion: true,
		Metadata: string(metadata), Filename: npmTarballName(req.name, version),
		Body: tmp, Size: out.n,
	})
	if err != nil {
		return err
	}
	for tag := range tags {
		if err := h.Packages.SetTag(req.ctx, p.User, v.Package, tag, v); err != nil {
			return err
		}
	}
	return writeJSON(req.w, http.StatusCreated, map[string]bool{"ok": true})
}

// npmDist is how a version's tarball is found and checked.
type npmDist struct {
	Shasum    string `json:"shasum"`
	Integrity string `json:"integrity"`
	Tarball   string `json:"tarball"`
}

// npmPackument builds the package document: every version's package.json
// with its dist, the dist-tags and publication times. A package without a
// "latest" tag gets one (the newest release, else the newest version), as
// installers need it.
func (h Handlers) npmPackument(req npmRequest) error {
	_, owner, pkg, err := h.npmPackage(req, false)
	if err != nil {
		return err
	}
	vs, files, err := h.Store.Packages().AllVersions(req.ctx, pkg.ID)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return apierr.NotFound("not found")
	}
	tags, err := h.npmTags(req.ctx, pkg, vs)
	if err != nil {
		return err
	}
	registry := npmRegistryURL(req.r, owner)
	versions := map[string]json.RawMessage{}
	times := map[string]string{}
	for _, v := range vs {
		fs := files[v.ID]
		if len(fs) == 0 {
			continue
		}
		doc := map[string]json.RawMessage{}
		if v.Metadata != "" {
			if err := json.Unmarshal([]byte(v.Metadata), &doc); err != nil {
				return err
			}
		}
		sum, _ := hex.DecodeString(fs[0].Blob.HashSHA512)
		dist, _ := json.Marshal(npmDist{
			Shasum:    fs[0].Blob.HashSHA1,
			Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum),
			Tarball:   registry + "/" + url.PathEscape(pkg.Name) + "/-/" + url.PathEscape(v.Version) + "/" + url.PathEscape(fs[0].Name),
		})
		doc["dist"] = dist
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		versions[v.Version] = raw
		times[v.Version] = v.CreatedAt.UTC().Format(time.RFC3339)
	}
	times["created"] = vs[0].CreatedAt.UTC().Format(time.RFC3339)
	times["modified"] = vs[len(vs)-1].CreatedAt.UTC().Format(time.RFC3339)
	return writeJSON(req.w, http.StatusOK, map[string]any{
		"_id":       pkg.Name,
		"name":      pkg.Name,
		"dist-tags": tags,
		"versions":  versions,
		"time":      times,
	})
}

// npmTags is the package's dist-tags, with "latest" filled in when unset.
func (h Handlers) npmTags(ctx context.Context, pkg *store.Package, vs []*store.PackageVersion) (map[string]string, error) {
	rows, err := h.Store.Packages().ListTags(ctx, pkg.ID)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*store.PackageVersion, len(vs))
	for _, v := range vs {
		byID[v.ID] = v
	}
	tags := map[string]string{}
	for _, t := range rows {
		if v := byID[t.VersionID]; v != nil {
			tags[t.Tag] = v.Version
		}
	}
	if _, ok := tags["latest"]; !ok && len(vs) > 0 {
		latest := vs[len(vs)-1]
		for i := len(vs) - 1; i >= 0; i-- {
			if !strings.Contains(strings.SplitN(vs[i].Version, "+", 2)[0], "-") {
				latest = vs[i]
				break
			}
		}
		tags["latest"] = latest.Version
	}
	return tags, nil
}

// npmFile finds a version's tarball by version and file name, or by file
// name alone when version is "".
func (h Handlers) npmFile(ctx context.Context, pkg *store.Package, version, filename string) (*store.PackageVersion, *store.PackageFile, error) {
	if version != "" {
		v, err := h.Store.Packages().FindVersion(ctx, pkg.ID, version)
		if err != nil {
			return nil, nil, err
		}
		f, err := h.Store.Packages().FindFile(ctx, v.ID, filename)
		return v, f, err
	}
	vs, files, err := h.Store.Packages().AllVersions(ctx, pkg.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range vs {
		for _, f := range files[v.ID] {
			if strings.EqualFold(f.Name, filename) {
				return v, f, nil
			}
		}
	}
	return nil, nil, apierr.NotFound("not found")
}

func (h Handlers) npmDownload(req npmRequest, version, filename string) error {
	_, _, pkg, err := h.npmPackage(req, false)
	if err != nil {
		return err
	}
	_, f, err := h.npmFile(req.ctx, pkg, version, filename)
	if err != nil {
		return err
	}
	h.serveFile(req.w, req.r, f)
	return nil
}

func (h Handlers) npmPreviewUnpublish(req npmRequest) error {
	if _, _, _, err := h.npmPackage(req, true); err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, map[string]bool{"ok": true})
}

func (h Handlers) npmDeleteVersion(req npmRequest, version, filename string) error {
	p, _, pkg, err := h.npmPackage(req, true)
	if err != nil {
		return err
	}
	v, _, err := h.npmFile(req.ctx, pkg, version, filename)
	if err != nil {
		return err
	}
	v.Package = pkg
	if err := h.Packages.DeleteVersion(req.ctx, p.User, v); err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, map[string]bool{"ok": true})
}

func (h Handlers) npmDeletePackage(req npmRequest) error {
	p, _, pkg, err := h.npmPackage(req, true)
	if err != nil {
		return err
	}
	if err := h.Packages.DeletePackage(req.ctx, p.User, pkg); err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, map[string]bool{"ok": true})
}

func (h Handlers) npmListTags(req npmRequest) error {
	_, _, pkg, err := h.npmPackage(req, false)
	if err != nil {
		return err
	}
	vs, _, err := h.Store.Packages().AllVersions(req.ctx, pkg.ID)
	if err != nil {
		return err
	}
	tags, err := h.npmTags(req.ctx, pkg, vs)
	if err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, tags)
}

func (h Handlers) npmAddTag(req npmRequest, tag string) error {
	p, _, pkg, err := h.npmPackage(req, true)
	if err != nil {
		return err
	}
	if !npmTagRe.MatchString(tag) {
		return apierr.BadRequest("invalid tag %q", tag)
	}
	var version string
	req.r.Body = http.MaxBytesReader(req.w, req.r.Body, 1<<10)
	if err := json.NewDecoder(req.r.Body).Decode(&version); err != nil {
		return apierr.BadRequest("the body must be the version as a JSON string")
	}
	v, err := h.Store.Packages().FindVersion(req.ctx, pkg.ID, version)
	if err != nil {
		return err
	}
	if err := h.Packages.SetTag(req.ctx, p.User, pkg, tag, v); err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, map[string]bool{"ok": true})
}

func (h Handlers) npmDeleteTag(req npmRequest, tag string) error {
	p, _, pkg, err := h.npmPackage(req, true)
	if err != nil {
		return err
	}
	if err := h.Packages.RemoveTag(req.ctx, p.User, pkg, tag); err != nil {
		return err
	}
	return writeJSON(req.w, http.StatusOK, map[string]bool{"ok": true})
}

// errFileTooLarge is a tarball past its type's limit, found while it was
// being decoded.
var errFileTooLarge = errors.New("the package file is too large")

// limitedWriter passes at most left bytes (all when left < 0) to w and
// counts them in n.
type limitedWriter struct {
	w    io.Writer
	left int64
	n    int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.left >= 0 && int64(len(p)) > l.left-l.n {
		return 0, errFileTooLarge
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
