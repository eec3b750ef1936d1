package main

// The storage measurement: one generic package file, then one Git LFS
// object, uploaded and then downloaded (streamed, generated as it is sent
// and discarded as it arrives), with the server's resident memory sampled
// during each transfer. scripts/bench.sh runs it once with the server on the local
// disk and once with it on an S3-compatible service (--storage), and the
// lines are printed one under the other.

import (
	"crypto/sha256"
	"encoding/hex"
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
	auth := func(r *http.Request) { r.Header.Set("Authorization", "token "+ds.Token) }
	content := func() io.Reader { return &patternReader{left: *size, rng: rand.NewChaCha8([32]byte{2})} }

	pkg := *base + "/api/packages/" + ds.User + "/generic/bench-storage/" + version
	defer func() {
		del, _ := http.NewRequest(http.MethodDelete, pkg, nil)
		auth(del)
		if resp, err := http.DefaultClient.Do(del); err == nil {
			resp.Body.Close()
		}
	}()
	if err := transfer("package", *label, *pid, *size, content(), pkg+"/blob.bin", pkg+"/blob.bin", http.StatusCreated, auth); err != nil {
		return err
	}

	// An LFS object is named by its content's SHA-256, read once first.
	h := sha256.New()
	if _, err := io.Copy(h, content()); err != nil {
		return err
	}
	oid := hex.EncodeToString(h.Sum(nil))
	objects := *base + "/" + ds.User + "/" + ds.Small + ".git/info/lfs/objects/" + oid
	return transfer("lfs", *label, *pid, *size, content(), objects+"/"+strconv.FormatInt(*size, 10), objects, http.StatusOK, auth)
}

// transfer uploads size bytes of content to put (expecting created), then
// downloads them from get (following a redirect to the store when it
// serves direct), and prints both rates with the server's memory.
func transfer(kind, label string, pid int, size int64, content io.Reader, put, get string, created int, auth func(*http.Request)) error {
	s := sampleRSS(pid)
	req, err := http.NewRequest(http.MethodPut, put, content)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
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
	if resp.StatusCode != created {
		return fmt.Errorf("%s upload answered %d: %.300s", kind, resp.StatusCode, body)
	}

	s = sampleRSS(pid)
	req, _ = http.NewRequest(http.MethodGet, get, nil)
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
	if resp.StatusCode != http.StatusOK || n != size {
		return fmt.Errorf("%s download answered %d with %d bytes", kind, resp.StatusCode, n)
	}
	mib := float64(size) / (1 << 20)
	fmt.Printf("storage %-6s %-7s %4.0f MiB  upload %6.1fs %6.0f MiB/s  RSS %4d→%4d MiB   download %6.1fs %6.0f MiB/s  RSS %4d→%4d MiB\n",
		label, kind, mib, up.Seconds(), mib/up.Seconds(), upBefore>>10, upPeak>>10,
		down.Seconds(), mib/down.Seconds(), downBefore>>10, downPeak>>10)
	return nil
}
