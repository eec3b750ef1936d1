package main

import (
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {1, 1000 * time.Microsecond}} {
		got := h.quantile(c.q)
		// Buckets are at most 1/64 wide, and quantile reports a lower bound.
		if got > c.want || float64(c.want-got) > float64(c.want)/64 {
			t.Errorf("p%v = %v, want about %v", c.q*100, got, c.want)
		}
	}
	if h.max != time.Millisecond {
		t.Errorf("max %v", h.max)
	}
}

func TestBucketsAreMonotonic(t *testing.T) {
	prev := -1
	for ns := uint64(0); ns < 1<<20; ns += 7 {
		b := bucketOf(ns)
		if b < prev || lowerBound(b) > ns {
			t.Fatalf("ns %d: bucket %d (lower bound %d), previous %d", ns, b, lowerBound(b), prev)
		}
		prev = b
	}
	if b := bucketOf(1<<63 + 5); b >= 64*subBuckets {
		t.Fatalf("bucket %d out of range", b)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "localhost", "::1", "127.1.2.3"} {
		if err := loopbackOnly(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	for _, h := range []string{"10.0.0.1", "example.com", "192.168.1.1", ""} {
		if loopbackOnly(h) == nil {
			t.Errorf("%s accepted", h)
		}
	}
}
