package convert

import (
	"repohost/models"
	"repohost/store"
)

// PushMirror is r's push mirror pm as the API shows it: its address
// without credentials, never its secret.
func PushMirror(r *store.Repository, pm *store.PushMirror) *models.PushMirror {
	out := &models.PushMirror{
		RepoName:       r.Name,
		RemoteName:     pm.RemoteName,
		RemoteAddress:  pm.RemoteAddress,
		LastUpdateUnix: Time(pm.LastUpdate),
		LastError:      pm.LastError,
		Interval:       pm.Interval.String(),
		SyncOnCommit:   pm.SyncOnCommit,
	}
	if t := TimeOf(pm.CreatedAt); t != nil {
		out.CreatedUnix = *t
	}
	return out
}
