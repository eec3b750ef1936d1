package gitstore

import (
	"io"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// languageSniff is how much of a file the detector reads when its name
// alone is ambiguous (a .h file: C, C++ or Objective-C).
const languageSniff = 16 << 10

// LanguageSizes counts the bytes of each language in t, by go-enry, as
// the reference does: vendored, dot, documentation, configuration and
// generated files are left out, and only programming and markup languages
// count. Files whose name settles the language are not read.
func (g *GitRepo) LanguageSizes(t *object.Tree) (map[string]int64, error) {
	sizes := map[string]int64{}
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			return sizes, nil
		}
		if err != nil {
			return nil, err
		}
		if !entry.Mode.IsFile() || entry.Mode == filemode.Symlink {
			continue
		}
		if enry.IsVendor(name) || enry.IsDotFile(name) || enry.IsDocumentation(name) || enry.IsConfiguration(name) {
			continue
		}
		size, err := g.r.Storer.EncodedObjectSize(entry.Hash)
		if err != nil {
			return nil, notFound(err, "blob "+entry.Hash.String())
		}
		lang, safe := enry.GetLanguageByExtension(name)
		if !safe {
			lang, safe = enry.GetLanguageByFilename(name)
		}
		if !safe {
			head, err := g.blobHead(entry, languageSniff)
			if err != nil {
				return nil, err
			}
			if enry.IsGenerated(name, head) || enry.IsBinary(head) {
				continue
			}
			lang = enry.GetLanguage(name, head)
		}
		if lang == "" {
			continue
		}
		if typ := enry.GetLanguageType(lang); typ != enry.Programming && typ != enry.Markup {
			continue
		}
		sizes[lang] += size
	}
}

// blobHead reads at most n bytes from the start of e's blob.
func (g *GitRepo) blobHead(e object.TreeEntry, n int64) ([]byte, error) {
	b, err := g.r.BlobObject(e.Hash)
	if err != nil {
		return nil, notFound(err, "blob "+e.Hash.String())
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, n))
}
