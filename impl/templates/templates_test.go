package templates

import (
	"slices"
	"strings"
	"testing"
)

func TestCollections(t *testing.T) {
	t.Parallel()
	ign := Gitignores()
	if len(ign) < 200 || !slices.IsSorted(ign) {
		t.Fatalf("%d gitignore templates, sorted %v", len(ign), slices.IsSorted(ign))
	}
	for _, n := range []string{"C", "C++", "Go", "Node", "Python", "Rust", "Java", "macOS", "Windows", "JetBrains", "VisualStudio"} {
		if !slices.Contains(ign, n) {
			t.Errorf("gitignore %s missing", n)
		}
	}
	lic := Licenses()
	if len(lic) < 700 || lic[0] != "Apache-2.0" || lic[1] != "MIT" || !slices.IsSorted(lic[2:]) {
		t.Fatalf("%d licenses, first %v", len(lic), lic[:3])
	}
	for _, n := range []string{"GPL-3.0-or-later", "GPL-3.0-only", "GPL-3.0", "AGPL-3.0-or-later", "BSD-3-Clause", "MPL-2.0", "0BSD", "Unlicense"} {
		if !slices.Contains(lic, n) {
			t.Errorf("license %s missing", n)
		}
	}
	if r := Readmes(); !slices.Equal(r, []string{"Default"}) {
		t.Errorf("readmes %v", r)
	}
	if s := LabelSets(); !slices.Equal(s, []string{"Advanced", "Default"}) {
		t.Errorf("label sets %v", s)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{{"c++", "C++"}, {"GO", "Go"}, {"node", "Node"}, {"macos", "macOS"}} {
		if got, text, ok := Gitignore(c.in); !ok || got != c.want || text == "" {
			t.Errorf("Gitignore(%q) = %q, %v", c.in, got, ok)
		}
	}
	if _, _, ok := Gitignore("Cobol"); ok {
		t.Error("Cobol found")
	}
	for _, bad := range []string{"", "../license/MIT", "C/../Go", "."} {
		if _, _, ok := Gitignore(bad); ok {
			t.Errorf("Gitignore(%q) found", bad)
		}
	}
	if got, _, ok := License("mit"); !ok || got != "MIT" {
		t.Errorf("License(mit) = %q %v", got, ok)
	}
	if got, _, ok := License("gpl-3.0-or-later"); !ok || got != "GPL-3.0-or-later" {
		t.Errorf("License(gpl-3.0-or-later) = %q %v", got, ok)
	}
	if got, _, err := LabelSet("default"); err != nil || got != "Default" {
		t.Errorf("LabelSet(default) = %q %v", got, err)
	}
	if _, _, err := LabelSet("Fancy"); err == nil || !strings.Contains(err.Error(), `"Fancy"`) {
		t.Errorf("LabelSet(Fancy) err %v", err)
	}
}

// The reference's MIT text has trailing blanks on some lines; they stay.
const mitFilled = "MIT License\n\nCopyright (c) 2026 alice\n\n" +
	"Permission is hereby granted, free of charge, to any person obtaining a copy of this software and \n" +
	"associated documentation files (the \"Software\"), to deal in the Software without restriction, including \n" +
	"without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell \n" +
	"copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the \n" +
	"following conditions:\n\n" +
	"The above copyright notice and this permission notice shall be included in all copies or substantial \n" +
	"portions of the Software.\n\n" +
	"THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT \n" +
	"LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO \n" +
	"EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER \n" +
	"IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE \n" +
	"USE OR OTHER DEALINGS IN THE SOFTWARE.\n"

func TestFillLicense(t *testing.T) {
	t.Parallel()
	v := LicenseValues{Owner: "alice", Email: "alice@example.com", Repo: "tool", Year: "2026"}
	id, text, _ := License("MIT")
	if got := FillLicense(id, text, v); got != mitFilled {
		t.Fatalf("MIT:\n%q\nwant\n%q", got, mitFilled)
	}
	id, text, _ = License("Apache-2.0")
	if got := FillLicense(id, text, v); !strings.Contains(got, "\nCopyright 2026 alice\n") {
		t.Fatalf("Apache-2.0 not filled: %q", got[len(got)-700:])
	}
	id, text, _ = License("GPL-3.0-or-later")
	got := FillLicense(id, text, v)
	for _, want := range []string{"     tool\n     Copyright (C) 2026  alice\n", "     tool  Copyright (C) 2026  alice\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("GPL-3.0-or-later lacks %q", want)
		}
	}
	if strings.Contains(got, "<year>") || strings.Contains(got, "<name of author>") || !strings.HasSuffix(got, "\n") {
		t.Error("GPL-3.0-or-later left placeholders")
	}
	// 0BSD fills only its copyright line: AUTHOR elsewhere is a word.
	id, text, _ = License("0BSD")
	got = FillLicense(id, text, v)
	if !strings.HasPrefix(got, "Copyright (C) 2026 by alice alice@example.com\n") || !strings.Contains(got, "AUTHOR") {
		t.Errorf("0BSD: %q", got)
	}
	// A CR before a newline goes, and the last line gets its newline.
	if got := FillLicense("X", "a <year>\r\nb", v); got != "a 2026\nb\n" {
		t.Errorf("line ends: %q", got)
	}
}

// Every common placeholder is spelled in some license text, so the list
// does not go stale when the data is refreshed.
func TestPlaceholdersOccur(t *testing.T) {
	t.Parallel()
	all := append(append(append(append([]string(nil), commonPlaceholders.owner...), commonPlaceholders.email...),
		commonPlaceholders.repo...), commonPlaceholders.year...)
	seen := map[string]bool{}
	for _, id := range Licenses() {
		_, text, _ := License(id)
		for _, p := range all {
			if strings.Contains(text, p) {
				seen[p] = true
			}
		}
	}
	for _, p := range all {
		if !seen[p] {
			t.Errorf("placeholder %q occurs in no license", p)
		}
	}
}

func TestLabelSets(t *testing.T) {
	t.Parallel()
	_, def, err := LabelSet("Default")
	if err != nil {
		t.Fatal(err)
	}
	want := []Label{
		{Name: "bug", Color: "#ee0701", Description: "Something is not working"},
		{Name: "duplicate", Color: "#cccccc", Description: "This issue or pull request already exists"},
		{Name: "enhancement", Color: "#84b6eb", Description: "New feature"},
		{Name: "help wanted", Color: "#128a0c", Description: "Need some help"},
		{Name: "invalid", Color: "#e6e6e6", Description: "Something is wrong"},
		{Name: "question", Color: "#cc317c", Description: "More information is needed"},
		{Name: "wontfix", Color: "#ffffff", Description: "This won't be fixed"},
	}
	if !slices.Equal(def, want) {
		t.Fatalf("Default:\n%+v\nwant\n%+v", def, want)
	}
	_, adv, err := LabelSet("Advanced")
	if err != nil {
		t.Fatal(err)
	}
	if len(adv) < 15 || adv[0] != (Label{Name: "Kind/Bug", Color: "#ee0701", Description: "Something is not working"}) {
		t.Fatalf("Advanced: %d, first %+v", len(adv), adv[0])
	}
	var exclusive int
	for _, l := range adv {
		if l.Exclusive {
			exclusive++
			if !strings.Contains(l.Name, "/") {
				t.Errorf("exclusive label %q has no scope", l.Name)
			}
		}
		if _, err := NormalizeColor(l.Color); err != nil || len(l.Color) != 7 {
			t.Errorf("label %q color %q", l.Name, l.Color)
		}
	}
	if exclusive == 0 {
		t.Error("Advanced has no exclusive label")
	}
	if i := slices.IndexFunc(adv, func(l Label) bool { return l.Name == "Status/Abandoned" }); i < 0 || adv[i].Color != "#222222" || !adv[i].Exclusive {
		t.Errorf("Status/Abandoned: %+v", adv)
	}
}

func TestExpandReadme(t *testing.T) {
	t.Parallel()
	_, text, ok := Readme("Default")
	if !ok {
		t.Fatal("no Default readme")
	}
	vars := map[string]string{"Name": "tool", "Description": "uses {Name}", "OwnerName": "alice"}
	if got := ExpandReadme(text, vars); got != "# tool\n\nuses {Name}" {
		t.Errorf("Default: %q", got)
	}
	if got := ExpandReadme("{Unknown} {} {Name", vars); got != "{Unknown} {} {Name" {
		t.Errorf("unknown: %q", got)
	}
	if got := NormalizeEOL("a\r\nb\rc"); got != "a\nb\nc" {
		t.Errorf("NormalizeEOL %q", got)
	}
}
