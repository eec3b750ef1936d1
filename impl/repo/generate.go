package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/names"
	"repohost/impl/refs"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// NewRow is a repository row for owner with the settings every new
// repository starts with; callers fill in the rest.
func NewRow(owner *store.User, name, defaultBranch string) *store.Repository {
	r := &store.Repository{OwnerID: owner.ID, Name: name, DefaultBranch: defaultBranch, ObjectFormat: "sha1", IsEmpty: true}
	applyDefaults(r)
	return r
}

// templateItems tells whether o asks for anything to be taken from the
// template.
func templateItems(o *models.GenerateRepoOption) bool {
	for _, b := range []*bool{o.GitContent, o.Topics, o.GitHooks, o.Webhooks, o.Avatar, o.Labels, o.ProtectedBranch} {
		if conv.Value(b) {
			return true
		}
	}
	return false
}

func (h Handlers) GenerateRepo(ctx context.Context, params repository.GenerateRepoParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	tpl, _, err := h.Repo(ctx, p, params.TemplateOwner, params.TemplateRepo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	switch {
	case o == nil || o.Owner == nil || *o.Owner == "":
		return h.Fail(apierr.Validation("[Owner]: Required"))
	case o.Name == nil:
		return h.Fail(apierr.Validation("[Name]: Required"))
	}
	name := *o.Name
	if err := names.CheckRepo("Name", name); err != nil {
		return h.Fail(err)
	}
	if !tpl.IsTemplate {
		return h.Fail(apierr.Validation("this is not a template repo"))
	}
	if !templateItems(o) {
		return h.Fail(apierr.Validation("must select at least one template item"))
	}
	owner, err := h.generateOwner(ctx, p, *o.Owner)
	if err != nil {
		return h.Fail(err)
	}
	branch := conv.Value(o.DefaultBranch)
	if branch == "" {
		branch = tpl.DefaultBranch
	}
	if err := names.CheckBranch("DefaultBranch", branch); err != nil {
		return h.Fail(err)
	}
	r, err := h.generate(ctx, app.BaseURL(params.HTTPRequest), p.User, tpl, owner, name, branch, o)
	if err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGenerateRepoCreated().WithPayload(convert.Repo(app.BaseURL(params.HTTPRequest), r, perm, p.User))
}

// generateOwner loads the owner of the new repository and checks that p may
// create repositories for it, with the reference's messages.
func (h Handlers) generateOwner(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	owner, err := h.VisibleUser(ctx, p, name)
	if app.IsNotFound(err) {
		return nil, apierr.NotFound("request owner `%s` does not exist", name)
	}
	if err != nil {
		return nil, err
	}
	if owner.ID == p.UserID() {
		return owner, nil
	}
	if !owner.IsOrganization() {
		if !p.IsAdmin() {
			return nil, apierr.Forbidden("Only admin can generate repository for other user.")
		}
		return owner, nil
	}
	ok, err := h.Access.CanCreateIn(ctx, p, owner)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Forbidden("Given user is not allowed to create repository in organization.")
	}
	return owner, nil
}

// generate makes owner/name from tpl: the git repository first (the
// template's default branch tree as one fresh commit, with the template
// variables expanded where .gitea/template asks; the hooks), then the
// row with the copied topics, protection rules and labels in one
// transaction; if that fails the new directory is removed again.
func (h Handlers) generate(ctx context.Context, base string, doer *store.User, tpl *store.Repository, owner *store.User, name, branch string, o *models.GenerateRepoOption) (*store.Repository, error) {
	if err := checkQuota(ctx, h.Deps, doer, owner); err != nil {
		return nil, err
	}
	if _, err := h.Store.Repos().FindByName(ctx, owner.ID, name); err == nil {
		return nil, errRepoExists()
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	src, err := h.OpenGit(tpl)
	if err != nil {
		return nil, err
	}
	content := gitstore.TemplateContent{Hooks: conv.Value(o.GitHooks)}
	if conv.Value(o.GitContent) {
		b, err := src.GetBranch(tpl.DefaultBranch)
		switch {
		case err == nil:
			content.Commit = b.Commit
			vars := templateVars(base, tpl, owner, name, conv.Value(o.Description), h.Clock.Now())
			if rw := templateRewrite(b.Commit, vars); rw != nil {
				content.Rewrite = rw
				content.Omit = map[string]bool{templateFile: true}
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
		// An empty template gives an empty repository.
	}
	format := tpl.ObjectFormat
	if format == "" {
		format = "sha1"
	}
	opts := gitstore.InitOptions{DefaultBranch: branch, ObjectFormat: format,
		CommitMessage: "Initial commit\n", Author: app.Signature(doer, h.Clock.Now())}
	initial, err := h.Git.CreateFromTemplate(src, owner.Name, name, opts, content)
	if err != nil {
		return nil, createError(ctx, h.Deps, owner, name, err)
	}

	r := NewRow(owner, name, branch)
	r.Description = conv.Value(o.Description)
	r.IsPrivate = conv.Value(o.Private)
	r.IsEmpty = content.Commit == nil
	r.ObjectFormat = format
	r.Owner = owner
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := h.Store.Repos().Create(ctx, r); err != nil {
			return err
		}
		// The template's content becomes the default branch through
		// impl/refs, before the template's rules are copied.
		if err := refs.New(h.Deps).InitialBranch(ctx, r, doer, initial); err != nil {
			return err
		}
		if conv.Value(o.Topics) {
			if err := h.Store.Topics().Copy(ctx, tpl.ID, r.ID); err != nil {
				return err
			}
		}
		if conv.Value(o.ProtectedBranch) {
			if err := h.Store.Protections().CopyAll(ctx, tpl.ID, r.ID); err != nil {
				return err
			}
		}
		if conv.Value(o.Labels) {
			if err := h.Store.GitRepos().CopyLabels(ctx, tpl.ID, r.ID); err != nil {
				return err
			}
		}
		// Webhooks and avatars: this server has neither yet, so a
		// template has none to give.
		return nil
	})
	if err != nil {
		if rmErr := h.Git.Delete(owner.Name, name); rmErr != nil {
			h.Log.Error("remove generated repository after failed insert", "repo", owner.Name+"/"+name, "err", rmErr)
		}
		if errors.Is(err, store.ErrDuplicate) {
			return nil, errRepoExists()
		}
		return nil, err
	}
	// The topics column was written by the copy; read the row back so the
	// answer shows it.
	fresh, err := h.Store.Repos().FindByID(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

// templateFile lists, one glob per line, the files of a template whose
// variables are expanded in a generated repository; it is itself left out.
const templateFile = ".gitea/template"

// templateVars are the variables a template's files may use, as in the
// reference: names, descriptions, owners and links of the template and the
// new repository, some also in other cases (REPO_NAME_SNAKE, ...).
func templateVars(base string, tpl *store.Repository, owner *store.User, name, description string, now time.Time) map[string]string {
	vars := map[string]string{
		"YEAR":          strconv.Itoa(now.Year()),
		"MONTH":         fmt.Sprintf("%02d", int(now.Month())),
		"MONTH_ENGLISH": now.Month().String(),
		"DAY":           fmt.Sprintf("%02d", now.Day()),
	}
	add := func(key, value string, transform bool) {
		vars[key] = value
		if !transform {
			return
		}
		words := splitWords(value)
		vars[key+"_SNAKE"] = strings.ToLower(strings.Join(words, "_"))
		vars[key+"_KEBAB"] = strings.ToLower(strings.Join(words, "-"))
		vars[key+"_LOWER"] = strings.ToLower(value)
		vars[key+"_UPPER"] = strings.ToUpper(value)
		var camel, pascal, title []string
		for i, w := range words {
			capital := strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
			pascal = append(pascal, capital)
			title = append(title, capital)
			if i == 0 {
				camel = append(camel, strings.ToLower(w))
			} else {
				camel = append(camel, capital)
			}
		}
		vars[key+"_CAMEL"] = strings.Join(camel, "")
		vars[key+"_PASCAL"] = strings.Join(pascal, "")
		vars[key+"_TITLE"] = strings.Join(title, "-")
	}
	add("REPO_NAME", name, true)
	add("TEMPLATE_NAME", tpl.Name, true)
	add("REPO_DESCRIPTION", description, false)
	add("TEMPLATE_DESCRIPTION", tpl.Description, false)
	add("REPO_OWNER", owner.Name, true)
	add("TEMPLATE_OWNER", tpl.Owner.Name, true)
	add("REPO_LINK", base+owner.Name+"/"+name, false)
	add("TEMPLATE_LINK", base+tpl.FullName(), false)
	add("REPO_HTTPS_URL", base+owner.Name+"/"+name+".git", false)
	add("TEMPLATE_HTTPS_URL", base+tpl.FullName()+".git", false)
	// This server has no SSH access.
	add("REPO_SSH_URL", "", false)
	add("TEMPLATE_SSH_URL", "", false)
	return vars
}

// splitWords cuts a name into words at punctuation and at lower-to-upper
// case changes ("go-sdk" and "goSdk" both give go, sdk).
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = nil
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// templateRewrite reads the template's file globs from c and returns the
// rewrite that expands vars in the files they match, or nil when the
// template has no such file.
func templateRewrite(c *object.Commit, vars map[string]string) func(string, []byte) ([]byte, bool) {
	f, err := c.File(templateFile)
	if err != nil {
		return nil
	}
	text, err := f.Contents()
	if err != nil {
		return nil
	}
	var globs []*regexp.Regexp
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if re, err := store.CompileGlob(line); err == nil {
			globs = append(globs, re)
		}
	}
	return func(p string, content []byte) ([]byte, bool) {
		for _, re := range globs {
			if re.MatchString(p) {
				// As in the reference: "$$" escapes a dollar, and an
				// unknown $NAME becomes NAME.
				out := os.Expand(string(content), func(key string) string {
					if v, ok := vars[key]; ok {
						return v
					}
					return key
				})
				return []byte(out), out != string(content)
			}
		}
		return content, false
	}
}
