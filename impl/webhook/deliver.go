package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"repohost/impl/app"
	"repohost/impl/convert"
	"repohost/store"
)

// maxResponseExcerpt is how much of a receiver's answer a delivery keeps.
const maxResponseExcerpt = 64 << 10

// deliveryLoop claims due deliveries while workers are free and sends each
// on its own goroutine.
func (r *Runner) deliveryLoop() {
	defer r.wg.Done()
	workers := max(r.cfg.Workers, 1)
	free := make(chan struct{}, workers)
	for range workers {
		free <- struct{}{}
	}
	var running sync.WaitGroup
	defer running.Wait()
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	// Long enough that a slow database never lets a second worker take a
	// delivery whose attempt is still being recorded.
	lease := 2*r.cfg.Timeout + 30*time.Second
	for {
		// Wait for a free worker, then claim as many rows as are free.
		select {
		case <-r.ctx.Done():
			return
		case <-free:
		}
		n := 1
	more:
		for n < workers {
			select {
			case <-free:
				n++
			default:
				break more
			}
		}
		now := r.s.Clock.Precise()
		claimed, err := r.s.Store.Hooks().Claim(r.ctx, now.UnixMilli(), now.Add(lease).UnixMilli(), n)
		if err != nil && r.ctx.Err() == nil {
			r.log("webhook: claim deliveries", "err", err)
		}
		if len(claimed) > n {
			// More rows than free workers would overfill free and stall
			// this loop: hand the extra back to the queue.
			for _, d := range claimed[n:] {
				r.release(d)
			}
			claimed = claimed[:n]
		}
		for i := len(claimed); i < n; i++ {
			free <- struct{}{}
		}
		for _, d := range claimed {
			running.Add(1)
			go func() {
				defer running.Done()
				r.attempt(d)
				free <- struct{}{}
			}()
		}
		if len(claimed) > 0 {
			continue
		}
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		case <-tick.C:
		}
	}
}

// attempt sends d once and records the outcome: delivered, due again
// after a backoff, or failed for good.
func (r *Runner) attempt(d *store.HookDelivery) {
	ctx := r.ctx
	hooks := r.s.Store.Hooks()
	h, err := hooks.Find(ctx, d.HookID)
	switch {
	case ctx.Err() != nil:
		r.release(d)
		return
	case isNotFound(err):
		// Queued for a hook deleted meanwhile: nothing to send it to.
		d.State, d.Error = store.DeliveryFailed, "the hook was deleted"
		if err := hooks.Finish(ctx, d); err != nil {
			r.log("webhook: record delivery", "delivery", d.ID, "err", err)
		}
		return
	case err != nil:
		r.log("webhook: load hook", "hook", d.HookID, "err", err)
		return // leased: tried again once the lease ends
	}
	start := r.s.Clock.Precise()
	req, err := buildRequest(ctx, h, d)
	final := false
	var resp *http.Response
	if err == nil {
		d.RequestURL, d.RequestMethod = req.URL.String(), req.Method
		d.RequestHeaders = encodeHeaders(req.Header)
		resp, err = r.http.Do(req)
	} else {
		final = true
	}
	if ctx.Err() != nil {
		// Stopping: the attempt does not count.
		if resp != nil {
			resp.Body.Close()
		}
		r.release(d)
		return
	}
	d.ResponseStatus, d.ResponseHeaders, d.ResponseBody, d.Error = 0, "", "", ""
	if err == nil {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		d.ResponseStatus = resp.StatusCode
		d.ResponseHeaders = encodeHeaders(resp.Header)
		d.ResponseBody = string(excerpt)
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			err = fmt.Errorf("receiver answered %s", resp.Status)
		}
	} else if errors.Is(err, ErrForbiddenAddress) {
		// Retrying cannot help until the allow-list changes.
		final = true
	}
	end := r.s.Clock.Precise()
	d.DurationMicros = end.Sub(start).Microseconds()
	endAt := end.UTC()
	d.DeliveredAt = &endAt
	switch {
	case err == nil:
		d.State = store.DeliveryDelivered
		r.stats.delivered(end.Sub(time.UnixMilli(d.QueuedAt)))
	case final || d.Attempts >= r.cfg.MaxAttempts:
		d.State, d.Error = store.DeliveryFailed, errorText(err)
		r.stats.failed()
	default:
		d.State, d.Error = store.DeliveryPending, errorText(err)
		d.NextAttemptAt = end.Add(backoff(r.cfg, d.Attempts)).UnixMilli()
	}
	// The outcome is written even while stopping.
	if err := hooks.Finish(context.WithoutCancel(ctx), d); err != nil {
		r.log("webhook: record delivery", "delivery", d.ID, "err", err)
	}
}

func (r *Runner) release(d *store.HookDelivery) {
	if err := r.s.Store.Hooks().Release(context.WithoutCancel(r.ctx), []int64{d.ID}, r.s.Clock.Precise().UnixMilli()); err != nil {
		r.log("webhook: release delivery", "delivery", d.ID, "err", err)
	}
}

// errorText is err as a delivery records it: why, without Go's wrapping
// of the request URL around it.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// backoff is the wait after attempt n (1-based): base·2^(n-1), capped.
func backoff(cfg app.WebhookConfig, n int) time.Duration {
	d := cfg.RetryBase
	for i := 1; i < n && d < cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, cfg.RetryMax)
}

// errUnreadableAuthorization is a delivery's reason when its hook's
// authorization header was sealed under another secret key: sending the
// request without the header would only be refused by the receiver.
var errUnreadableAuthorization = errors.New("the hook's authorization header cannot be opened with this server's secret key (was --secret-key or DATA/secret_key changed?)")

// buildRequest renders d for h: the body in h's receiver format and
// content type, and the reference's headers, signed with h's secret.
func buildRequest(ctx context.Context, h *store.Hook, d *store.HookDelivery) (*http.Request, error) {
	if h.AuthorizationUnreadable {
		return nil, errUnreadableAuthorization
	}
	body, err := renderBody(h, d)
	if err != nil {
		return nil, err
	}
	method := h.HTTPMethod
	if method == "" {
		method = http.MethodPost
	}
	target := h.URL
	if h.Type == "matrix" {
		// Matrix wants PUT to .../send/m.room.message/{txnId}.
		method = http.MethodPut
		sum := sha1.Sum([]byte(d.UUID))
		target = strings.TrimRight(target, "/") + "/" + hex.EncodeToString(sum[:])
	}
	var req *http.Request
	contentType := "application/json"
	sendBody := body
	if h.ContentType == "form" && (h.Type == "gitea" || h.Type == "gogs") {
		contentType = "application/x-www-form-urlencoded"
		sendBody = []byte(url.Values{"payload": {string(body)}}.Encode())
	}
	if method == http.MethodGet {
		u, err := url.Parse(target)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		q.Set("payload", string(body))
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, method, u.String(), nil)
		if err != nil {
			return nil, err
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, method, target, bytes.NewReader(sendBody))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", contentType)
	}
	// The signatures are of the payload (the JSON itself, also when it
	// travels in a form field), as the reference signs.
	sig256, sig1 := "", ""
	if h.Secret != "" {
		m := hmac.New(sha256.New, []byte(h.Secret))
		m.Write(body)
		sig256 = hex.EncodeToString(m.Sum(nil))
		m1 := hmac.New(sha1.New, []byte(h.Secret))
		m1.Write(body)
		sig1 = hex.EncodeToString(m1.Sum(nil))
	}
	hd := req.Header
	hd.Set("User-Agent", "GiteaServer")
	hd.Set("X-Gitea-Delivery", d.UUID)
	hd.Set("X-Gitea-Event", d.Event)
	hd.Set("X-Gitea-Event-Type", d.EventType)
	hd.Set("X-Gitea-Signature", sig256)
	hd.Set("X-Gogs-Delivery", d.UUID)
	hd.Set("X-Gogs-Event", d.Event)
	hd.Set("X-Gogs-Event-Type", d.EventType)
	hd.Set("X-Gogs-Signature", sig256)
	hd.Set("X-GitHub-Delivery", d.UUID)
	hd.Set("X-GitHub-Event", d.Event)
	hd.Set("X-GitHub-Event-Type", d.EventType)
	hd.Set("X-Hub-Signature", "sha1="+sig1)
	hd.Set("X-Hub-Signature-256", "sha256="+sig256)
	if h.AuthorizationHeader != "" {
		hd.Set("Authorization", h.AuthorizationHeader)
	}
	return req, nil
}

// encodeHeaders keeps headers as one JSON object (values joined by ", "),
// with credentials masked.
func encodeHeaders(h http.Header) string {
	flat := map[string]string{}
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		if k == "Authorization" {
			v = convert.MaskAuthorization(v)
		}
		flat[k] = v
	}
	raw, _ := json.Marshal(flat)
	return string(raw)
}

// statsRecorder counts this process's outcomes and remembers the latest
// end-to-end delays (event committed to receiver's answer).
type statsRecorder struct {
	mu                 sync.Mutex
	nDelivered, nFails int64
	latencies          []time.Duration
	next               int
}

const latencyWindow = 4096

func (s *statsRecorder) delivered(latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nDelivered++
	if len(s.latencies) < latencyWindow {
		s.latencies = append(s.latencies, latency)
		return
	}
	s.latencies[s.next] = latency
	s.next = (s.next + 1) % latencyWindow
}

func (s *statsRecorder) failed() {
	s.mu.Lock()
	s.nFails++
	s.mu.Unlock()
}

// Stats describe the delivery queue, for metrics.
type Stats struct {
	// Pending, Delivered and Failed count the queue's rows by state (all
	// processes; pruned rows are gone).
	Pending, Delivered, Failed int64
	// DeliveredHere and FailedHere count this process's outcomes since it
	// started.
	DeliveredHere, FailedHere int64
	// LatencyP50 and LatencyP99 are over this process's latest successful
	// deliveries, from the delivery's creation to the receiver's answer.
	LatencyP50, LatencyP99 time.Duration
}

// Stats reads the queue's counts and this process's delays.
func (r *Runner) Stats(ctx context.Context) (Stats, error) {
	c, err := r.s.Store.Hooks().CountDeliveries(ctx)
	if err != nil {
		return Stats{}, err
	}
	out := Stats{Pending: c.Pending, Delivered: c.Delivered, Failed: c.Failed}
	r.stats.mu.Lock()
	out.DeliveredHere, out.FailedHere = r.stats.nDelivered, r.stats.nFails
	lat := slices.Clone(r.stats.latencies)
	r.stats.mu.Unlock()
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		out.LatencyP50 = lat[len(lat)*50/100]
		out.LatencyP99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return out, nil
}
