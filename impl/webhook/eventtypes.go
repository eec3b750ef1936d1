package webhook

import (
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// The hook event types (the reference's HookEventType), in the order a
// hook's events are listed.
var allEventTypes = []string{
	"create", "delete", "fork", "push",
	"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment",
	"pull_request", "pull_request_assign", "pull_request_label", "pull_request_milestone",
	"pull_request_comment", "pull_request_review", "pull_request_sync", "pull_request_review_request",
	"wiki", "repository", "release", "package", "status", "workflow_run", "workflow_job",
}

// groups are the names that switch on a family of event types.
var groups = map[string][]string{
	"issues":            {"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"},
	"issues_only":       {"issues"},
	"pull_request":      {"pull_request", "pull_request_assign", "pull_request_label", "pull_request_milestone", "pull_request_comment", "pull_request_review", "pull_request_sync", "pull_request_review_request"},
	"pull_request_only": {"pull_request"},
}

// expandEvents turns the names a client sent into the hook's event types,
// in canonical order; an empty list means push, as in the reference.
// Unknown names are ignored, as the reference ignores them.
func expandEvents(names []string) []string {
	on := map[string]bool{}
	for _, n := range names {
		if g, ok := groups[n]; ok {
			for _, t := range g {
				on[t] = true
			}
			continue
		}
		on[n] = true
	}
	out := []string{}
	for _, t := range allEventTypes {
		if on[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{"push"}
	}
	return out
}

// headerEvent is X-Gitea-Event for an event type: the sub-events of issues
// and pull requests travel as their family's event.
func headerEvent(eventType string) string {
	switch {
	case eventType == "issue_comment":
		return "issue_comment"
	case strings.HasPrefix(eventType, "issue"):
		return "issues"
	case eventType == "pull_request_comment":
		return "issue_comment"
	case eventType == "pull_request_review_approved":
		return "pull_request_approved"
	case eventType == "pull_request_review_rejected":
		return "pull_request_rejected"
	case eventType == "pull_request_review_comment":
		return "pull_request_comment"
	case strings.HasPrefix(eventType, "pull_request"):
		return "pull_request"
	}
	return eventType
}

// hasEvent tells whether a hook with events receives eventType; the three
// review outcomes share the pull_request_review switch.
func hasEvent(events []string, eventType string) bool {
	switch eventType {
	case "pull_request_review_approved", "pull_request_review_rejected", "pull_request_review_comment":
		eventType = "pull_request_review"
	}
	return slices.Contains(events, eventType)
}

// branchMatches applies a hook's branch filter (a glob, "" or "*" for
// every branch; braces list alternatives) to a branch name.
func branchMatches(filter, branch string) bool {
	if filter == "" || filter == "*" || branch == "" {
		return true
	}
	g, err := glob.Compile(filter)
	if err != nil {
		return false
	}
	return g.Match(branch)
}

// validBranchFilter tells whether filter compiles as a glob.
func validBranchFilter(filter string) bool {
	if filter == "" {
		return true
	}
	_, err := glob.Compile(filter)
	return err == nil
}
