package avatar

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIdenticon(t *testing.T) {
	t.Parallel()
	const h = "c160f8cc69a4f0bf2b0362752353d060"
	a, err := Identicon(h)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Identicon(h)
	if !bytes.Equal(a, b) {
		t.Fatal("the same hash drew two pictures")
	}
	c, _ := Identicon("00000000000000000000000000000001")
	if bytes.Equal(a, c) {
		t.Fatal("two hashes drew the same picture")
	}
	img, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != Size || r.Dy() != Size {
		t.Fatalf("size %v", r)
	}
	// Symmetric about the vertical axis.
	for y := 0; y < Size; y += 7 {
		for x := 0; x < Size/2; x += 5 {
			if img.At(x, y) != img.At(Size-1-x, y) {
				t.Fatalf("not symmetric at %d,%d", x, y)
			}
		}
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /avatars/{hash}", Serve)
	get := func(path string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if len(hdr) == 2 {
			req.Header.Set(hdr[0], hdr[1])
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w
	}
	const h = "c160f8cc69a4f0bf2b0362752353d060"
	w := get("/avatars/" + h)
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" || w.Header().Get("ETag") != `"`+h+`"` {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	if _, err := png.Decode(w.Body); err != nil {
		t.Fatal(err)
	}
	if w := get("/avatars/"+h, "If-None-Match", `"`+h+`"`); w.Code != http.StatusNotModified {
		t.Fatalf("revalidation %d", w.Code)
	}
	for _, bad := range []string{"1", "C160F8CC69A4F0BF2B0362752353D060", "..%2Fetc", h + "0", "zz60f8cc69a4f0bf2b0362752353d060"} {
		if w := get("/avatars/" + bad); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d", bad, w.Code)
		}
	}
}
