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

	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/webhook"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

func (h Handlers) GenerateRepo(ctx context.Context, params repository.GenerateRepoParams) middleware.Responder {
	p, tpl, _, err := h.SignedInRepo(ctx, params.TemplateOwner, params.TemplateRepo)
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
	owner, err := h.generateOwner(ctx, p, *o.Owner)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	r, err := h.svc().Create(ctx, p.User, owner, CreateInput{
		Origin: OriginTemplate, From: tpl, LinkBase: base,
		Name: *o.Name, Description: conv.Value(o.Description), Private: conv.Value(o.Private),
		DefaultBranch: conv.Value(o.DefaultBranch),
		Items: TemplateItems{
			GitContent: conv.Value(o.GitContent), GitHooks: conv.Value(o.GitHooks), Topics: conv.Value(o.Topics),
			Labels: conv.Value(o.Labels), ProtectedBranches: conv.Value(o.ProtectedBranch),
			Webhooks: conv.Value(o.Webhooks), Avatar: conv.Value(o.Avatar),
		},
	})
	if err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGenerateRepoCreated().WithPayload(convert.Repo(h.Links(base), r, perm, p.User))
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

// templateContent is what a generated repository's files take from the
// template in.From: its default branch's tree as one fresh commit, with
// the template variables expanded where .gitea/template asks, and its
// hooks. An empty template gives an empty repository.
func (s Service) templateContent(owner *store.User, in CreateInput) (*gitstore.GitRepo, gitstore.TemplateContent, error) {
	content := gitstore.TemplateContent{Hooks: in.Items.GitHooks}
	src, err := s.OpenGit(in.From)
	if err != nil {
		return nil, content, err
	}
	if !in.Items.GitContent {
		return src, content, nil
	}
	b, err := src.GetBranch(in.From.DefaultBranch)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return src, content, nil
	case err != nil:
		return nil, content, err
	}
	content.Commit = b.Commit
	vars := templateVars(in.LinkBase, in.From, owner, in.Name, in.Description, s.Clock.Now())
	if rw := templateRewrite(b.Commit, vars); rw != nil {
		content.Rewrite = rw
		content.Omit = map[string]bool{templateFile: true}
	}
	return src, content, nil
}

// copyTemplateRows copies the template's topics, protection rules, labels
// and webhooks to the generated r, as in.Items asks, in the transaction
// that inserts r. Avatars: this server has none yet.
func (s Service) copyTemplateRows(ctx context.Context, in CreateInput, r *store.Repository) error {
	if in.Items.Webhooks {
		if err := (webhook.Service{Deps: s.Deps}).CopyRepoHooks(ctx, in.From.ID, r); err != nil {
			return err
		}
	}
	if in.Items.Topics {
		if err := s.Store.Topics().Copy(ctx, in.From.ID, r.ID); err != nil {
			return err
		}
	}
	if in.Items.ProtectedBranches {
		if err := s.Store.Protections().CopyAll(ctx, in.From.ID, r.ID); err != nil {
			return err
		}
	}
	if in.Items.Labels {
		return s.Store.GitRepos().CopyLabels(ctx, in.From.ID, r.ID)
	}
	return nil
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
