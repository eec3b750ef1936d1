package app

// Set copies an optional field of a request body into dst when the caller
// sent it (PATCH semantics: an absent field leaves dst as it is).
func Set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
