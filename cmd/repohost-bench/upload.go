package main

// The large-upload measurement: one generic package file of many bytes
// (1 GiB by default), generated as it is sent, streamed to the server while
// the server's resident memory is sampled. The upload should cost the
// server a copy buffer, not the file.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// patternReader yields n pseudo-random bytes without holding them.
type patternReader struct {
	left int64
	rng  *rand.ChaCha8
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, _ := p.rng.Read(b)
	p.left -= int64(n)
	return n, nil
}

// rssKiB reads a process's current resident set in KiB (0 if unknown).
func rssKiB(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "VmRSS" {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// measureUpload PUTs size bytes as a generic package of user and reports
// the time, the rate and the server's resident memory before and at its
// highest during the upload; then it deletes the version again.
func measureUpload(base, user, token string, size int64, pid int) error {
	version := strconv.FormatInt(time.Now().UnixNano(), 10)
	url := base + "/api/packages/" + user + "/generic/bench-upload/" + version
	s := sampleRSS(pid)
	req, err := http.NewRequest(http.MethodPut, url+"/blob.bin", &patternReader{left: size, rng: rand.NewChaCha8([32]byte{1})})
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "token "+token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	elapsed := time.Since(start)
	before, peak := s.finish()
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("upload answered %d: %.300s", resp.StatusCode, body)
	}
	fmt.Printf("\ngeneric package upload of %d MiB: %.1fs (%.0f MiB/s)", size>>20, elapsed.Seconds(), float64(size>>20)/elapsed.Seconds())
	if pid > 0 {
		fmt.Printf("; repohost RSS %d MiB before, at most %d MiB during the upload", before>>10, peak>>10)
	}
	fmt.Println()
	del, _ := http.NewRequest(http.MethodDelete, url, nil)
	del.Header.Set("Authorization", "token "+token)
	if resp, err := http.DefaultClient.Do(del); err == nil {
		resp.Body.Close()
	}
	return nil
}
