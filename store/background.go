package store

import "context"

type backgroundKey struct{}

// Background marks ctx as work no request waits for (the webhook delivery
// queue), so that whoever counts a request's statements (the API tests'
// statement counts) can leave it out.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground tells whether ctx was marked by Background.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
