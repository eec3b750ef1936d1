package app

import (
	"context"
	"sync"
)

// KeyedMutex serialises work per key within this process; its zero value
// is ready. Keys are dropped once nobody holds or awaits them.
type KeyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	held chan struct{} // one token: the holder's
	refs int           // holder and waiters
}

// Lock waits for key, or for ctx to end; unlock releases it.
func (k *KeyedMutex) Lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyedLock)
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	select {
	case l.held <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-l.held
				k.drop(key, l)
			})
		}, nil
	case <-ctx.Done():
		k.drop(key, l)
		return nil, ctx.Err()
	}
}

func (k *KeyedMutex) drop(key string, l *keyedLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(k.locks, key)
	}
}
