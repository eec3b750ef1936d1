package packages

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/store"
)

// The generic registry's names, as the reference accepts them.
var (
	genericNameRe = regexp.MustCompile(`\A[-_+.\w]+\z`)
	genericFileRe = regexp.MustCompile(`\A[-_+=:;.()\[\]{}~!@#$%^& \w]+\z`)
)

func checkGenericParams(name, version, filename string, withFile bool) error {
	switch {
	case !genericNameRe.MatchString(name) || len(name) > MaxPackageName:
		return apierr.BadRequest("invalid package name")
	case version == "" || strings.TrimSpace(version) != version || strings.ContainsAny(version, "/\\\x00") || len(version) > MaxPackageVersion:
		return apierr.BadRequest("invalid package version")
	case withFile && (!genericFileRe.MatchString(filename) || filename == "." || filename == ".." || len(filename) > 255):
		return apierr.BadRequest("invalid package filename")
	}
	return nil
}

// registryScope applies a token's scopes to the registries, which live
// outside /api/v1 where the authentication middleware cannot tell the
// category from the path: reading needs read:package, changing
// write:package.
func registryScope(p *auth.Principal, write bool) error {
	level := "read"
	if write {
		level = "write"
	}
	if p != nil && p.Token != nil && !p.Scopes.Allows("package", level) {
		return apierr.Forbidden("token does not have at least one of required scope(s), required=[%s:package], token scope=%s", level, p.Scopes.String())
	}
	return nil
}

// registryCaller is the caller of a registry request, checked against the
// token's scopes, and the owner it names: readable, or writable when write.
func (h Handlers) registryCaller(r *http.Request, write bool) (*auth.Principal, *store.User, error) {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	if err := registryScope(p, write); err != nil {
		return nil, nil, err
	}
	var owner *store.User
	var err error
	if write {
		owner, err = h.writeOwner(ctx, p, r.PathValue("owner"))
	} else {
		owner, err = h.readOwner(ctx, p, r.PathValue("owner"))
	}
	return p, owner, err
}

// UploadGeneric answers PUT /api/packages/{owner}/generic/{name}/{version}/{filename}:
// the body is the file, streamed to disk.
func (h Handlers) UploadGeneric(w http.ResponseWriter, r *http.Request) {
	p, owner, err := h.registryCaller(r, true)
	if err == nil {
		err = checkGenericParams(r.PathValue("name"), r.PathValue("version"), r.PathValue("filename"), true)
	}
	if err == nil {
		_, _, err = h.Packages.AddFile(r.Context(), FileUpload{
			Owner: owner, Creator: p.User, Type: "generic",
			Name: r.PathValue("name"), Version: r.PathValue("version"), Filename: r.PathValue("filename"),
			Body: r.Body, Size: r.ContentLength,
		})
	}
	if err != nil {
		h.Errors.Write(w, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// genericFile loads the named file of a generic package version.
func (h Handlers) genericFile(ctx context.Context, owner *store.User, r *http.Request) (*store.PackageVersion, *store.PackageFile, error) {
	if err := checkGenericParams(r.PathValue("name"), r.PathValue("version"), r.PathValue("filename"), r.PathValue("filename") != ""); err != nil {
		return nil, nil, err
	}
	v, err := h.findVersion(ctx, owner, "generic", r.PathValue("name"), r.PathValue("version"))
	if err != nil || r.PathValue("filename") == "" {
		return v, nil, err
	}
	f, err := h.Store.Packages().FindFile(ctx, v.ID, r.PathValue("filename"))
	return v, f, err
}

// DownloadGeneric answers GET (and HEAD) of a generic package file, with
// ranges and conditional requests.
func (h Handlers) DownloadGeneric(w http.ResponseWriter, r *http.Request) {
	_, owner, err := h.registryCaller(r, false)
	var f *store.PackageFile
	if err == nil {
		_, f, err = h.genericFile(r.Context(), owner, r)
	}
	if err != nil {
		h.Errors.Write(w, err)
		return
	}
	h.serveFile(w, r, f)
}

// serveFile sends a package file's bytes: ETag is the SHA-256, so
// If-None-Match and If-Range work across every copy of the same bytes.
func (h Handlers) serveFile(w http.ResponseWriter, r *http.Request, f *store.PackageFile) {
	err := h.ServeObject(w, r, app.Download{Store: h.Objects.Packages, Direct: h.Objects.Direct.Packages,
		Key: BlobKey(f.Blob.HashSHA256), Name: f.Name, ETag: f.Blob.HashSHA256, Modified: f.CreatedAt})
	if err != nil {
		h.Errors.Write(w, err)
	}
}

// DeleteGeneric answers DELETE of a generic package file, or of a whole
// version when the path names no file.
func (h Handlers) DeleteGeneric(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, owner, err := h.registryCaller(r, true)
	var v *store.PackageVersion
	var f *store.PackageFile
	if err == nil {
		v, f, err = h.genericFile(ctx, owner, r)
	}
	if err == nil {
		if f != nil {
			err = h.Packages.DeleteFile(ctx, p.User, v, f)
		} else {
			err = h.Packages.DeleteVersion(ctx, p.User, v)
		}
	}
	if err != nil {
		h.Errors.Write(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Mount routes the registries on mux; every handler expects an
// authenticated request (wrap with the authentication middleware).
func (h Handlers) Mount(mux *http.ServeMux, authn func(http.Handler) http.Handler) {
	const generic = "/api/packages/{owner}/generic/{name}/{version}"
	mux.Handle("PUT "+generic+"/{filename}", authn(http.HandlerFunc(h.UploadGeneric)))
	mux.Handle("GET "+generic+"/{filename}", authn(http.HandlerFunc(h.DownloadGeneric)))
	mux.Handle("DELETE "+generic+"/{filename}", authn(http.HandlerFunc(h.DeleteGeneric)))
	mux.Handle("DELETE "+generic, authn(http.HandlerFunc(h.DeleteGeneric)))
	mux.Handle("/api/packages/{owner}/npm/", authn(http.HandlerFunc(h.ServeNpm)))
}
