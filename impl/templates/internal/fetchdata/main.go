// Command fetchdata refreshes impl/templates/data from the packages that
// ship the reference's template collections, at pinned versions:
//
//   - the Go module code.gitea.io/gitea (through the Go module proxy, so
//     its checksum is verified against the checksum database): every
//     .gitignore of the github/gitignore collection as the reference
//     flattens it (options/gitignore), its issue-label sets
//     (options/label), its README template (options/readme) and the
//     license texts it ships (options/license);
//   - the npm package spdx-license-list: the whole SPDX license list with
//     its texts, for the identifiers the reference does not ship itself.
//
// Data only: no code of either package is used. Run it through
// `go generate ./impl/templates` (needs go and npm on PATH); bump a
// version by editing the go:generate line in impl/templates/templates.go.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	giteaVersion := flag.String("gitea", "", "version of the Go module code.gitea.io/gitea")
	spdxVersion := flag.String("spdx", "", "version of the npm package spdx-license-list")
	out := flag.String("out", "data", "data directory to rewrite")
	flag.Parse()
	if *giteaVersion == "" || *spdxVersion == "" {
		log.Fatal("both -gitea and -spdx versions are required (pin them)")
	}
	tmp, err := os.MkdirTemp("", "fetchdata")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	gitea, err := downloadModule(tmp, "code.gitea.io/gitea", *giteaVersion)
	if err != nil {
		log.Fatal(err)
	}
	spdx, err := downloadSPDX(tmp, *spdxVersion)
	if err != nil {
		log.Fatal(err)
	}

	for _, kind := range []string{"gitignore", "label", "readme", "license"} {
		if err := os.RemoveAll(filepath.Join(*out, kind)); err != nil {
			log.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(*out, kind), 0o755); err != nil {
			log.Fatal(err)
		}
	}
	counts := map[string]int{}
	for _, kind := range []string{"gitignore", "label", "readme"} {
		n, err := copyDir(filepath.Join(gitea.Dir, "options", kind), filepath.Join(*out, kind))
		if err != nil {
			log.Fatal(err)
		}
		counts[kind] = n
	}
	// The SPDX texts first, each ending in a newline as SPDX's own text
	// files do (the npm package trims it); then the reference's copies
	// over them, so the licenses the reference ships are byte for byte
	// the reference's.
	for id, l := range spdx.licenses {
		text := l.LicenseText
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if err := writeFile(filepath.Join(*out, "license", id), []byte(text)); err != nil {
			log.Fatal(err)
		}
	}
	own, err := copyDir(filepath.Join(gitea.Dir, "options", "license"), filepath.Join(*out, "license"))
	if err != nil {
		log.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(*out, "license"))
	if err != nil {
		log.Fatal(err)
	}
	counts["license"] = len(entries)

	source := fmt.Sprintf(`# Where these files come from

Written by impl/templates/internal/fetchdata (go generate ./impl/templates); do not edit by hand.

- gitignore/, label/, readme/ and %d files of license/: Go module %s@%s
  (go.sum line: %s %s %s), directory options/ of the module.
- license/, every other file: npm package spdx-license-list@%s (%s), field
  licenseText of spdx-full.json, with a final newline.

Counts: %d gitignore templates, %d label sets, %d readme templates, %d licenses.
`, own, gitea.Path, gitea.Version, gitea.Path, gitea.Version, gitea.Sum,
		*spdxVersion, spdx.integrity,
		counts["gitignore"], counts["label"], counts["readme"], counts["license"])
	if err := writeFile(filepath.Join(*out, "SOURCE.md"), []byte(source)); err != nil {
		log.Fatal(err)
	}
	fmt.Print(source)
}

type module struct {
	Path, Version, Dir, Sum, Error string
}

// downloadModule fetches path@version into the module cache with the go
// command, from a scratch module so the project's go.mod is left alone.
func downloadModule(tmp, path, version string) (*module, error) {
	dir := filepath.Join(tmp, "mod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "go.mod"), []byte("module fetchdata\n")); err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	var m module
	if jerr := json.Unmarshal(outb, &m); jerr != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %v %v", path, version, err, jerr)
	}
	if m.Error != "" || err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %s %v", path, version, m.Error, err)
	}
	return &m, nil
}

type spdxLicense struct {
	Name        string `json:"name"`
	LicenseText string `json:"licenseText"`
}

type spdxData struct {
	licenses  map[string]spdxLicense
	integrity string
}

// downloadSPDX fetches the npm package with npm pack and reads its
// spdx-full.json.
func downloadSPDX(tmp, version string) (*spdxData, error) {
	cmd := exec.Command("npm", "pack", "--json", "--pack-destination", tmp, "spdx-license-list@"+version)
	cmd.Dir = tmp
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm pack spdx-license-list@%s: %w", version, err)
	}
	var packed []struct {
		Filename  string `json:"filename"`
		Integrity string `json:"integrity"`
		Version   string `json:"version"`
	}
	if err := json.Unmarshal(outb, &packed); err != nil || len(packed) != 1 {
		return nil, fmt.Errorf("npm pack output %q: %v", outb, err)
	}
	if packed[0].Version != version {
		return nil, fmt.Errorf("npm packed version %s, want %s", packed[0].Version, version)
	}
	raw, err := readFromTarball(filepath.Join(tmp, packed[0].Filename), "package/spdx-full.json")
	if err != nil {
		return nil, err
	}
	d := &spdxData{integrity: packed[0].Integrity}
	if err := json.Unmarshal(raw, &d.licenses); err != nil {
		return nil, fmt.Errorf("spdx-full.json: %w", err)
	}
	for id := range d.licenses {
		if id == "" || strings.ContainsAny(id, "/\\") || strings.HasPrefix(id, ".") {
			return nil, fmt.Errorf("unexpected license id %q", id)
		}
	}
	return d, nil
}

func readFromTarball(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no %s", path, name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name {
			var b bytes.Buffer
			_, err := io.Copy(&b, tr)
			return b.Bytes(), err
		}
	}
}

// copyDir copies the regular files of src (flat) into dst and returns how
// many it copied.
func copyDir(src, dst string) (int, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return 0, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			return 0, err
		}
		if err := writeFile(filepath.Join(dst, n), b); err != nil {
			return 0, err
		}
	}
	return len(names), nil
}

// writeFile writes a data file readable by all (the module cache's copies
// are read-only).
func writeFile(path string, b []byte) error {
	return os.WriteFile(path, b, 0o644)
}
