package repo

import (
	"errors"
	"strings"

	"repohost/impl/apierr"
	"repohost/impl/templates"
	"repohost/store"
)

// The files and labels a new repository can start with come from the
// reference's collections in impl/templates; this file turns a create
// request's template names into them, with a 422 naming the first unknown
// one.

// readmeText checks the README template name ("" means Default) and
// returns its text, variables unexpanded.
func readmeText(name string) (string, error) {
	if name == "" {
		name = "Default"
	}
	_, text, ok := templates.Readme(name)
	if !ok {
		return "", apierr.Validation("readme template does not exist [name: %s], available templates: %s",
			name, strings.Join(templates.Readmes(), ", "))
	}
	return text, nil
}

// readme is the README.md of r's first commit, written as the reference
// writes it: the template with {Name}, {Description} (line ends made LF),
// {OwnerName} and {CloneURL.HTTPS} expanded in one pass; this server has
// no SSH, so {CloneURL.SSH} is empty.
func readme(text, base string, owner *store.User, name, description string) string {
	return templates.ExpandReadme(text, map[string]string{
		"Name":           name,
		"Description":    templates.NormalizeEOL(description),
		"CloneURL.SSH":   "",
		"CloneURL.HTTPS": base + owner.Name + "/" + name + ".git",
		"OwnerName":      owner.Name,
	})
}

// gitignore joins the comma-separated gitignore templates into one file as
// the reference does: each part is "# ---> NAME\n", the template and an
// empty line. Names are trimmed and matched case-insensitively; "" when
// none is asked for.
func gitignore(list string) (string, error) {
	var b strings.Builder
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		canonical, text, ok := templates.Gitignore(name)
		if !ok {
			return "", apierr.Validation("gitignore template does not exist [name: %s]; GET /api/v1/gitignore/templates lists them", name)
		}
		b.WriteString("# ---> " + canonical + "\n")
		b.WriteString(text)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// license renders the named license for owner's repository name, filled
// as the reference fills it (the owner's login, its commit address, the
// repository name and the year); "" when name is empty.
func license(name string, v templates.LicenseValues) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil
	}
	id, text, ok := templates.License(name)
	if !ok {
		return "", apierr.Validation("license template does not exist [name: %s]; GET /api/v1/licenses lists them", name)
	}
	return templates.FillLicense(id, text, v), nil
}

// labelSet returns the labels of the named issue-label set; nil when name
// is empty.
func labelSet(name string) ([]templates.Label, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, nil
	}
	_, labels, err := templates.LabelSet(name)
	if errors.Is(err, templates.ErrUnknownLabelSet) {
		// The reference's words.
		return nil, apierr.Validation("failed to load label template file %q: %v", name, err)
	}
	return labels, err
}
