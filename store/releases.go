package store

// ReleaseData bundles the stores of releases and their attachments.
type ReleaseData interface {
}
