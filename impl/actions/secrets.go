package actions

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"repohost/impl/apierr"
	"repohost/impl/events"
	"repohost/store"
)

// Secrets and variables of a repository, an organization or a user. The
// names follow the reference: letters, digits and underscores, not
// starting with a digit nor with GITEA_ or GITHUB_ (the prefixes of the
// values the server itself gives a task), compared and kept in upper
// case. A secret's value is sealed at rest by the store, written here and
// opened only for a task (taskSecrets): no answer, log line or event
// carries it.

var (
	settingName        = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	reservedNamePrefix = regexp.MustCompile(`^GIT(EA|HUB)_`)
)

// The reference's bounds: longer values are refused, longer descriptions
// cut.
const (
	maxSecretData         = 65536 // bytes
	maxVariableData       = 65536 // characters
	maxSettingDescription = 4096  // characters
)

// settingName checks and normalises the name of a secret or variable.
func normaliseSettingName(what, name string) (string, error) {
	upper := strings.ToUpper(name)
	if !settingName.MatchString(upper) || reservedNamePrefix.MatchString(upper) {
		return "", apierr.BadRequest("invalid %s name", what)
	}
	return upper, nil
}

// lookupName is a name as it is stored, for finding one: a name that
// could never have been stored finds nothing (404), as in the reference.
func lookupName(name string) string { return strings.ToUpper(name) }

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// settingScope is where sc's secrets and variables belong: a repository
// scope's own, not its owner's.
func settingScope(sc Scope) store.ActionScope {
	if sc.RepoID != 0 {
		return store.ActionScope{RepoID: sc.RepoID}
	}
	return store.ActionScope{OwnerID: sc.OwnerID}
}

func (s Service) emitSetting(ctx context.Context, kind events.Kind, actorID int64, sc store.ActionScope, name, oldName string) error {
	return s.Events.Emit(ctx, kind, sc.RepoID, actorID, events.ActionsSetting{OwnerID: sc.OwnerID, RepoID: sc.RepoID, Name: name, OldName: oldName})
}

// PutSecret creates or replaces a secret; created tells which.
func (s Service) PutSecret(ctx context.Context, actorID int64, sc Scope, name, data, description string) (bool, error) {
	name, err := normaliseSettingName("secret", name)
	if err != nil {
		return false, err
	}
	if len(data) > maxSecretData {
		return false, apierr.BadRequest("data too long")
	}
	as := settingScope(sc)
	sec := &store.ActionSecret{Scope: as, Name: name, Description: truncateRunes(description, maxSettingDescription)}
	var created bool
	put := func() error {
		return s.Store.WithTx(ctx, func(ctx context.Context) error {
			var err error
			if created, err = s.Store.ActionSecrets().Put(ctx, sec, data); err != nil {
				return err
			}
			return s.emitSetting(ctx, events.ActionsSecretSet, actorID, as, name, "")
		})
	}
	err = put()
	if errors.Is(err, store.ErrDuplicate) {
		// Another request created it between the look and the insert:
		// this one replaces it.
		err = put()
	}
	return created, err
}

// DeleteSecret removes a secret.
func (s Service) DeleteSecret(ctx context.Context, actorID int64, sc Scope, name string) error {
	as, name := settingScope(sc), lookupName(name)
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.ActionSecrets().Delete(ctx, as, name); err != nil {
			return err
		}
		return s.emitSetting(ctx, events.ActionsSecretDeleted, actorID, as, name, "")
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("secret not found")
	}
	return err
}

// ListSecrets pages a scope's secrets by name, without values.
func (s Service) ListSecrets(ctx context.Context, sc Scope, p store.Page) ([]*store.ActionSecret, int64, error) {
	return s.Store.ActionSecrets().List(ctx, settingScope(sc), p)
}

func checkVariableData(value string) error {
	if utf8.RuneCountInString(value) > maxVariableData {
		return apierr.BadRequest("data too long")
	}
	return nil
}

// CreateVariable creates a variable; a taken name is 409.
func (s Service) CreateVariable(ctx context.Context, actorID int64, sc Scope, name, value, description string) (*store.ActionVariable, error) {
	as := settingScope(sc)
	// A taken name is refused before the name's form, as the reference
	// looks it up first.
	if _, err := s.Store.ActionVariables().Find(ctx, as, lookupName(name)); err == nil {
		return nil, apierr.Conflict("variable name %s already exists", name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	upper, err := normaliseSettingName("variable", name)
	if err != nil {
		return nil, err
	}
	value = normaliseEOL(value)
	if err := checkVariableData(value); err != nil {
		return nil, err
	}
	v := &store.ActionVariable{Scope: as, Name: upper, Data: value, Description: truncateRunes(description, maxSettingDescription)}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.ActionVariables().Create(ctx, v); err != nil {
			return err
		}
		return s.emitSetting(ctx, events.ActionsVariableSet, actorID, as, upper, "")
	})
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Conflict("variable name %s already exists", name)
	}
	return v, err
}

// GetVariable reads one variable.
func (s Service) GetVariable(ctx context.Context, sc Scope, name string) (*store.ActionVariable, error) {
	v, err := s.Store.ActionVariables().Find(ctx, settingScope(sc), lookupName(name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("variable not found")
	}
	return v, err
}

// UpdateVariable changes a variable's value and description, and its
// name when newName is not empty.
func (s Service) UpdateVariable(ctx context.Context, actorID int64, sc Scope, name, newName, value, description string) error {
	v, err := s.GetVariable(ctx, sc, name)
	if err != nil {
		return err
	}
	if newName == "" {
		newName = name
	}
	upper, err := normaliseSettingName("variable", newName)
	if err != nil {
		return err
	}
	value = normaliseEOL(value)
	if err := checkVariableData(value); err != nil {
		return err
	}
	oldName := v.Name
	v.Name, v.Data, v.Description = upper, value, truncateRunes(description, maxSettingDescription)
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.ActionVariables().Update(ctx, v); err != nil {
			return err
		}
		renamed := ""
		if oldName != upper {
			renamed = oldName
		}
		return s.emitSetting(ctx, events.ActionsVariableSet, actorID, v.Scope, upper, renamed)
	})
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return apierr.Conflict("variable name %s already exists", newName)
	case errors.Is(err, store.ErrNotFound):
		return apierr.NotFound("variable not found")
	}
	return err
}

// DeleteVariable removes a variable.
func (s Service) DeleteVariable(ctx context.Context, actorID int64, sc Scope, name string) error {
	as, name := settingScope(sc), lookupName(name)
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.ActionVariables().Delete(ctx, as, name); err != nil {
			return err
		}
		return s.emitSetting(ctx, events.ActionsVariableDeleted, actorID, as, name, "")
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("variable not found")
	}
	return err
}

// ListVariables pages a scope's variables by name.
func (s Service) ListVariables(ctx context.Context, sc Scope, p store.Page) ([]*store.ActionVariable, int64, error) {
	return s.Store.ActionVariables().List(ctx, settingScope(sc), p)
}

// normaliseEOL turns CRLF and lone CR line ends into LF, as the reference
// stores a variable's value.
func normaliseEOL(s string) string {
	if !strings.ContainsRune(s, '\r') {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// taskSettings are the secrets and variables a task of run in repo sees,
// as the reference resolves them: the owner's, overridden by the
// repository's. A pull request from a fork runs code its author chose,
// so its tasks get no secrets (the caller still adds the task's own
// token); variables are not secret and reach them all.
func (s Service) taskSettings(ctx context.Context, repo *store.Repository, fromFork bool) (secrets, vars map[string]string, err error) {
	vars, err = s.Store.ActionVariables().ForRepo(ctx, repo.OwnerID, repo.ID)
	if err != nil {
		return nil, nil, err
	}
	if fromFork {
		return map[string]string{}, vars, nil
	}
	secrets, err = s.Store.ActionSecrets().ForRepo(ctx, repo.OwnerID, repo.ID)
	return secrets, vars, err
}

// maskSecrets replaces, in each log row, every value of secrets with ***:
// whole values, and each line of a value of several lines (a log row is
// one line). Longer values are masked first, so one that contains another
// is not left half shown.
func maskSecrets(rows []LogRow, secrets map[string]string) {
	var values []string
	for _, v := range secrets {
		for _, line := range append([]string{v}, strings.Split(v, "\n")...) {
			if line = strings.TrimRight(line, "\r"); strings.TrimSpace(line) != "" {
				values = append(values, line)
			}
		}
	}
	if len(values) == 0 {
		return
	}
	sortLongestFirst(values)
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, "***")
	}
	r := strings.NewReplacer(pairs...)
	for i := range rows {
		rows[i].Content = r.Replace(rows[i].Content)
	}
}

func sortLongestFirst(values []string) {
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
}
