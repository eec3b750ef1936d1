package actions

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestExpandMatrix(t *testing.T) {
	t.Parallel()
	jobs := mustExpand(t, `on: push
jobs:
  build:
    name: Build ${{ matrix.os }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [linux, windows]
        go: ["1.21", "1.22"]
        exclude:
          - os: windows
            go: "1.21"
        include:
          - os: linux
            go: "1.22"
            race: "yes"
          - os: mac
            go: "1.22"
  lint:
    runs-on: [linux, self-hosted]
    strategy:
      matrix:
        v: [a, b]
`)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+"@"+strings.Join(j.RunsOn, "+"))
	}
	want := "Build linux@linux,Build linux@linux,Build windows@windows,Build mac@mac,lint (a)@linux+self-hosted,lint (b)@linux+self-hosted"
	if strings.Join(got, ",") != want {
		t.Fatalf("expanded %s\nwant     %s", strings.Join(got, ","), want)
	}
	// Each payload is one job with its matrix fixed to its combination.
	var doc struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix map[string][]string `yaml:"matrix"`
			} `yaml:"strategy"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(jobs[1].Payload, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Jobs["build"].Strategy.Matrix
	if len(doc.Jobs) != 1 || len(m) != 3 || m["go"][0] != "1.22" || m["race"][0] != "yes" {
		t.Fatalf("payload %s", jobs[1].Payload)
	}
}

func TestParseWorkflowRefusals(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"no on":        "jobs:\n  a:\n    runs-on: x\n",
		"no jobs":      "on: push\n",
		"unknown need": "on: push\njobs:\n  a:\n    needs: b\n    runs-on: x\n",
		"cycle":        "on: push\njobs:\n  a:\n    needs: b\n    runs-on: x\n  b:\n    needs: [a]\n    runs-on: x\n",
		"not yaml":     "on: [push\n",
		"huge matrix":  "on: push\njobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n        b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n",
	} {
		if _, err := parseWorkflow([]byte(src)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestPushTriggers(t *testing.T) {
	t.Parallel()
	changed := func(files ...string) func() ([]string, error) {
		return func() ([]string, error) { return files, nil }
	}
	for _, c := range []struct {
		on    string
		ref   string
		files []string
		want  bool
	}{
		{"push", "refs/heads/main", nil, true},
		{"push", "refs/tags/v1", nil, true},
		{"[push, pull_request]", "refs/heads/x", nil, true},
		{"workflow_dispatch", "refs/heads/main", nil, false},
		{"{push: {branches: [main]}}", "refs/heads/main", nil, true},
		{"{push: {branches: [main]}}", "refs/heads/dev", nil, false},
		{"{push: {branches: [main]}}", "refs/tags/v1", nil, false},
		{"{push: {branches: ['release/**', '!release/old/*']}}", "refs/heads/release/2/x", nil, true},
		{"{push: {branches: ['release/**', '!release/old/*']}}", "refs/heads/release/old/a", nil, false},
		{"{push: {branches: ['feat/*']}}", "refs/heads/feat/a/b", nil, false},
		{"{push: {branches-ignore: [wip]}}", "refs/heads/wip", nil, false},
		{"{push: {branches-ignore: [wip]}}", "refs/heads/main", nil, true},
		{"{push: {tags: ['v*']}}", "refs/tags/v1.2", nil, true},
		{"{push: {tags: ['v*']}}", "refs/heads/main", nil, false},
		{"{push: {tags-ignore: ['v*']}}", "refs/tags/x1", nil, true},
		{"{push: {paths: ['src/**']}}", "refs/heads/main", []string{"docs/a.md", "src/x/y.go"}, true},
		{"{push: {paths: ['src/**']}}", "refs/heads/main", []string{"docs/a.md"}, false},
		{"{push: {paths: ['src/**']}}", "refs/tags/v1", nil, true},
		{"{push: {paths-ignore: ['docs/**']}}", "refs/heads/main", []string{"docs/a.md"}, false},
		{"{push: {paths-ignore: ['docs/**']}}", "refs/heads/main", []string{"docs/a.md", "main.go"}, true},
		{"{push: {paths: ['*.go']}}", "refs/heads/main", []string{"cmd/main.go"}, false},
		{"{push: {paths: ['**.go']}}", "refs/heads/main", []string{"cmd/main.go"}, true},
	} {
		w, err := parseWorkflow([]byte("on: " + c.on + "\njobs:\n  a:\n    runs-on: x\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.on, err)
		}
		got, err := w.pushTriggers(c.ref, changed(c.files...))
		if err != nil || got != c.want {
			t.Errorf("on %s, push %s %v: %v (%v), want %v", c.on, c.ref, c.files, got, err, c.want)
		}
	}
}

func TestDispatchInputs(t *testing.T) {
	t.Parallel()
	w, err := parseWorkflow([]byte("on:\n  workflow_dispatch:\n    inputs:\n      a:\n        default: one\n      b:\n        required: true\njobs:\n  x:\n    runs-on: y\n"))
	if err != nil || !w.dispatchable() {
		t.Fatalf("%v %v", err, w)
	}
	if _, err := w.dispatchInputs(nil); err == nil {
		t.Fatal("missing required input accepted")
	}
	got, err := w.dispatchInputs(map[string]string{"b": "two"})
	if err != nil || got["a"] != "one" || got["b"] != "two" {
		t.Fatalf("inputs %v %v", got, err)
	}
}

func TestPullTriggers(t *testing.T) {
	t.Parallel()
	changed := func(files ...string) func() ([]string, error) {
		return func() ([]string, error) { return files, nil }
	}
	cases := []struct {
		on       string
		activity string
		base     string
		files    []string
		want     bool
	}{
		{"pull_request", "opened", "dev", nil, true},
		{"[push, pull_request]", "synchronize", "main", nil, true},
		{"push", "opened", "main", nil, false},
		{"pull_request_target", "opened", "main", nil, false},
		{"{pull_request: {types: [closed]}}", "opened", "main", nil, false},
		{"{pull_request: {types: [reopened]}}", "reopened", "main", nil, true},
		{"{pull_request: {}}", "edited", "main", nil, false},
		{"{pull_request: {branches: [main]}}", "opened", "main", nil, true},
		{"{pull_request: {branches: [main]}}", "opened", "other", nil, false},
		{"{pull_request: {branches: ['release/**']}}", "opened", "release/1/x", nil, true},
		{"{pull_request: {branches-ignore: [main]}}", "opened", "main", nil, false},
		{"{pull_request: {branches-ignore: [main]}}", "opened", "dev", nil, true},
		{"{pull_request: {paths: ['docs/**']}}", "opened", "main", []string{"a.go", "docs/x/y.md"}, true},
		{"{pull_request: {paths: ['docs/**']}}", "opened", "main", []string{"a.go"}, false},
		{"{pull_request: {paths-ignore: ['*.md']}}", "opened", "main", []string{"README.md"}, false},
	}
	for _, c := range cases {
		w, err := parseWorkflow([]byte("on: " + c.on + "\njobs:\n  a:\n    runs-on: linux\n    steps:\n      - run: true\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.on, err)
		}
		got, err := w.pullTriggers(c.activity, c.base, changed(c.files...))
		if err != nil || got != c.want {
			t.Errorf("on %s, %s into %s with %v: %v (%v), want %v", c.on, c.activity, c.base, c.files, got, err, c.want)
		}
	}
}

// TestJobHasIf: the payload a job is stored with keeps its if:, which
// decides whether the job still goes to a runner after a need failed.
func TestJobHasIf(t *testing.T) {
	t.Parallel()
	jobs := mustExpand(t, `on: push
jobs:
  a:
    runs-on: linux
    steps:
      - run: "false"
  b:
    needs: a
    if: always()
    runs-on: linux
    steps:
      - run: echo b
  c:
    needs: a
    if: ${{ failure() }}
    runs-on: linux
    strategy:
      matrix:
        v: [1, 2]
    steps:
      - run: echo c
  d:
    needs: a
    if: ""
    runs-on: linux
    steps:
      - if: always()
        run: echo step
`)
	want := map[string]bool{"a": false, "b": true, "c": true, "d": false}
	if len(jobs) != 5 {
		t.Fatalf("%d jobs, want 5", len(jobs))
	}
	for _, j := range jobs {
		if got := jobHasIf(j.Payload, j.JobID); got != want[j.JobID] {
			t.Errorf("job %s: has if %v, want %v\n%s", j.JobID, got, want[j.JobID], j.Payload)
		}
	}
	if jobHasIf([]byte("not: [yaml"), "a") {
		t.Error("a payload that does not parse has an if")
	}
}

// mustExpand parses a workflow and expands its jobs, failing t on error.
func mustExpand(t *testing.T, content string) []*expandedJob {
	t.Helper()
	w, err := parseWorkflow([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := w.expand()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}
