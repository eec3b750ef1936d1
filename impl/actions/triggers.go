package actions

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"repohost/impl/apierr"
)

// filterRegexp compiles one of the workflow filter patterns: "*" matches
// within one path segment, "**" across segments, "?" and "+" make the
// character before them optional or repeatable, "[...]" is a class.
func filterRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case (c == '?' || c == '+') && i > 0:
			b.WriteByte(c)
		case c == '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString("[" + strings.ReplaceAll(pattern[i+1:i+1+end], `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(pattern):
			i++
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// matchList applies a filter list in order: a pattern selects, a pattern
// starting with "!" deselects again; a pattern that does not compile
// matches nothing.
func matchList(patterns []string, s string) bool {
	matched := false
	for _, p := range patterns {
		negate := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		re, err := filterRegexp(p)
		if err != nil || !re.MatchString(s) {
			continue
		}
		matched = !negate
	}
	return matched
}

// refFilter decides whether a ref name passes a pair of include and
// ignore filters (branches/branches-ignore or tags/tags-ignore). set
// tells whether either was given.
func refFilter(filter *yaml.Node, include, ignore, name string) (pass, set bool) {
	inc, ign := field(filter, include), field(filter, ignore)
	switch {
	case inc != nil:
		return matchList(stringList(inc), name), true
	case ign != nil:
		return !matchList(stringList(ign), name), true
	}
	return true, false
}

// pushTriggers tells whether w runs for a push of ref (a full ref name).
// changed lists the files the push changed; it is called only when a
// paths filter needs it.
func (w *workflow) pushTriggers(ref string, changed func() ([]string, error)) (bool, error) {
	filter, ok := w.on["push"]
	if !ok {
		return false, nil
	}
	if mapping(filter) == nil {
		return true, nil
	}
	if name, isBranch := strings.CutPrefix(ref, "refs/heads/"); isBranch {
		pass, set := refFilter(filter, "branches", "branches-ignore", name)
		if !set {
			if _, tagsSet := refFilter(filter, "tags", "tags-ignore", ""); tagsSet {
				return false, nil
			}
		}
		if !pass {
			return false, nil
		}
		return pathsPass(filter, changed)
	}
	if name, isTag := strings.CutPrefix(ref, "refs/tags/"); isTag {
		pass, set := refFilter(filter, "tags", "tags-ignore", name)
		if !set {
			if _, branchesSet := refFilter(filter, "branches", "branches-ignore", ""); branchesSet {
				return false, nil
			}
		}
		return pass, nil
	}
	return false, nil
}

// pullTriggers tells whether w runs on: pull_request for activity
// (opened, synchronize, reopened) of a pull request into baseBranch:
// types (by default opened, synchronize and reopened), branches or
// branches-ignore against the base branch, and paths or paths-ignore
// against the pull request's changed files.
func (w *workflow) pullTriggers(activity, baseBranch string, changed func() ([]string, error)) (bool, error) {
	filter, ok := w.on["pull_request"]
	if !ok {
		return false, nil
	}
	types := defaultPullTypes
	if t := field(filter, "types"); t != nil {
		types = stringList(t)
	}
	typed := false
	for _, t := range types {
		typed = typed || t == activity
	}
	if !typed {
		return false, nil
	}
	if mapping(filter) == nil {
		return true, nil
	}
	if pass, _ := refFilter(filter, "branches", "branches-ignore", baseBranch); !pass {
		return false, nil
	}
	return pathsPass(filter, changed)
}

// pathsPass applies paths (some changed file must match) or paths-ignore
// (some changed file must not be ignored).
func pathsPass(filter *yaml.Node, changed func() ([]string, error)) (bool, error) {
	inc, ign := field(filter, "paths"), field(filter, "paths-ignore")
	if inc == nil && ign == nil {
		return true, nil
	}
	files, err := changed()
	if err != nil {
		return false, err
	}
	for _, f := range files {
		if inc != nil && matchList(stringList(inc), f) {
			return true, nil
		}
		if inc == nil && !matchList(stringList(ign), f) {
			return true, nil
		}
	}
	return false, nil
}

// dispatchable tells whether w may be started by hand (workflow_dispatch).
func (w *workflow) dispatchable() bool {
	_, ok := w.on["workflow_dispatch"]
	return ok
}

// dispatchInputs completes a dispatch's inputs from the workflow's
// workflow_dispatch.inputs: defaults fill what is missing, and a required
// input without one is refused.
func (w *workflow) dispatchInputs(given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range given {
		out[k] = v
	}
	declared := mapping(field(w.on["workflow_dispatch"], "inputs"))
	if declared == nil {
		return out, nil
	}
	for i := 0; i+1 < len(declared.Content); i += 2 {
		name, spec := declared.Content[i].Value, declared.Content[i+1]
		if _, ok := out[name]; ok {
			continue
		}
		if d := field(spec, "default"); d != nil {
			out[name] = d.Value
			continue
		}
		if r := field(spec, "required"); r != nil && r.Value == "true" {
			return nil, apierr.Validation("input %s is required", name)
		}
	}
	return out, nil
}
