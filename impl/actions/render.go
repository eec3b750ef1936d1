package actions

import (
	"context"
	"strings"

	"gopkg.in/yaml.v3"

	"repohost/impl/apierr"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/store"
)

// The queries and renderings the list routes of every scope share.

// RunnerList renders a page of runners as the reference's wrapped list.
func RunnerList(rs []*Runner, total int64) *models.ActionRunnersResponse {
	out := &models.ActionRunnersResponse{Entries: make([]*models.ActionRunner, len(rs)), TotalCount: total}
	for i, r := range rs {
		out.Entries[i] = convert.ActionRunner(r.ActionRunner, r.Online, r.Busy)
	}
	return out
}

// RenderRunner renders one runner.
func RenderRunner(r *Runner) *models.ActionRunner {
	return convert.ActionRunner(r.ActionRunner, r.Online, r.Busy)
}

// JobQuery is a jobs list's query as the API gives it.
type JobQuery struct {
	Status string
	Order  *string
}

// ListJobs lists the jobs base selects, filtered and ordered by q, and
// renders them.
func (s Service) ListJobs(ctx context.Context, base string, f store.JobFilter, q JobQuery, p store.Page) (*models.ActionWorkflowJobsResponse, error) {
	statuses, err := ParseStatusFilter(q.Status)
	if err != nil {
		return nil, err
	}
	f.Statuses = statuses
	if q.Order != nil {
		switch *q.Order {
		case "asc":
		case "desc":
			f.Desc = true
		default:
			return nil, apierr.Validation("order must be asc or desc")
		}
	}
	jobs, total, err := s.Store.Actions().ListJobs(ctx, f, p)
	if err != nil {
		return nil, err
	}
	out := &models.ActionWorkflowJobsResponse{Entries: make([]*models.ActionWorkflowJob, len(jobs)), TotalCount: total}
	for i, j := range jobs {
		out.Entries[i] = convert.ActionJob(base, j, APIStatus, stepNames(j.JobID, j.WorkflowPayload))
	}
	return out, nil
}

// RenderJob renders one job of repo.
func (s Service) RenderJob(ctx context.Context, base string, repo *store.Repository, j *store.ActionRunJob) (*models.ActionWorkflowJob, error) {
	list, _, err := s.Store.Actions().ListJobs(ctx, store.JobFilter{ID: j.ID, RepoID: repo.ID}, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apierr.NotFound("job not found")
	}
	return convert.ActionJob(base, list[0], APIStatus, stepNames(list[0].JobID, list[0].WorkflowPayload)), nil
}

// stepNames names a job's steps from its workflow: a step's name, else
// the action it uses, else the first line of what it runs.
func stepNames(jobID string, payload []byte) []string {
	var doc struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Uses string `yaml:"uses"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if yaml.Unmarshal(payload, &doc) != nil {
		return nil
	}
	var out []string
	for _, st := range doc.Jobs[jobID].Steps {
		name := st.Name
		if name == "" && st.Uses != "" {
			name = "Run " + st.Uses
		}
		if name == "" {
			first, _, _ := strings.Cut(strings.TrimSpace(st.Run), "\n")
			name = "Run " + first
		}
		out = append(out, name)
	}
	return out
}

// ListRuns lists and renders the runs f selects, newest first; viewer
// decides how the triggering users are shown.
func (s Service) ListRuns(ctx context.Context, base string, viewer *store.User, f store.RunFilter, p store.Page) (*models.ActionWorkflowRunsResponse, error) {
	runs, total, err := s.Store.Actions().ListRuns(ctx, f, p)
	if err != nil {
		return nil, err
	}
	list, err := s.renderRuns(ctx, base, viewer, runs)
	if err != nil {
		return nil, err
	}
	return &models.ActionWorkflowRunsResponse{Entries: list, TotalCount: total}, nil
}

func (s Service) renderRuns(ctx context.Context, base string, viewer *store.User, runs []*store.RunView) ([]*models.ActionWorkflowRun, error) {
	var ids []int64
	for _, r := range runs {
		if r.TriggerUserID != 0 {
			ids = append(ids, r.TriggerUserID)
		}
	}
	users := map[int64]*store.User{}
	if len(ids) > 0 {
		var err error
		if users, err = s.Store.Users().FindByIDs(ctx, ids); err != nil {
			return nil, err
		}
	}
	out := make([]*models.ActionWorkflowRun, len(runs))
	for i, r := range runs {
		out[i] = convert.ActionRun(base, r, APIStatus, convert.User(base, users[r.TriggerUserID], viewer))
	}
	return out, nil
}

// RenderRun renders one run of repo.
func (s Service) RenderRun(ctx context.Context, base string, viewer *store.User, repo *store.Repository, r *store.ActionRun) (*models.ActionWorkflowRun, error) {
	list, err := s.renderRuns(ctx, base, viewer, []*store.RunView{{ActionRun: *r, OwnerName: repo.Owner.Name, RepoName: repo.Name}})
	if err != nil {
		return nil, err
	}
	return list[0], nil
}
