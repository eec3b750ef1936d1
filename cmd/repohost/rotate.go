package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repohost/store/secretbox"
)

// rotateSecretKey re-seals every value kept sealed in the database
// (webhook authorization headers, Actions secrets) under a new instance
// key, in one transaction, and makes that key the instance's: the key
// file's when the key came from DIR/secret_key, else the operator's to
// configure (--secret-key, REPOHOST_SECRET_KEY). Servers sharing the
// database must be stopped first and restarted with the new key: until
// then they cannot open the re-sealed values.
func rotateSecretKey(args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("admin rotate-secret-key", flag.ContinueOnError)
	var st storage
	st.register(fs)
	newKey := fs.String("new-key", "", "the new instance secret key (default: a random one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("admin rotate-secret-key: unexpected argument %q", fs.Arg(0))
	}
	generated := *newKey == ""
	if generated {
		k, err := secretbox.NewKey()
		if err != nil {
			return err
		}
		*newKey = k
	}
	fromFile := st.secretKey == ""
	pending := filepath.Join(st.data, secretbox.PendingKeyFile)
	if _, err := os.Stat(pending); err == nil {
		// A rotation stopped between its commit and the key file's
		// replacement, or before its commit: the operator must tell which
		// key opens the values (try each with --secret-key).
		return fmt.Errorf("admin rotate-secret-key: %s is left from an unfinished rotation; find which key opens the secrets, keep it as %s and remove the other",
			pending, secretbox.KeyFile)
	}
	if !fromFile && *newKey == st.secretKey {
		return errors.New("admin rotate-secret-key: the new key is the current one")
	}
	next, err := secretbox.New(*newKey)
	if err != nil {
		return fmt.Errorf("admin rotate-secret-key: %w", err)
	}
	ctx := context.Background()
	db, err := st.open(ctx, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if fromFile {
		// On disk before anything is sealed with it: a crash between the
		// commit and the rename below leaves it in PendingKeyFile.
		if err := secretbox.StageKey(st.data, *newKey); err != nil {
			return fmt.Errorf("admin rotate-secret-key: keep the new key: %w", err)
		}
	}
	count, err := db.Reseal(ctx, next)
	if err != nil {
		if fromFile {
			os.Remove(pending)
		}
		return fmt.Errorf("admin rotate-secret-key: nothing changed: %w", err)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, count[k]))
	}
	fmt.Printf("re-sealed under the new key (%s)\n", strings.Join(parts, ", "))
	if fromFile {
		if err := secretbox.CommitKey(st.data); err != nil {
			return fmt.Errorf("admin rotate-secret-key: the values are sealed with the key in %s, which could not replace %s: %w",
				pending, filepath.Join(st.data, secretbox.KeyFile), err)
		}
		fmt.Printf("the new key is in %s; restart the servers sharing this data directory\n", filepath.Join(st.data, secretbox.KeyFile))
		return nil
	}
	if generated {
		fmt.Printf("new secret key: %s\n", *newKey)
	}
	fmt.Println("configure the new key (--secret-key or REPOHOST_SECRET_KEY) on every server, then restart them")
	return nil
}
