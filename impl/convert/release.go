package convert

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/strfmt"

	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// This file renders what lives in the git repository (contents, commits,
// tags) and the releases and release attachments built on tags.

// EscapeSegments escapes each segment of a slash-separated path for a URL,
// keeping the slashes.
func EscapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// gitAPIBase is the repository's API address without a trailing slash.
func gitAPIBase(base string, r *store.Repository) string {
	return base + "api/v1/repos/" + r.FullName()
}

// gitHTMLBase is the repository's web address without a trailing slash.
func gitHTMLBase(base string, r *store.Repository) string { return base + r.FullName() }

// releaseGhost stands in for a publisher whose account is gone, as the reference
// does.
func releaseGhost() *store.User { return &store.User{ID: -1, Name: "Ghost", LowerName: "ghost"} }

// ArchiveURL is where the archive of ref in format ("tar.gz" or "zip") is
// downloaded, outside the API as in the reference.
func ArchiveURL(base string, r *store.Repository, ref, format string) string {
	return gitHTMLBase(base, r) + "/archive/" + EscapeSegments(ref) + "." + format
}

// ReleaseAttachment renders a release file; it is downloaded at
// <base>attachments/<uuid>.
func ReleaseAttachment(base string, a *store.ReleaseAttachment) *models.Attachment {
	return &models.Attachment{
		ID:            a.ID,
		Name:          a.Name,
		Size:          a.Size,
		DownloadCount: a.DownloadCount,
		Created:       TimeOf(a.CreatedAt),
		UUID:          a.UUID,
		DownloadURL:   base + "attachments/" + url.PathEscape(a.UUID),
	}
}

// ReleaseAttachments renders a list of release files.
func ReleaseAttachments(base string, as []*store.ReleaseAttachment) []*models.Attachment {
	out := make([]*models.Attachment, 0, len(as))
	for _, a := range as {
		out = append(out, ReleaseAttachment(base, a))
	}
	return out
}

// Release renders rel of repository r (publisher and attachments loaded).
// The publisher is shown without a viewer, so with the placeholder email,
// as the reference does.
func Release(base string, r *store.Repository, rel *store.Release) *models.Release {
	publisher := rel.Publisher
	if publisher == nil {
		publisher = releaseGhost()
	}
	api := gitAPIBase(base, r) + "/releases/" + strconv.FormatInt(rel.ID, 10)
	return &models.Release{
		ID:           rel.ID,
		TagName:      rel.TagName,
		Target:       rel.Target,
		Title:        rel.Title,
		Note:         rel.Note,
		URL:          api,
		HTMLURL:      gitHTMLBase(base, r) + "/releases/tag/" + EscapeSegments(rel.TagName),
		TarURL:       ArchiveURL(base, r, rel.TagName, "tar.gz"),
		ZipURL:       ArchiveURL(base, r, rel.TagName, "zip"),
		UploadURL:    api + "/assets",
		IsDraft:      rel.IsDraft,
		IsPrerelease: rel.IsPrerelease,
		CreatedAt:    TimeOf(rel.CreatedAt),
		PublishedAt:  releasePublished(rel),
		Author:       User(base, publisher, nil),
		Attachments:  ReleaseAttachments(base, rel.Attachments),
	}
}

// Releases renders a page of releases.
func Releases(base string, r *store.Repository, rels []*store.Release) []*models.Release {
	out := make([]*models.Release, 0, len(rels))
	for _, rel := range rels {
		out = append(out, Release(base, r, rel))
	}
	return out
}

// CommitMetaOf is the short form of a commit: id, API address and date.
func CommitMetaOf(base string, r *store.Repository, c *object.Commit) *models.CommitMeta {
	return &models.CommitMeta{
		SHA:     c.Hash.String(),
		URL:     gitAPIBase(base, r) + "/git/commits/" + c.Hash.String(),
		Created: TimeOf(c.Committer.When),
	}
}

// Tag renders a git tag.
func Tag(base string, r *store.Repository, t *gitstore.TagInfo) *models.Tag {
	out := &models.Tag{
		Name:       t.Name,
		ID:         t.ID.String(),
		Message:    strings.TrimSpace(t.Message),
		TarballURL: ArchiveURL(base, r, t.Name, "tar.gz"),
		ZipballURL: ArchiveURL(base, r, t.Name, "zip"),
	}
	if t.Commit != nil {
		out.Commit = CommitMetaOf(base, r, t.Commit)
	}
	return out
}

// Tags renders a page of tags.
func Tags(base string, r *store.Repository, ts []*gitstore.TagInfo) []*models.Tag {
	out := make([]*models.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, Tag(base, r, t))
	}
	return out
}

// ContentsEntry is everything the contents API says about one tree entry.
type ContentsEntry struct {
	Ref   *gitstore.Resolved
	Entry *gitstore.Entry
	// Last is the newest commit that changed the entry (nil if unknown).
	Last *object.Commit
	// Content is sent base64-encoded when HasContent is set (files).
	Content    []byte
	HasContent bool
	// LFSOid and LFSSize name the LFS object a file that is an LFS
	// pointer points at ("" when it is none).
	LFSOid  string
	LFSSize int64
	// Target is a symlink's target.
	Target string
}

// Contents renders one entry of the contents API.
func Contents(base string, r *store.Repository, c ContentsEntry) *models.ContentsResponse {
	e := c.Entry
	refPart := string(c.Ref.Kind) + "/" + EscapeSegments(c.Ref.Name)
	self := gitAPIBase(base, r) + "/contents/" + EscapeSegments(e.Path) + "?ref=" + url.QueryEscape(c.Ref.Name)
	html := gitHTMLBase(base, r) + "/src/" + refPart + "/" + EscapeSegments(e.Path)
	gitURL := gitAPIBase(base, r) + "/git/blobs/" + e.Hash.String()
	if e.Type == gitstore.EntryDir {
		gitURL = gitAPIBase(base, r) + "/git/trees/" + e.Hash.String()
	}
	out := &models.ContentsResponse{
		Name:    e.Name,
		Path:    e.Path,
		SHA:     e.Hash.String(),
		Type:    string(e.Type),
		Size:    e.Size,
		URL:     self,
		HTMLURL: html,
		GitURL:  gitURL,
		Links:   &models.FileLinksResponse{Self: self, GitURL: gitURL, HTMLURL: html},
	}
	if e.Type == gitstore.EntryFile || e.Type == gitstore.EntrySymlink {
		out.DownloadURL = gitHTMLBase(base, r) + "/raw/" + refPart + "/" + EscapeSegments(e.Path)
	}
	if e.Type == gitstore.EntrySymlink {
		out.Target = c.Target
	}
	if c.LFSOid != "" {
		out.LfsOid, out.LfsSize = c.LFSOid, c.LFSSize
	}
	if c.HasContent {
		out.Encoding = "base64"
		out.Content = base64.StdEncoding.EncodeToString(c.Content)
	}
	if c.Last != nil {
		out.LastCommitSHA = c.Last.Hash.String()
		out.LastCommitMessage = c.Last.Message
		out.LastCommitterDate = TimeOf(c.Last.Committer.When)
		out.LastAuthorDate = TimeOf(c.Last.Author.When)
	}
	return out
}

func commitUser(s object.Signature) *models.CommitUser {
	return &models.CommitUser{Name: s.Name, Email: strfmt.Email(s.Email), Date: s.When.UTC().Format("2006-01-02T15:04:05Z07:00")}
}

// FileCommit renders the commit a contents write made.
func FileCommit(base string, r *store.Repository, c *object.Commit) *models.FileCommitResponse {
	parents := make([]*models.CommitMeta, 0, len(c.ParentHashes))
	for _, p := range c.ParentHashes {
		parents = append(parents, &models.CommitMeta{SHA: p.String(), URL: gitAPIBase(base, r) + "/git/commits/" + p.String()})
	}
	return &models.FileCommitResponse{
		SHA:       c.Hash.String(),
		URL:       gitAPIBase(base, r) + "/git/commits/" + c.Hash.String(),
		HTMLURL:   gitHTMLBase(base, r) + "/commit/" + c.Hash.String(),
		Created:   TimeOf(c.Committer.When),
		Author:    commitUser(c.Author),
		Committer: commitUser(c.Committer),
		Message:   c.Message,
		Parents:   parents,
		Tree:      &models.CommitMeta{SHA: c.TreeHash.String(), URL: gitAPIBase(base, r) + "/git/trees/" + c.TreeHash.String(), Created: TimeOf(c.Committer.When)},
	}
}

// releasePublished is a release's published_at: when it was published, or
// for a draft its creation time, which the reference sends for drafts too
// (its published_at is always set).
func releasePublished(rel *store.Release) *strfmt.DateTime {
	if rel.PublishedAt != nil {
		return Time(rel.PublishedAt)
	}
	return Time(&rel.CreatedAt)
}
