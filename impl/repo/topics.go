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
	"repohost/store"
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

// SetTopics replaces r's topics with the submitted names (normalised;
// empty entries and repeats dropped). The count is checked before the
// names, as in the reference. Topic changes are not announced: the
// reference notifies none.
func (s Service) SetTopics(ctx context.Context, r *store.Repository, submitted []string) error {
	valid, invalid := sanitiseTopics(submitted)
	if len(valid) > s.Config.MaxTopicsPerRepo {
		return errTooManyTopics("Exceeding maximum number of topics per repo")
	}
	if len(invalid) > 0 {
		return apierr.InvalidTopics(invalid, "Topic names are invalid")
	}
	return s.Store.Topics().Update(ctx, r.ID, func([]string) ([]string, error) { return valid, nil })
}

// AddTopic adds one topic to r's, up to Config.MaxTopicsPerRepo.
func (s Service) AddTopic(ctx context.Context, r *store.Repository, name string) error {
	topic := normaliseTopic(name)
	if !validTopic(topic) {
		return apierr.InvalidTopics([]string{topic}, "Topic name is invalid")
	}
	return s.Store.Topics().Update(ctx, r.ID, func(current []string) ([]string, error) {
		if len(current) >= s.Config.MaxTopicsPerRepo {
			return nil, errTooManyTopics("Exceeding maximum allowed topics per repo.")
		}
		return append(current, topic), nil
	})
}

// errTopicNotSet ends a removal that finds nothing to remove.
var errTopicNotSet = errors.New("topic not set")

// DeleteTopic removes one topic of r's; 404 when r does not have it.
func (s Service) DeleteTopic(ctx context.Context, r *store.Repository, name string) error {
	topic := normaliseTopic(name)
	if !validTopic(topic) {
		return apierr.InvalidTopics([]string{topic}, "Topic name is invalid")
	}
	err := s.Store.Topics().Update(ctx, r.ID, func(current []string) ([]string, error) {
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
		return apierr.NotFound("not found")
	}
	return err
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
	if err := h.svc().SetTopics(ctx, r, submitted); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoUpdateTopicsNoContent()
}

func (h Handlers) RepoAddTopic(ctx context.Context, params repository.RepoAddTopicParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().AddTopic(ctx, r, params.Topic); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoAddTopicNoContent()
}

func (h Handlers) RepoDeleteTopic(ctx context.Context, params repository.RepoDeleteTopicParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().DeleteTopic(ctx, r, params.Topic); err != nil {
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
