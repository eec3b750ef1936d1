package impl

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"repohost/impl/app"
)

// healthStatus is the draft IETF health-check format the reference answers
// GET /api/healthz with: "pass" (200) or "fail" (424), and per component
// the status and when it was checked.
type healthStatus string

const (
	healthPass healthStatus = "pass"
	healthFail healthStatus = "fail"
)

type healthComponent struct {
	Status healthStatus `json:"status"`
	Time   string       `json:"time"`
	// Output says what failed; the detail stays in the log.
	Output string `json:"output,omitempty"`
}

type healthResponse struct {
	Status      healthStatus                 `json:"status"`
	Description string                       `json:"description"`
	Checks      map[string][]healthComponent `json:"checks"`
}

// pinger is the database's liveness check (sqlstore.DB has it).
type pinger interface {
	Ping(ctx context.Context) error
}

// healthz answers GET /api/healthz for load balancers: the database must
// answer within two seconds. The read cache lives in this process's
// memory, so it is up whenever the process answers; it is reported as the
// reference reports its cache.
func healthz(d *app.Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		now := func() string { return time.Now().UTC().Format(time.RFC3339) }
		resp := healthResponse{Status: healthPass, Description: "repohost", Checks: map[string][]healthComponent{}}
		db := healthComponent{Status: healthPass}
		if p, ok := d.Store.(pinger); ok {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			err := p.Ping(ctx)
			cancel()
			if err != nil {
				db.Status, db.Output = healthFail, "database ping failed"
				d.Log.WarnContext(r.Context(), "health check: database ping failed", "err", err)
			}
		}
		db.Time = now()
		resp.Checks["database:ping"] = []healthComponent{db}
		resp.Checks["cache:ping"] = []healthComponent{{Status: healthPass, Time: now()}}
		status := http.StatusOK
		if db.Status != healthPass {
			resp.Status, status = healthFail, http.StatusFailedDependency
		}
		w.Header().Set("Content-Type", "application/health+json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(resp)
	}
}
