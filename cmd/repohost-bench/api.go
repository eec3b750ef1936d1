package main

// Helpers shared by the measurements that drive the API beside the table
// (webhooks, git, merges): the dataset file and one JSON API call.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

// readDataset reads the dataset description written by seed.
func readDataset(file string) (*Dataset, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var ds Dataset
	if err := json.Unmarshal(raw, &ds); err != nil {
		return nil, err
	}
	return &ds, nil
}

// apiCall sends body (JSON, unless nil) with the token and decodes a 2xx
// answer into out (unless nil); any other answer is an error.
func apiCall(client *http.Client, token, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %.300s", method, url, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
