package actions

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workflows are read with gopkg.in/yaml.v3 into yaml.Node trees rather than
// with Gitea's act model package: the node keeps the jobs in file order
// and lets each job be re-emitted for its runner as written, and yaml.v3
// is small and already in the module graph, where the act fork brings
// docker and a whole runtime with it.

// workflow is a parsed workflow file.
type workflow struct {
	Name   string
	on     map[string]*yaml.Node // event name -> its filter (nil when none)
	onNode *yaml.Node
	Jobs   []*workflowJob
}

// workflowJob is one job of a workflow before its matrix is expanded.
type workflowJob struct {
	ID     string
	Name   string
	Needs  []string
	RunsOn []string
	node   *yaml.Node
	matrix []map[string]string
}

// expandedJob is one job to run: a workflow job with one matrix
// combination.
type expandedJob struct {
	JobID   string
	Name    string
	Needs   []string
	RunsOn  []string
	Payload []byte
}

func mapping(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// field returns key's value in mapping n.
func field(n *yaml.Node, key string) *yaml.Node {
	if n = mapping(n); n == nil {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// stringList reads a scalar or a sequence of scalars.
func stringList(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "" {
			return nil
		}
		return []string{n.Value}
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode {
				out = append(out, c.Value)
			}
		}
		return out
	}
	return nil
}

// parseWorkflow reads a workflow file; an error means the file is not a
// workflow this server can run.
func parseWorkflow(content []byte) (*workflow, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(content, &doc); err != nil {
		return nil, err
	}
	root := mapping(&doc)
	if root == nil {
		return nil, fmt.Errorf("a workflow is a mapping")
	}
	w := &workflow{on: map[string]*yaml.Node{}}
	if n := field(root, "name"); n != nil {
		w.Name = n.Value
	}
	// "on" may come back as the key "on" or, from YAML 1.1 habits, "true";
	// yaml.v3 keeps the text, so only "on" is looked for.
	on := field(root, "on")
	if on == nil {
		return nil, fmt.Errorf("no on: section")
	}
	w.onNode = on
	switch on.Kind {
	case yaml.ScalarNode, yaml.SequenceNode:
		for _, ev := range stringList(on) {
			w.on[ev] = nil
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			w.on[on.Content[i].Value] = on.Content[i+1]
		}
	}
	jobs := mapping(field(root, "jobs"))
	if jobs == nil || len(jobs.Content) == 0 {
		return nil, fmt.Errorf("no jobs")
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		id, node := jobs.Content[i].Value, jobs.Content[i+1]
		if mapping(node) == nil {
			return nil, fmt.Errorf("job %s is not a mapping", id)
		}
		j := &workflowJob{ID: id, node: node, Needs: stringList(field(node, "needs"))}
		if n := field(node, "name"); n != nil {
			j.Name = n.Value
		}
		runsOn := field(node, "runs-on")
		if m := mapping(runsOn); m != nil {
			runsOn = field(m, "labels")
		}
		j.RunsOn = stringList(runsOn)
		m, err := expandMatrix(field(field(node, "strategy"), "matrix"))
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		j.matrix = m
		w.Jobs = append(w.Jobs, j)
	}
	known := map[string]bool{}
	for _, j := range w.Jobs {
		known[j.ID] = true
	}
	for _, j := range w.Jobs {
		for _, n := range j.Needs {
			if !known[n] {
				return nil, fmt.Errorf("job %s needs unknown job %s", j.ID, n)
			}
		}
	}
	if cyclic(w.Jobs) {
		return nil, fmt.Errorf("the jobs' needs form a cycle")
	}
	return w, nil
}

func cyclic(jobs []*workflowJob) bool {
	needs := map[string][]string{}
	for _, j := range jobs {
		needs[j.ID] = j.Needs
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) bool
	visit = func(id string) bool {
		switch state[id] {
		case 1:
			return true
		case 2:
			return false
		}
		state[id] = 1
		for _, n := range needs[id] {
			if visit(n) {
				return true
			}
		}
		state[id] = 2
		return false
	}
	for _, j := range jobs {
		if visit(j.ID) {
			return true
		}
	}
	return false
}

// maxMatrix bounds one job's combinations, as the reference's 256.
const maxMatrix = 256

// expandMatrix turns strategy.matrix into its combinations (nil without a
// matrix): the product of the listed values, less exclude, plus include.
func expandMatrix(n *yaml.Node) ([]map[string]string, error) {
	m := mapping(n)
	if m == nil {
		return nil, nil
	}
	var keys []string
	values := map[string][]string{}
	var include, exclude []map[string]string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		switch k {
		case "include":
			include = combos(v)
		case "exclude":
			exclude = combos(v)
		default:
			if v.Kind != yaml.SequenceNode {
				return nil, fmt.Errorf("matrix %s is not a list", k)
			}
			keys = append(keys, k)
			values[k] = scalarTexts(v)
		}
	}
	out := []map[string]string{{}}
	for _, k := range keys {
		var next []map[string]string
		for _, c := range out {
			for _, v := range values[k] {
				nc := map[string]string{k: v}
				for ck, cv := range c {
					nc[ck] = cv
				}
				next = append(next, nc)
			}
		}
		out = next
		if len(out) > maxMatrix {
			return nil, fmt.Errorf("matrix has more than %d combinations", maxMatrix)
		}
	}
	if len(keys) == 0 {
		out = nil
	}
	kept := out[:0]
	for _, c := range out {
		excluded := false
		for _, e := range exclude {
			if subset(e, c) {
				excluded = true
				break
			}
		}
		if !excluded {
			kept = append(kept, c)
		}
	}
	out = kept
	for _, inc := range include {
		// An include extends the combinations whose original values it
		// repeats; one that matches none is a combination of its own.
		matched := false
		for _, c := range out {
			ok := true
			for _, k := range keys {
				if v, has := inc[k]; has && v != c[k] {
					ok = false
					break
				}
			}
			if ok && len(keys) > 0 {
				matched = true
				for k, v := range inc {
					c[k] = v
				}
			}
		}
		if !matched {
			out = append(out, inc)
		}
	}
	if len(out) > maxMatrix {
		return nil, fmt.Errorf("matrix has more than %d combinations", maxMatrix)
	}
	return out, nil
}

func scalarTexts(n *yaml.Node) []string {
	var out []string
	for _, c := range n.Content {
		if c.Kind == yaml.ScalarNode {
			out = append(out, c.Value)
		} else {
			b, _ := yaml.Marshal(c)
			out = append(out, strings.TrimSpace(string(b)))
		}
	}
	return out
}

func combos(n *yaml.Node) []map[string]string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []map[string]string
	for _, c := range n.Content {
		if c.Kind != yaml.MappingNode {
			continue
		}
		m := map[string]string{}
		for i := 0; i+1 < len(c.Content); i += 2 {
			m[c.Content[i].Value] = c.Content[i+1].Value
		}
		out = append(out, m)
	}
	return out
}

func subset(small, big map[string]string) bool {
	for k, v := range small {
		if big[k] != v {
			return false
		}
	}
	return true
}

var matrixExpr = regexp.MustCompile(`\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}`)

func interpolate(s string, combo map[string]string) string {
	return matrixExpr.ReplaceAllStringFunc(s, func(m string) string {
		k := matrixExpr.FindStringSubmatch(m)[1]
		if v, ok := combo[k]; ok {
			return v
		}
		return m
	})
}

// expand makes w's jobs to run, one per matrix combination, each with the
// single-job workflow its runner receives.
func (w *workflow) expand() ([]*expandedJob, error) {
	var out []*expandedJob
	for _, j := range w.Jobs {
		combosOf := j.matrix
		if len(combosOf) == 0 {
			combosOf = []map[string]string{nil}
		}
		for _, combo := range combosOf {
			name := j.Name
			if name == "" {
				name = j.ID
			}
			if combo != nil && !strings.Contains(name, "${{") {
				keys := make([]string, 0, len(combo))
				for k := range combo {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				vals := make([]string, len(keys))
				for i, k := range keys {
					vals[i] = combo[k]
				}
				name += " (" + strings.Join(vals, ", ") + ")"
			}
			name = interpolate(name, combo)
			runsOn := make([]string, len(j.RunsOn))
			for i, l := range j.RunsOn {
				runsOn[i] = interpolate(l, combo)
			}
			payload, err := w.payload(j, combo)
			if err != nil {
				return nil, err
			}
			out = append(out, &expandedJob{JobID: j.ID, Name: name, Needs: j.Needs, RunsOn: runsOn, Payload: payload})
		}
	}
	return out, nil
}

// payload is the workflow reduced to job j with its matrix fixed to combo,
// which is what a runner executes.
func (w *workflow) payload(j *workflowJob, combo map[string]string) ([]byte, error) {
	var job map[string]any
	if err := j.node.Decode(&job); err != nil {
		return nil, err
	}
	if combo != nil {
		strategy, _ := job["strategy"].(map[string]any)
		if strategy == nil {
			strategy = map[string]any{}
		}
		fixed := map[string]any{}
		for k, v := range combo {
			fixed[k] = []any{v}
		}
		strategy["matrix"] = fixed
		job["strategy"] = strategy
	}
	var on any
	if err := w.onNode.Decode(&on); err != nil {
		return nil, err
	}
	doc := map[string]any{"on": on, "jobs": map[string]any{j.ID: job}}
	if w.Name != "" {
		doc["name"] = w.Name
	}
	return yaml.Marshal(doc)
}

// jobHasIf tells whether job jobID of a single-job workflow payload has a
// job-level if: condition. The server does not evaluate it (the runner
// does, as in the reference); it only decides whether a job whose needs
// did not all succeed is handed to a runner at all.
func jobHasIf(payload []byte, jobID string) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(payload, &doc); err != nil {
		return false
	}
	cond := field(field(field(&doc, "jobs"), jobID), "if")
	return cond != nil && cond.Kind == yaml.ScalarNode && strings.TrimSpace(cond.Value) != ""
}
