package main

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"repohost/impl/app"
)

// defaultMemoryLimit is the soft limit `serve` gives the Go runtime unless
// told otherwise (--memory-limit, GOMEMLIMIT). Under GOGC alone the heap
// grows to twice what is live and idle pages go back to the system
// slowly; at the limit the runtime returns idle pages at once and collects
// earlier when the heap would pass it. It must stay well above what is
// live: the server's own heap after start-up (about 38 MiB: the parsed
// API spec and its router, language data) plus what its caches may hold
// (three kept-list caches of up to 32 MiB each, impl/listcache). A limit
// below that (it was 48 MiB) makes the runtime collect without pause,
// taking up to half the CPU: measured, 11 ms of CPU per GET
// /api/v1/version instead of 0.8, 18 ms per issue create instead of 7.
// At 192 MiB a full set of caches still leaves room between collections.
// It is soft: a heap that needs more gets it, the collector then running
// more often.
const defaultMemoryLimit = "192MiB"

// parseMemoryLimit reads a --memory-limit value: "off" (no limit), or a
// byte count with an optional unit B, KiB, MiB, GiB or TiB, as GOMEMLIMIT
// takes it. It returns math.MaxInt64 for no limit, as the runtime does.
func parseMemoryLimit(value string) (int64, error) {
	return parseSize("--memory-limit", value)
}

// parseSize reads a size given to flag: "off" (math.MaxInt64), or a byte
// count with an optional unit B, KiB, MiB, GiB or TiB.
func parseSize(flag, value string) (int64, error) {
	s := strings.TrimSpace(value)
	if s == "off" {
		return math.MaxInt64, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%s %q: want off, or a positive size such as 64MiB or 1GiB", flag, value)
	}
	return n << shift, nil
}

// applyMemoryLimit sets the Go runtime's soft memory limit from
// --memory-limit, unless the GOMEMLIMIT environment variable is set: the
// runtime has read that at start-up (debug.SetMemoryLimit(-1) reports it)
// and it wins, so the usual Go setting keeps working. It returns the limit
// in force, math.MaxInt64 meaning none.
func applyMemoryLimit(value string, log *slog.Logger) (int64, error) {
	limit, err := parseMemoryLimit(value)
	if err != nil {
		return 0, err
	}
	if env := os.Getenv("GOMEMLIMIT"); env != "" {
		current := debug.SetMemoryLimit(-1)
		log.Info("memory limit from GOMEMLIMIT", "GOMEMLIMIT", env, "bytes", current)
		return current, nil
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}

// applySizeLimits sets the upload limits of c from a --size-limits value:
// comma-separated name=size pairs, where name is "asset" (a release
// asset, Config.MaxAssetBytes), "package" (any package file,
// MaxPackageFileBytes), "lfs" (one Git LFS object, LFSMaxFileBytes, also
// set by --lfs-max-file-size), "lfs-owner" (all LFS objects of one owner,
// LFSOwnerBytes) or a package type such as "npm" or "generic"
// (PackageTypeLimits, as the reference's LIMIT_SIZE_<TYPE>), and size is
// as parseSize reads it ("off": no limit).
func applySizeLimits(value string, c *app.Config) error {
	for _, pair := range strings.Split(value, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		name, size, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("--size-limits %q: want name=size pairs such as asset=2GiB,npm=100MiB", value)
		}
		n, err := parseSize("--size-limits "+name, size)
		if err != nil {
			return err
		}
		if n == math.MaxInt64 {
			n = -1
		}
		switch name {
		case "asset":
			if n < 0 {
				n = math.MaxInt64
			}
			c.MaxAssetBytes = n
		case "package":
			c.MaxPackageFileBytes = n
		case "lfs":
			c.LFSMaxFileBytes = n
		case "lfs-owner":
			c.LFSOwnerBytes = n
		default:
			if c.PackageTypeLimits == nil {
				c.PackageTypeLimits = map[string]int64{}
			}
			c.PackageTypeLimits[name] = n
		}
	}
	return nil
}
