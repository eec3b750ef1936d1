package convert

import (
	"fmt"
	"strings"

	"repohost/models"
	"repohost/store"
)

// ActionRunner renders a runner; status says whether it was in contact
// lately, busy whether it runs a task now. Each label is listed with its
// position as id, as the reference does.
func ActionRunner(r *store.ActionRunner, online, busy bool) *models.ActionRunner {
	status := "offline"
	if online {
		status = "online"
	}
	labels := make([]*models.ActionRunnerLabel, len(r.Labels))
	for i, l := range r.Labels {
		labels[i] = &models.ActionRunnerLabel{ID: int64(i), Name: l, Type: "custom"}
	}
	return &models.ActionRunner{ID: r.ID, Name: r.Name, Status: status, Busy: busy, Disabled: r.Disabled,
		Ephemeral: r.Ephemeral, Labels: labels}
}

// shortRef is a branch's or tag's name without its refs/ prefix.
func shortRef(ref string) string {
	for _, p := range []string{"refs/heads/", "refs/tags/"} {
		if name, ok := strings.CutPrefix(ref, p); ok {
			return name
		}
	}
	return ref
}

// ActionStatusFunc maps a stored status to the API's status and
// conclusion (impl/actions.APIStatus).
type ActionStatusFunc func(store.ActionStatus) (string, string)

// ActionJob renders a job of the repository owner/repo; stepNames names
// the task's steps by number.
func ActionJob(base string, j *store.JobView, status ActionStatusFunc, stepNames []string) *models.ActionWorkflowJob {
	repoAPI := fmt.Sprintf("%sapi/v1/repos/%s/%s/actions", base, j.OwnerName, j.RepoName)
	st, concl := status(j.Status)
	steps := make([]*models.ActionWorkflowStep, len(j.Steps))
	for i, s := range j.Steps {
		sst, sconcl := status(s.Status)
		name := fmt.Sprintf("Step %d", s.Number+1)
		if int(s.Number) < len(stepNames) && stepNames[s.Number] != "" {
			name = stepNames[s.Number]
		}
		steps[i] = &models.ActionWorkflowStep{Name: name, Number: s.Number + 1, Status: sst, Conclusion: sconcl,
			StartedAt: Time(s.Started), CompletedAt: Time(s.Stopped)}
	}
	labels := j.RunsOn
	if labels == nil {
		labels = []string{}
	}
	return &models.ActionWorkflowJob{
		ID:          j.ID,
		Name:        j.Name,
		RunID:       j.RunID,
		RunAttempt:  j.Attempt,
		RunURL:      fmt.Sprintf("%s/runs/%d", repoAPI, j.RunID),
		URL:         fmt.Sprintf("%s/jobs/%d", repoAPI, j.ID),
		HTMLURL:     fmt.Sprintf("%s%s/%s/actions/runs/%d/jobs/%d", base, j.OwnerName, j.RepoName, j.RunNumber, j.ID),
		HeadBranch:  shortRef(j.Ref),
		HeadSha:     j.CommitSHA,
		Labels:      labels,
		RunnerID:    j.RunnerID,
		RunnerName:  j.RunnerName,
		Status:      st,
		Conclusion:  concl,
		Steps:       steps,
		CreatedAt:   TimeOf(j.CreatedAt),
		StartedAt:   Time(j.Started),
		CompletedAt: Time(j.Stopped),
	}
}

// ActionRun renders a run; actor is its triggering user (nil when none).
func ActionRun(base string, r *store.RunView, status ActionStatusFunc, actor *models.User) *models.ActionWorkflowRun {
	st, concl := status(r.Status)
	return &models.ActionWorkflowRun{
		ID:           r.ID,
		RunNumber:    r.Number,
		RunAttempt:   r.Attempt,
		DisplayTitle: r.Title,
		Event:        r.Event,
		HeadBranch:   shortRef(r.Ref),
		HeadSha:      r.CommitSHA,
		Path:         r.WorkflowID + "@" + r.Ref,
		RepositoryID: r.RepoID,
		Status:       st,
		Conclusion:   concl,
		URL:          fmt.Sprintf("%sapi/v1/repos/%s/%s/actions/runs/%d", base, r.OwnerName, r.RepoName, r.ID),
		HTMLURL:      fmt.Sprintf("%s%s/%s/actions/runs/%d", base, r.OwnerName, r.RepoName, r.Number),
		Actor:        actor,
		TriggerActor: actor,
		StartedAt:    Time(r.Started),
		CompletedAt:  Time(r.Stopped),
	}
}
