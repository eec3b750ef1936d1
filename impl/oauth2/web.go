package oauth2

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"repohost/impl/auth"
	"repohost/impl/rooturl"
	"repohost/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the provider's three pages, each the shared frame around its
// own body.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"signin", "consent", "error"} {
		out[name] = template.Must(template.ParseFS(templateFiles, "templates/page.html", "templates/"+name+".html"))
	}
	return out
}()

// pageData is what every page shows.
type pageData struct {
	Title, App, Owner, User, Error string
	Action, CSRF, Target           string
	Scopes                         []string
}

const csrfCookie = "repohost_csrf"

// csrfToken returns the browser's CSRF token, setting a new one first if
// it has none. Forms carry it back and checkCSRF compares it with the
// cookie (the double-submit pattern): another site can make a browser
// post a form here but can neither read nor set the cookie.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 40 {
		return c.Value
	}
	secret, _, err := auth.NewToken()
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: secret, Path: cookiePath(r, "login/oauth/"), HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return secret
}

func checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	form := r.PostForm.Get("_csrf")
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) == 1
}

func render(w http.ResponseWriter, name string, status int, data pageData) {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "page", data); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// The pages run no script, load nothing from elsewhere and may not
	// be framed (clickjacking the Authorize button).
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// action is the authorization URL the forms post back to, under the
// server's root URL (which may have a path, behind a proxy).
func (ar *authRequest) action(r *http.Request) string {
	return rooturl.From(r) + "login/oauth/authorize?" + ar.rawQuery
}

// cookiePath is where under the root URL the browser sends a cookie back.
func cookiePath(r *http.Request, sub string) string {
	p := "/"
	if u, err := url.Parse(rooturl.From(r)); err == nil && u.Path != "" {
		p = u.Path
	}
	return p + sub
}

func (h Handlers) renderSignIn(w http.ResponseWriter, r *http.Request, ar *authRequest, problem string, status int) {
	render(w, "signin", status, pageData{Title: "Sign in", App: ar.app.Name, Error: problem,
		Action: ar.action(r), CSRF: csrfToken(w, r)})
}

func (h Handlers) renderConsent(w http.ResponseWriter, r *http.Request, ar *authRequest, user *store.User) {
	owner := "an unknown user"
	if u, err := h.Store.Users().FindByID(r.Context(), ar.app.UserID); err == nil {
		owner = u.Name
	}
	target := ar.redirectURI
	if u, err := url.Parse(ar.redirectURI); err == nil && u.Host != "" {
		target = u.Scheme + "://" + u.Host
	}
	render(w, "consent", http.StatusOK, pageData{Title: "Authorize " + ar.app.Name, App: ar.app.Name, Owner: owner,
		User: user.Name, Action: ar.action(r), CSRF: csrfToken(w, r), Target: target, Scopes: describeScope(ar.scope)})
}

func (h Handlers) renderError(w http.ResponseWriter, r *http.Request, problem string) {
	h.renderErrorStatus(w, r, problem, http.StatusBadRequest)
}

func (h Handlers) renderErrorStatus(w http.ResponseWriter, r *http.Request, problem string, status int) {
	render(w, "error", status, pageData{Title: "Authorization failed", Error: problem})
}

// describeScope says in words what a scope lets the application do.
func describeScope(scope string) []string {
	var out []string
	oidc := map[string]string{
		"openid":  "confirm who you are",
		"profile": "read your name, avatar and profile address",
		"email":   "read your email address",
	}
	for _, f := range strings.Fields(scope) {
		if d, ok := oidc[f]; ok {
			out = append(out, d)
		}
	}
	s := auth.OAuth2Scopes(scope)
	switch {
	case s["all"]:
		out = append(out, "act as you everywhere: read and change everything your account can")
	default:
		for _, name := range s.List() {
			if name == "public-only" {
				continue
			}
			level, cat, _ := strings.Cut(name, ":")
			verb := "read"
			if level == "write" {
				verb = "read and change"
			}
			out = append(out, verb+" your "+cat+" data")
		}
	}
	if s.PublicOnly() {
		out = append(out, "only where it is public")
	}
	return out
}
