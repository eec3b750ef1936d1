package templates

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Label is one label of a label set. Color is "#rrggbb", lower case.
type Label struct {
	Name           string `yaml:"name"`
	Color          string `yaml:"color"`
	Description    string `yaml:"description"`
	Exclusive      bool   `yaml:"exclusive"`
	ExclusiveOrder int    `yaml:"exclusive_order"`
}

// A label set is a file of data/label: NAME.yaml (or .yml) in YAML, or
// NAME in the older one-label-a-line form "#color name ; description". A
// set's name is its file name without the extension; YAML wins when both
// exist.
var labelExts = map[string]int{"": 0, ".yml": 1, ".yaml": 2}

// labelSetFiles maps each set's name to its file.
func labelSetFiles() map[string]string {
	files := map[string]string{}
	for _, f := range labelFiles().names {
		ext := path.Ext(f)
		rank, ok := labelExts[ext]
		if !ok {
			ext, rank = "", 0
		}
		name := strings.TrimSuffix(f, ext)
		if old, seen := files[name]; !seen || labelExts[path.Ext(old)] < rank {
			files[name] = f
		}
	}
	return files
}

// LabelSets lists the label sets by name, in name order.
func LabelSets() []string {
	var out []string
	for _, f := range labelFiles().names {
		name := strings.TrimSuffix(f, path.Ext(f))
		if labelSetFiles()[name] == f {
			out = append(out, name)
		}
	}
	return out
}

// ErrUnknownLabelSet is what errors.Is finds in the error of a label set
// that does not exist.
var ErrUnknownLabelSet = errors.New("label template not found")

// unknownLabelSet is the error for the named set, in the reference's words.
type unknownLabelSet string

func (u unknownLabelSet) Error() string        { return fmt.Sprintf("label template %q not found", string(u)) }
func (u unknownLabelSet) Is(target error) bool { return target == ErrUnknownLabelSet }

// LabelSet returns the canonical name and the labels of a label set, in
// the file's order.
func LabelSet(name string) (string, []Label, error) {
	files := labelSetFiles()
	canonical, ok := "", false
	for n := range files {
		if n == name {
			canonical, ok = n, true
			break
		}
		if strings.EqualFold(n, name) {
			canonical, ok = n, true
		}
	}
	if !ok {
		return "", nil, unknownLabelSet(name)
	}
	file := files[canonical]
	text := labelFiles().read(file)
	var labels []Label
	var err error
	if ext := path.Ext(file); ext == ".yaml" || ext == ".yml" {
		labels, err = parseYAMLLabels(text)
	} else {
		labels, err = parseLegacyLabels(text)
	}
	if err != nil {
		return "", nil, fmt.Errorf("label template %s: %w", file, err)
	}
	return canonical, labels, nil
}

func parseYAMLLabels(text string) ([]Label, error) {
	var f struct {
		Labels []Label `yaml:"labels"`
	}
	if err := yaml.Unmarshal([]byte(text), &f); err != nil {
		return nil, err
	}
	for i := range f.Labels {
		l := &f.Labels[i]
		if l.Name == "" || strings.TrimSpace(l.Color) == "" {
			return nil, errors.New("label name and color are required fields")
		}
		c, err := NormalizeColor(l.Color)
		if err != nil {
			return nil, fmt.Errorf("label %s: %w", l.Name, err)
		}
		l.Color = c
	}
	return f.Labels, nil
}

func parseLegacyLabels(text string) ([]Label, error) {
	var out []Label
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		head, description, _ := strings.Cut(line, ";")
		color, name, ok := strings.Cut(head, " ")
		if !ok {
			return nil, fmt.Errorf("line is malformed: %s", line)
		}
		c, err := NormalizeColor(color)
		if err != nil {
			return nil, fmt.Errorf("line %s: %w", line, err)
		}
		out = append(out, Label{Name: strings.TrimSpace(name), Color: c, Description: strings.TrimSpace(description)})
	}
	return out, nil
}

var colorRe = regexp.MustCompile(`^#?([0-9a-f]{6}|[0-9a-f]{3})$`)

// NormalizeColor turns "#rgb", "rgb", "#rrggbb" or "rrggbb" into
// "#rrggbb" in lower case.
func NormalizeColor(c string) (string, error) {
	m := colorRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(c)))
	if m == nil {
		return "", fmt.Errorf("invalid color %q", c)
	}
	hex := m[1]
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	return "#" + hex, nil
}
