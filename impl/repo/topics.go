package repo

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
)

// maxTopicLength is the reference's limit on a topic name.
const maxTopicLength = 35

var topicRe = regexp.MustCompile(`^[a-z0-9][-.a-z0-9]*$`)

func validTopic(t string) bool { return len(t) <= maxTopicLength && topicRe.MatchString(t) }

// normaliseTopic is how every topic name is read: trimmed and lower-cased.
func normaliseTopic(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

// sanitiseTopics normalises a submitted list: empty entries and repeats go
// (the first stays), and the rest split into valid and invalid names.
func sanitiseTopics(in []string) (valid, invalid []string) {
	seen := map[string]bool{}
	for _, raw := range in {
		t := normaliseTopic(raw)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if validTopic(t) {
			valid = append(valid, t)
		} else {
			invalid = append(invalid, t)
		}
	}
	return valid, invalid
}

// errTooManyTopics is the reference's refusal of a 26th topic.
func errTooManyTopics(message string) error { return apierr.InvalidTopics(nil, message) }

func (h Handlers) RepoListTopics(ctx context.Context, params repository.RepoListTopicsParams) middleware.Responder {
	r, _, err := h.Repo(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	topics, total, err := h.Store.Topics().ListByRepo(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	names := make([]string, 0, len(topics))
	for _, t := range topics {
		names = append(names, t.Name)
	}
	return repository.NewRepoListTopicsOK().WithPayload(&models.TopicName{TopicNames: names}).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoUpdateTopics(ctx context.Context, params repository.RepoUpdateTopicsParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	var submitted []string
	if params.Body != nil {
		submitted = params.Body.Topics
	}
	valid, invalid := sanitiseTopics(submitted)
	// The count is checked before the names, as in the reference.
	if len(valid) > h.Config.MaxTopicsPerRepo {
		return h.Fail(errTooManyTopics("Exceeding maximum number of topics per repo"))
	}
	if len(invalid) > 0 {
		return h.Fail(apierr.InvalidTopics(invalid, "Topic names are invalid"))
	}
	err = h.Store.Topics().Update(ctx, r.ID, func([]string) ([]string, error) { return valid, nil })
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoUpdateTopicsNoContent()
}

func (h Handlers) RepoAddTopic(ctx context.Context, params repository.RepoAddTopicParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	topic := normaliseTopic(params.Topic)
	if !validTopic(topic) {
		return h.Fail(apierr.InvalidTopics([]string{topic}, "Topic name is invalid"))
	}
	err = h.Store.Topics().Update(ctx, r.ID, func(current []string) ([]string, error) {
		if len(current) >= h.Config.MaxTopicsPerRepo {
			return nil, errTooManyTopics("Exceeding maximum allowed topics per repo.")
		}
		return append(current, topic), nil
	})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoAddTopicNoContent()
}

// errTopicNotSet ends a removal that finds nothing to remove.
var errTopicNotSet = errors.New("topic not set")

func (h Handlers) RepoDeleteTopic(ctx context.Context, params repository.RepoDeleteTopicParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	topic := normaliseTopic(params.Topic)
	if !validTopic(topic) {
		return h.Fail(apierr.InvalidTopics([]string{topic}, "Topic name is invalid"))
	}
	err = h.Store.Topics().Update(ctx, r.ID, func(current []string) ([]string, error) {
		kept := make([]string, 0, len(current))
		for _, t := range current {
			if t != topic {
				kept = append(kept, t)
			}
		}
		if len(kept) == len(current) {
			return nil, errTopicNotSet
		}
		return kept, nil
	})
	if errors.Is(err, errTopicNotSet) {
		return h.Fail(apierr.NotFound("not found"))
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteTopicNoContent()
}

func (h Handlers) TopicSearch(ctx context.Context, params repository.TopicSearchParams) middleware.Responder {
	pg := h.Page(params.Page, params.Limit)
	// Names and counts cover only the repositories the caller may see.
	v := access.Viewer(auth.FromContext(ctx))
	topics, total, err := h.Store.Topics().Search(ctx, v, conv.Value(params.Q), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.TopicResponse, 0, len(topics))
	for _, t := range topics {
		out = append(out, &models.TopicResponse{
			ID:        t.ID,
			Name:      t.Name,
			RepoCount: t.RepoCount,
			Created:   convert.TimeOf(t.CreatedAt),
			Updated:   convert.TimeOf(t.UpdatedAt),
		})
	}
	return repository.NewTopicSearchOK().WithPayload(&models.TopicSearchResults{Topics: out}).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}
