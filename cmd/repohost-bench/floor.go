package main

// The floor server is bare net/http answering, for each request the suite
// sends, the very bytes repohost answered to it (status, the headers a
// client reads, body). It costs what any Go HTTP server costs at least, so a
// repohost figure divided by its floor figure, measured in the same run on
// the same machine, says how much of the time is repohost's own work.

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// cannedResponse is one recorded answer.
type cannedResponse struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header"`
	Body   []byte            `json:"body"`
}

// cannedKey is how the floor looks a request up: method and request URI.
func cannedKey(method, uri string) string { return method + " " + uri }

func floorCmd(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	file := fs.String("responses", "", "JSON file of recorded responses, keyed by \"METHOD URI\"")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return err
	}
	if err := loopbackOnly(host); err != nil {
		return err
	}
	raw, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	canned := map[string]*cannedResponse{}
	if err := json.Unmarshal(raw, &canned); err != nil {
		return fmt.Errorf("read %s: %w", *file, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	// The suite reads the address from the first line, then keeps stdin
	// open; the floor ends when stdin closes (its parent is gone).
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		os.Exit(0)
	}()
	srv := &http.Server{Handler: floorHandler(canned), ReadHeaderTimeout: 10 * time.Second}
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func floorHandler(canned map[string]*cannedResponse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := canned[cannedKey(r.Method, r.URL.RequestURI())]
		if c == nil {
			http.NotFound(w, r)
			return
		}
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		h := w.Header()
		for k, v := range c.Header {
			h.Set(k, v)
		}
		w.WriteHeader(c.Status)
		_, _ = w.Write(c.Body)
	})
}
