// Package avatar serves the avatars avatar_url points at. This server has
// no avatar uploads, so every user's and organization's avatar is the
// reference's generated one: an identicon drawn from the hash in its
// address (convert.AvatarHash: the MD5 of the lower-cased address, or of
// the name when there is none). The picture is a function of the hash
// alone, so it needs no storage and never changes.
package avatar

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"regexp"
	"strconv"
)

// Size is the width and height of an avatar, in pixels.
const Size = 256

// hashRe is the form of an avatar's name: an MD5 (the reference's) or a
// SHA-256, in lower-case hex.
var hashRe = regexp.MustCompile(`^([0-9a-f]{32}|[0-9a-f]{64})$`)

// Serve answers GET /avatars/{hash} with the identicon of hash, as a PNG
// that may be cached for a day; 404 for a name that is no hash.
func Serve(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if !hashRe.MatchString(hash) {
		http.NotFound(w, r)
		return
	}
	etag := `"` + hash + `"`
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b, err := Identicon(hash)
	if err != nil {
		http.Error(w, "cannot draw the avatar", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// grid is the number of cells on a side; the left half (and middle column)
// is drawn from the seed and mirrored, so the picture is symmetric.
const grid = 5

// Identicon draws the avatar of hash: a symmetric 5×5 pattern in one
// colour on a light background, both taken from SHA-256(hash), so the same
// hash always gives the same PNG.
func Identicon(hash string) ([]byte, error) {
	seed := sha256.Sum256([]byte(hash))
	fg := hueColor(float64(uint16(seed[0])<<8|uint16(seed[1])) / 65536 * 360)
	img := image.NewPaletted(image.Rect(0, 0, Size, Size), color.Palette{color.RGBA{0xf0, 0xf0, 0xf0, 0xff}, fg})
	cell := Size / (grid + 1)
	margin := (Size - cell*grid) / 2
	bit := 0
	for col := 0; col < (grid+1)/2; col++ {
		for row := 0; row < grid; row++ {
			on := seed[2+bit/8]>>(bit%8)&1 == 1
			bit++
			if !on {
				continue
			}
			for _, c := range []int{col, grid - 1 - col} {
				x0, y0 := margin+c*cell, margin+row*cell
				for y := y0; y < y0+cell; y++ {
					for x := x0; x < x0+cell; x++ {
						img.SetColorIndex(x, y, 1)
					}
				}
			}
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// hueColor is a saturated, mid-light colour of the given hue (degrees).
func hueColor(h float64) color.RGBA {
	const s, l = 0.55, 0.55
	c := (1 - abs(2*l-1)) * s
	hp := h / 60
	x := c * (1 - abs(mod2(hp)-1))
	var r, g, b float64
	switch int(hp) % 6 {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) uint8 { return uint8((v+m)*255 + 0.5) }
	return color.RGBA{to(r), to(g), to(b), 0xff}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// mod2 is v modulo 2 for v ≥ 0.
func mod2(v float64) float64 { return v - 2*float64(int(v/2)) }
