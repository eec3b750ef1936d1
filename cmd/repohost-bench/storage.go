package main

// The storage measurement: one generic package file uploaded and then
// downloaded (streamed, generated as it is sent and discarded as it
// arrives), with the server's resident memory sampled during each
// transfer. scripts/bench.sh runs it once with the server on the local
// disk and once with it on an S3-compatible service (--storage), and the
// lines are printed one under the other.

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

func storageCmd(args []string) error {
	fs := flag.NewFlagSet("storage", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	pid := fs.Int("server-pid", 0, "the server's process id, for its resident memory")
	size := fs.Int64("bytes", 256<<20, "size of the package file")
	label := fs.String("label", "", "the backend, as printed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, 1, time.Second); err != nil {
		return err
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	version := strconv.FormatInt(time.Now().UnixNano(), 10)
	url := *base + "/api/packages/" + ds.User + "/generic/bench-storage/" + version
	auth := func(r *http.Request) { r.Header.Set("Authorization", "token "+ds.Token) }

	// Upload.
	s := sampleRSS(*pid)
	req, err := http.NewRequest(http.MethodPut, url+"/blob.bin", &patternReader{left: *size, rng: rand.NewChaCha8([32]byte{2})})
	if err != nil {
		return err
	}
	req.ContentLength = *size
	auth(req)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	up := time.Since(start)
	upBefore, upPeak := s.finish()
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("upload answered %d: %.300s", resp.StatusCode, body)
	}
	defer func() {
		del, _ := http.NewRequest(http.MethodDelete, url, nil)
		auth(del)
		if resp, err := http.DefaultClient.Do(del); err == nil {
			resp.Body.Close()
		}
	}()

	// Download (following a redirect to the store when it serves direct).
	s = sampleRSS(*pid)
	req, _ = http.NewRequest(http.MethodGet, url+"/blob.bin", nil)
	auth(req)
	start = time.Now()
	resp, err = http.DefaultClient.Do(req)
	var n int64
	if err == nil {
		n, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	down := time.Since(start)
	downBefore, downPeak := s.finish()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || n != *size {
		return fmt.Errorf("download answered %d with %d bytes", resp.StatusCode, n)
	}
	mib := float64(*size) / (1 << 20)
	fmt.Printf("storage %-6s %4.0f MiB  upload %6.1fs %6.0f MiB/s  RSS %4d→%4d MiB   download %6.1fs %6.0f MiB/s  RSS %4d→%4d MiB\n",
		*label, mib, up.Seconds(), mib/up.Seconds(), upBefore>>10, upPeak>>10,
		down.Seconds(), mib/down.Seconds(), downBefore>>10, downPeak>>10)
	return nil
}
