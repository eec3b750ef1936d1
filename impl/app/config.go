package app

import "repohost/impl/paging"

// Config gathers the limits the service enforces. main builds it from
// DefaultConfig (and, later, flags); tests may lower a limit to reach it
// cheaply. Nothing reads these values from package variables.
type Config struct {
	Paging paging.Limits
	// MaxBodyBytes bounds a JSON request body; larger ones are refused
	// before they are parsed.
	MaxBodyBytes int64
	// AllowedReactions are the reaction contents issues and comments accept.
	AllowedReactions []string
	// MaxTopicsPerRepo caps the topics of one repository.
	MaxTopicsPerRepo int
	// MaxContentsBlob is the largest file whose content the contents API
	// inlines (base64); bigger ones are described without content, like
	// the reference's DEFAULT_MAX_BLOB_SIZE.
	MaxContentsBlob int64
}

// DefaultConfig is the reference's defaults.
func DefaultConfig() Config {
	return Config{
		Paging:           paging.DefaultLimits(),
		MaxBodyBytes:     8 << 20,
		AllowedReactions: []string{"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"},
		MaxTopicsPerRepo: 25,
		MaxContentsBlob:  10 << 20,
	}
}
