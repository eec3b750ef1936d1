package convert

import (
	"encoding/json"
	"strings"
	"time"

	"repohost/models"
	"repohost/store"
)

// hookStateNames are HookDelivery.status values by store state.
var hookStateNames = map[int]string{
	store.DeliveryPending: "pending", store.DeliveryDelivered: "delivered", store.DeliveryFailed: "failed",
}

// Hook renders a hook; the secret never leaves, and the authorization
// header only with its credentials masked.
func Hook(h *store.Hook) *models.Hook {
	config := map[string]string{}
	if h.Meta != "" {
		_ = json.Unmarshal([]byte(h.Meta), &config)
	}
	config["url"] = h.URL
	config["content_type"] = h.ContentType
	config["http_method"] = h.HTTPMethod
	if h.RepoID == 0 && h.OwnerID == 0 {
		config["is_system_webhook"] = "false"
		if h.IsSystem {
			config["is_system_webhook"] = "true"
		}
	}
	evs := []string{}
	_ = json.Unmarshal([]byte(h.Events), &evs)
	return &models.Hook{
		ID: h.ID, Type: h.Type, Name: h.Name, BranchFilter: h.BranchFilter, Config: config, Events: evs,
		AuthorizationHeader: hookAuthorization(h), Active: h.Active,
		Created: *TimeOf(h.CreatedAt), Updated: *TimeOf(h.UpdatedAt),
	}
}

// Hooks renders a list of hooks.
func Hooks(hs []*store.Hook) []*models.Hook {
	out := make([]*models.Hook, 0, len(hs))
	for _, h := range hs {
		out = append(out, Hook(h))
	}
	return out
}

// hookAuthorization is h's header as the API shows it: masked, and masked
// whole when this server's key cannot open it (it is set, but unusable).
func hookAuthorization(h *store.Hook) string {
	if h.AuthorizationUnreadable {
		return "********"
	}
	return MaskAuthorization(h.AuthorizationHeader)
}

// MaskAuthorization keeps an Authorization header's scheme and hides its
// credentials.
func MaskAuthorization(v string) string {
	if v == "" {
		return ""
	}
	if scheme, _, ok := strings.Cut(v, " "); ok {
		return scheme + " ********"
	}
	return "********"
}

// HookDelivery renders a delivery; request and response (with the body
// sent, which the caller renders) only for the single-delivery answer.
func HookDelivery(d *store.HookDelivery, full bool, sentBody string) *models.HookDelivery {
	out := &models.HookDelivery{
		ID: d.ID, GUID: d.UUID, Event: d.Event, EventType: d.EventType, Action: d.Action,
		Status: hookStateNames[d.State], Redelivery: d.IsRedelivery, Attempts: int64(d.Attempts),
		StatusCode: int64(d.ResponseStatus), Error: d.Error, Duration: float64(d.DurationMicros) / 1e6,
		Created: *TimeOf(d.CreatedAt), DeliveredAt: Time(d.DeliveredAt),
	}
	if d.State == store.DeliveryPending {
		next := time.UnixMilli(d.NextAttemptAt).UTC().Truncate(time.Second)
		out.NextAttemptAt = Time(&next)
	}
	if full {
		out.Request = &models.HookDeliveryRequest{Method: d.RequestMethod, URL: d.RequestURL,
			Headers: headerMap(d.RequestHeaders), Body: sentBody}
		out.Response = &models.HookDeliveryResponse{Status: int64(d.ResponseStatus),
			Headers: headerMap(d.ResponseHeaders), Body: d.ResponseBody}
	}
	return out
}

// HookDeliveries renders a page of deliveries without their requests.
func HookDeliveries(ds []*store.HookDelivery) []*models.HookDelivery {
	out := make([]*models.HookDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, HookDelivery(d, false, ""))
	}
	return out
}

func headerMap(s string) map[string]string {
	out := map[string]string{}
	if s != "" {
		_ = json.Unmarshal([]byte(s), &out)
	}
	return out
}
