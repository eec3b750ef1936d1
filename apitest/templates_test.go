package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/models"
)

// The reference's Default label set: what a repository created with
// issue_labels "Default" starts with (name, colour, description).
var referenceDefaultLabels = [][3]string{
	{"bug", "ee0701", "Something is not working"},
	{"duplicate", "cccccc", "This issue or pull request already exists"},
	{"enhancement", "84b6eb", "New feature"},
	{"help wanted", "128a0c", "Need some help"},
	{"invalid", "e6e6e6", "Something is wrong"},
	{"question", "cc317c", "More information is needed"},
	{"wontfix", "ffffff", "This won't be fixed"},
}

// referenceMIT is the LICENSE the reference writes for license "MIT",
// owner and year filled in; its text keeps SPDX's trailing blanks.
func referenceMIT(year, owner string) string {
	return "MIT License\n\nCopyright (c) " + year + " " + owner + "\n\n" +
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
}

// The first lines of github/gitignore's C and C++ templates.
const (
	gitignoreCHead   = "# Prerequisites\n*.d\n\n# Object files\n*.o\n"
	gitignoreCppHead = "# Prerequisites\n*.d\n\n# Compiled Object files\n*.slo\n"
)

func year() string { return strconv.Itoa(time.Now().Year()) }

// tplGitignore is the text of a .gitignore template as the API serves it.
func tplGitignore(t *testing.T, e *apitest.Env, name string) string {
	t.Helper()
	var info models.GitignoreTemplateInfo
	e.Do("GET", "gitignore/templates/"+name, nil, nil).Expect(t, http.StatusOK).JSON(t, &info)
	return info.Source
}

// tplLabels lists the labels of owner/name as name → [colour, description,
// exclusive].
func tplLabels(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string) map[string][3]string {
	t.Helper()
	var labels []models.Label
	e.Do("GET", "repos/"+repo+"/labels?limit=50", nil, cred).Expect(t, http.StatusOK).JSON(t, &labels)
	out := map[string][3]string{}
	for _, l := range labels {
		out[l.Name] = [3]string{l.Color, l.Description, strconv.FormatBool(l.Exclusive)}
	}
	return out
}

func TestTemplateCatalogs(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)

	var ignores []string
	r := e.Do("GET", "gitignore/templates", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &ignores)
	if len(ignores) < 200 || !slices.IsSorted(ignores) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(ignores)) {
		t.Fatalf("%d gitignore templates, X-Total-Count %s", len(ignores), r.Header.Get("X-Total-Count"))
	}
	for _, n := range []string{"C", "C++", "Go", "Node", "Python", "macOS", "JetBrains", "VisualStudio"} {
		if !slices.Contains(ignores, n) {
			t.Errorf("gitignore template %s missing", n)
		}
	}
	var ign models.GitignoreTemplateInfo
	e.Do("GET", "gitignore/templates/C++", nil, nil).Expect(t, http.StatusOK).JSON(t, &ign)
	if ign.Name != "C++" || !strings.HasPrefix(ign.Source, gitignoreCppHead) {
		t.Fatalf("C++: %+v", ign)
	}
	// Names are matched without regard to case; the answer has the real one.
	e.Do("GET", "gitignore/templates/node", nil, nil).Expect(t, http.StatusOK).JSON(t, &ign)
	if ign.Name != "Node" || !strings.Contains(ign.Source, "node_modules/") {
		t.Fatalf("node: %+v", ign.Name)
	}
	e.Do("GET", "gitignore/templates/Cobol", nil, nil).Expect(t, http.StatusNotFound)

	var lics []models.LicensesTemplateListEntry
	r = e.Do("GET", "licenses", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &lics)
	if len(lics) < 700 || lics[0].Key != "Apache-2.0" || lics[1].Key != "MIT" || r.Header.Get("X-Total-Count") != strconv.Itoa(len(lics)) {
		t.Fatalf("%d licenses, first %+v", len(lics), lics[:2])
	}
	if lics[1].Name != "MIT" || lics[1].URL != e.URL+"api/v1/licenses/MIT" {
		t.Fatalf("MIT entry %+v", lics[1])
	}
	keys := map[string]bool{}
	for _, l := range lics {
		keys[l.Key] = true
	}
	for _, k := range []string{"GPL-3.0-or-later", "GPL-3.0-only", "GPL-3.0", "AGPL-3.0-or-later", "BSD-3-Clause", "MPL-2.0", "0BSD", "Unlicense", "CC0-1.0"} {
		if !keys[k] {
			t.Errorf("license %s missing", k)
		}
	}
	var lic models.LicenseTemplateInfo
	e.Do("GET", "licenses/gpl-3.0-or-later", nil, nil).Expect(t, http.StatusOK).JSON(t, &lic)
	if lic.Key != "GPL-3.0-or-later" || lic.Name != lic.Key || lic.URL != e.URL+"api/v1/licenses/GPL-3.0-or-later" ||
		!strings.Contains(lic.Body, "GNU GENERAL PUBLIC LICENSE") || !strings.Contains(lic.Body, "<year>") || lic.Implementation == "" {
		t.Fatalf("GPL-3.0-or-later: %s %s %s %q", lic.Key, lic.Name, lic.URL, lic.Implementation)
	}
	e.Do("GET", "licenses/MIT", nil, nil).Expect(t, http.StatusOK).JSON(t, &lic)
	if lic.Body != referenceMIT("<year>", "<copyright holders>") {
		t.Fatalf("MIT body %q", lic.Body)
	}
	e.Do("GET", "licenses/No-Such-License", nil, nil).Expect(t, http.StatusNotFound)

	var sets []string
	e.Do("GET", "label/templates", nil, nil).Expect(t, http.StatusOK).JSON(t, &sets)
	if !slices.Equal(sets, []string{"Advanced", "Default"}) {
		t.Fatalf("label sets %v", sets)
	}
	r = e.Do("GET", "label/templates/Default", nil, nil).Expect(t, http.StatusOK)
	var def []models.LabelTemplate
	r.JSON(t, &def)
	if len(def) != len(referenceDefaultLabels) {
		t.Fatalf("Default: %d labels", len(def))
	}
	for i, want := range referenceDefaultLabels {
		if got := def[i]; got.Name != want[0] || got.Color != want[1] || got.Description != want[2] || got.Exclusive {
			t.Errorf("Default[%d] = %+v, want %v", i, got, want)
		}
	}
	// Every field is sent, false included, as the reference sends it.
	if !strings.Contains(string(r.Body), `"exclusive":false`) {
		t.Errorf("exclusive left out: %s", r.Body)
	}
	var adv []models.LabelTemplate
	e.Do("GET", "label/templates/Advanced", nil, nil).Expect(t, http.StatusOK).JSON(t, &adv)
	if len(adv) < 15 || adv[0].Name != "Kind/Bug" || adv[0].Color != "ee0701" {
		t.Fatalf("Advanced: %d %+v", len(adv), adv[0])
	}
	scopes := map[string]int{}
	for _, l := range adv {
		if l.Exclusive {
			scopes[l.Name[:strings.LastIndex(l.Name, "/")]]++
		}
	}
	if scopes["Priority"] != 4 || scopes["Reviewed"] == 0 || scopes["Status"] == 0 || scopes["Kind"] != 0 {
		t.Fatalf("Advanced exclusive scopes %v", scopes)
	}
	e.Do("GET", "label/templates/Fancy", nil, nil).Expect(t, http.StatusNotFound)
}

func TestRepoCreateFromTemplates(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)

	t.Run("gitignores concatenate as the reference's", func(t *testing.T) {
		for _, c := range []struct{ repo, list string }{{"cpp", "C,C++"}, {"gonode", "Go,Node"}} {
			roCreateRepo(t, e, cred, map[string]any{"name": c.repo, "auto_init": true, "gitignores": c.list})
			var want strings.Builder
			for _, n := range strings.Split(c.list, ",") {
				want.WriteString("# ---> " + n + "\n" + tplGitignore(t, e, n) + "\n")
			}
			if got := roFile(t, roGit(t, e, "alice", c.repo), "main", ".gitignore"); got != want.String() {
				t.Errorf("%s: .gitignore\n%q\nwant\n%q", c.list, got, want.String())
			}
		}
		got := roFile(t, roGit(t, e, "alice", "cpp"), "main", ".gitignore")
		if !strings.HasPrefix(got, "# ---> C\n"+gitignoreCHead) || !strings.Contains(got, "\n\n# ---> C++\n"+gitignoreCppHead) ||
			!strings.HasSuffix(got, "\n\n") {
			t.Errorf("C,C++: %q", got)
		}
	})

	t.Run("licenses are filled as the reference fills them", func(t *testing.T) {
		y := year()
		roCreateRepo(t, e, cred, map[string]any{"name": "mit", "auto_init": true, "license": "MIT"})
		if got := roFile(t, roGit(t, e, "alice", "mit"), "main", "LICENSE"); got != referenceMIT(y, "alice") {
			t.Errorf("MIT:\n%q", got)
		}
		roCreateRepo(t, e, cred, map[string]any{"name": "apache", "auto_init": true, "license": "Apache-2.0"})
		got := roFile(t, roGit(t, e, "alice", "apache"), "main", "LICENSE")
		if !strings.Contains(got, "Apache License\n") || !strings.Contains(got, "\nCopyright "+y+" alice\n") || strings.Contains(got, "[yyyy]") {
			t.Errorf("Apache-2.0: %q", got[len(got)-600:])
		}
		roCreateRepo(t, e, cred, map[string]any{"name": "gpl", "auto_init": true, "license": "GPL-3.0-or-later"})
		got = roFile(t, roGit(t, e, "alice", "gpl"), "main", "LICENSE")
		for _, want := range []string{"GNU GENERAL PUBLIC LICENSE\n", "     gpl\n     Copyright (C) " + y + "  alice\n",
			"     gpl  Copyright (C) " + y + "  alice\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("GPL-3.0-or-later lacks %q", want)
			}
		}
		for _, left := range []string{"<year>", "<name of author>", "<program>"} {
			if strings.Contains(got, left) {
				t.Errorf("GPL-3.0-or-later still has %s", left)
			}
		}
	})

	t.Run("the Default README byte for byte", func(t *testing.T) {
		roCreateRepo(t, e, cred, map[string]any{"name": "rd", "auto_init": true, "readme": "Default", "description": "line one\r\nline two"})
		if got := roFile(t, roGit(t, e, "alice", "rd"), "main", "README.md"); got != "# rd\n\nline one\nline two" {
			t.Errorf("README %q", got)
		}
		roCreateRepo(t, e, cred, map[string]any{"name": "bare-rd", "auto_init": true})
		if got := roFile(t, roGit(t, e, "alice", "bare-rd"), "main", "README.md"); got != "# bare-rd\n\n" {
			t.Errorf("README %q", got)
		}
	})

	t.Run("issue_labels on every creation path", func(t *testing.T) {
		org := roCreateOrg(t, e, cred, map[string]any{"username": "acme"})
		admin := apitest.Basic(e.Admin)
		for _, c := range []struct{ path, repo, set string }{
			{"user/repos", "alice/lbl-default", "Default"},
			{"orgs/" + org.UserName + "/repos", "acme/lbl-org", "Default"},
			{"admin/users/alice/repos", "alice/lbl-admin", "Advanced"},
			{"user/repos", "alice/lbl-init", "Advanced"},
		} {
			who := cred
			if strings.HasPrefix(c.path, "admin/") {
				who = admin
			}
			name := c.repo[strings.Index(c.repo, "/")+1:]
			// Without auto_init too: the labels do not need a commit.
			body := map[string]any{"name": name, "issue_labels": c.set, "auto_init": name == "lbl-init"}
			var r models.Repository
			e.Do("POST", c.path, body, who).Expect(t, http.StatusCreated).JSON(t, &r)
			var set []models.LabelTemplate
			e.Do("GET", "label/templates/"+c.set, nil, nil).Expect(t, http.StatusOK).JSON(t, &set)
			got := tplLabels(t, e, cred, c.repo)
			if len(got) != len(set) {
				t.Fatalf("%s: %d labels, want %d", c.repo, len(got), len(set))
			}
			for _, l := range set {
				if want := [3]string{l.Color, l.Description, strconv.FormatBool(l.Exclusive)}; got[l.Name] != want {
					t.Errorf("%s: label %q = %v, want %v", c.repo, l.Name, got[l.Name], want)
				}
			}
			if c.set == "Default" {
				for _, l := range referenceDefaultLabels {
					if got[l[0]] != [3]string{l[1], l[2], "false"} {
						t.Errorf("%s: label %q = %v", c.repo, l[0], got[l[0]])
					}
				}
			}
		}
		// An exclusive scope of the set works as one: a second label of
		// Priority/ replaces the first on an issue.
		var all []models.Label
		e.Do("GET", "repos/alice/lbl-init/labels?limit=50", nil, cred).Expect(t, http.StatusOK).JSON(t, &all)
		ids := map[string]int64{}
		for _, l := range all {
			ids[l.Name] = l.ID
		}
		var is models.Issue
		e.Do("POST", "repos/alice/lbl-init/issues", map[string]any{"title": "t", "labels": []int64{ids["Priority/High"]}}, cred).
			Expect(t, http.StatusCreated).JSON(t, &is)
		var now []models.Label
		e.Do("POST", fmt.Sprintf("repos/alice/lbl-init/issues/%d/labels", is.Index), map[string]any{"labels": []string{"Priority/Low"}}, cred).
			Expect(t, http.StatusOK).JSON(t, &now)
		if len(now) != 1 || now[0].Name != "Priority/Low" {
			t.Errorf("labels after adding Priority/Low: %+v", now)
		}
	})

	t.Run("unknown templates are 422 naming them", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			name string
		}{
			{map[string]any{"auto_init": true, "gitignores": "C,Cobol"}, "Cobol"},
			{map[string]any{"gitignores": "Go,Nope"}, "Nope"},
			{map[string]any{"auto_init": true, "license": "No-Such-License"}, "No-Such-License"},
			{map[string]any{"issue_labels": "Fancy"}, "Fancy"},
			{map[string]any{"auto_init": true, "issue_labels": "Defaults"}, "Defaults"},
			{map[string]any{"auto_init": true, "readme": "Fancy"}, "Fancy"},
		} {
			c.body["name"] = "refused"
			r := e.Do("POST", "user/repos", c.body, cred).Expect(t, http.StatusUnprocessableEntity)
			if !strings.Contains(string(r.Body), c.name) {
				t.Errorf("%v: %s", c.body, r.Body)
			}
		}
		e.Do("GET", "repos/alice/refused", nil, cred).Expect(t, http.StatusNotFound)
		if roGitExists(t, e, "alice", "refused") {
			t.Fatal("a refused create left a directory behind")
		}
	})
}

// TestSDKRepoFromTemplates: an unchanged program on the official SDK sets
// up a repository the usual way and gets the reference's files and labels.
func TestSDKRepoFromTemplates(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	dev := e.CreateUser("sdkdev", false)
	c := sdkClient(t, e, gitea.SetBasicAuth(dev.User.Name, dev.Password), gitea.SetHTTPClient(e.HTTPClient()))

	repo, resp, err := c.CreateRepo(gitea.CreateRepoOption{
		Name: "tool", Description: "a tool", AutoInit: true,
		Gitignores: "C,C++", License: "MIT", IssueLabels: "Default", Readme: "Default",
	})
	if err != nil || resp.StatusCode != http.StatusCreated || repo.Empty {
		t.Fatalf("CreateRepo: %v (%v) %+v", err, resp, repo)
	}
	file := func(name string) string {
		t.Helper()
		b, _, err := c.GetFile("sdkdev", "tool", "main", name)
		if err != nil {
			t.Fatalf("GetFile %s: %v", name, err)
		}
		return string(b)
	}
	if got := file("README.md"); got != "# tool\n\na tool" {
		t.Errorf("README.md %q", got)
	}
	if got := file("LICENSE"); got != referenceMIT(year(), "sdkdev") {
		t.Errorf("LICENSE %q", got)
	}
	cText, _, err := c.GetGitignoreTemplateInfo("C")
	if err != nil {
		t.Fatal(err)
	}
	cppText, _, err := c.GetGitignoreTemplateInfo("C++")
	if err != nil {
		t.Fatal(err)
	}
	want := "# ---> C\n" + cText.Source + "\n# ---> C++\n" + cppText.Source + "\n"
	if got := file(".gitignore"); got != want || !strings.HasPrefix(got, "# ---> C\n"+gitignoreCHead) {
		t.Errorf(".gitignore %q", got)
	}
	labels, _, err := c.ListRepoLabels("sdkdev", "tool", gitea.ListLabelsOptions{})
	if err != nil || len(labels) != len(referenceDefaultLabels) {
		t.Fatalf("ListRepoLabels: %v %d", err, len(labels))
	}
	got := map[string][2]string{}
	for _, l := range labels {
		got[l.Name] = [2]string{l.Color, l.Description}
	}
	for _, l := range referenceDefaultLabels {
		if got[l[0]] != [2]string{l[1], l[2]} {
			t.Errorf("label %s = %v, want %v", l[0], got[l[0]], l[1:])
		}
	}

	// The catalogs through the SDK's own calls.
	if names, _, err := c.ListGitignoresTemplates(); err != nil || !slices.Contains(names, "C++") {
		t.Errorf("ListGitignoresTemplates: %v %d", err, len(names))
	}
	if lic, _, err := c.GetLicenseTemplateInfo("MIT"); err != nil || lic.Key != "MIT" || lic.Body != referenceMIT("<year>", "<copyright holders>") {
		t.Errorf("GetLicenseTemplateInfo: %v %+v", err, lic)
	}
	if set, _, err := c.GetLabelTemplate("Default"); err != nil || len(set) != 7 || set[0].Name != "bug" || set[0].Color != "ee0701" {
		t.Errorf("GetLabelTemplate: %v %+v", err, set)
	}
	if rs, _, err := c.GetGlobalRepoSettings(); err != nil || rs.StarsDisabled || rs.MirrorsDisabled || rs.MigrationsDisabled || rs.HTTPGitDisabled {
		t.Errorf("GetGlobalRepoSettings: %v %+v", err, rs)
	}
}
