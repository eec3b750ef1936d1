package gitstore

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// ArchiveFormat is a supported archive type.
type ArchiveFormat string

const (
	ArchiveTarGz ArchiveFormat = "tar.gz"
	ArchiveZip   ArchiveFormat = "zip"
)

// ParseArchiveName splits "<ref>.tar.gz" or "<ref>.zip".
func ParseArchiveName(name string) (ref string, format ArchiveFormat, ok bool) {
	for _, f := range []ArchiveFormat{ArchiveTarGz, ArchiveZip} {
		if r, found := strings.CutSuffix(name, "."+string(f)); found && r != "" {
			return r, f, true
		}
	}
	return "", "", false
}

// WriteArchive streams the tree of c as an archive, every path under prefix
// (e.g. "repo/"). When paths is not empty only entries equal to or under one
// of them are written.
func (g *GitRepo) WriteArchive(w io.Writer, c *object.Commit, format ArchiveFormat, prefix string, paths []string) error {
	tree, err := c.Tree()
	if err != nil {
		return notFound(err, "tree")
	}
	keep := func(name string) bool {
		if len(paths) == 0 {
			return true
		}
		for _, p := range paths {
			if name == p || strings.HasPrefix(name, p+"/") {
				return true
			}
		}
		return false
	}
	when := c.Committer.When
	switch format {
	case ArchiveTarGz:
		gz := gzip.NewWriter(w)
		tw := tar.NewWriter(gz)
		err := tree.Files().ForEach(func(f *object.File) error {
			if !keep(f.Name) {
				return nil
			}
			hdr := &tar.Header{Name: prefix + f.Name, ModTime: when, Mode: 0o644, Size: f.Size, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if f.Mode == filemode.Executable {
				hdr.Mode = 0o755
			}
			if f.Mode == filemode.Symlink {
				target, err := f.Contents()
				if err != nil {
					return err
				}
				hdr.Typeflag, hdr.Linkname, hdr.Size, hdr.Mode = tar.TypeSymlink, target, 0, 0o777
				return tw.WriteHeader(hdr)
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			return copyBlob(tw, f)
		})
		if err != nil {
			return fmt.Errorf("write tar: %w", err)
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	case ArchiveZip:
		zw := zip.NewWriter(w)
		err := tree.Files().ForEach(func(f *object.File) error {
			if !keep(f.Name) {
				return nil
			}
			hdr := &zip.FileHeader{Name: prefix + f.Name, Method: zip.Deflate, Modified: when}
			switch f.Mode {
			case filemode.Executable:
				hdr.SetMode(0o755)
			case filemode.Symlink:
				hdr.SetMode(fs.ModeSymlink | 0o777)
				hdr.Method = zip.Store
			default:
				hdr.SetMode(0o644)
			}
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			return copyBlob(fw, f)
		})
		if err != nil {
			return fmt.Errorf("write zip: %w", err)
		}
		return zw.Close()
	}
	return fmt.Errorf("archive format %q: %w", format, ErrBadPath)
}

func copyBlob(w io.Writer, f *object.File) error {
	rd, err := f.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	_, err = io.Copy(w, rd)
	return err
}
