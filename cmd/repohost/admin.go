package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"repohost/impl"
	"repohost/impl/app"
	"repohost/impl/release"
	"repohost/impl/user"
	"repohost/store"
)

// operator is who acts for `repohost admin` commands: whoever may run the
// binary on the server's data is its administrator. It is no account (id 0,
// as the events record a change made by the system).
var operator = &store.User{Name: "command line", IsAdmin: true}

// adminCommand runs one `repohost admin ...` command: it parses the
// flags (fs has the storage flags added), rejects stray arguments, opens
// the database and hands do the dependencies.
func adminCommand(name string, args []string, log *slog.Logger, define func(fs *flag.FlagSet) func() error,
	do func(ctx context.Context, d *app.Deps, s impl.Services) error) error {
	fs := flag.NewFlagSet("admin "+name, flag.ContinueOnError)
	var st storage
	st.register(fs)
	check := define(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("admin %s: unexpected argument %q", name, fs.Arg(0))
	}
	if err := check(); err != nil {
		return fmt.Errorf("admin %s: %w", name, err)
	}
	ctx := context.Background()
	db, err := st.open(ctx, log)
	if err != nil {
		return err
	}
	defer db.Close()
	d, _, err := st.deps(db, log)
	if err != nil {
		return err
	}
	return do(ctx, d, impl.NewServices(d))
}

func required(flags map[string]*string) func() error {
	return func() error {
		var missing []string
		for name, v := range flags {
			if strings.TrimSpace(*v) == "" {
				missing = append(missing, "--"+name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%s required", strings.Join(missing, ", "))
		}
		return nil
	}
}

// findIndividual loads the account name, refusing organizations.
func findIndividual(ctx context.Context, d *app.Deps, name string) (*store.User, error) {
	u, err := d.Store.Users().FindByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsOrganization()) {
		return nil, fmt.Errorf("no user %q", name)
	}
	return u, err
}

func listUsers(args []string, log *slog.Logger) error {
	var adminsOnly bool
	return adminCommand("user list", args, log, func(fs *flag.FlagSet) func() error {
		fs.BoolVar(&adminsOnly, "admin", false, "list site admins only")
		return func() error { return nil }
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		q := store.UserSearch{Type: store.UserTypeIndividual, OrderBy: "id ASC"}
		if adminsOnly {
			q.IsAdmin = &adminsOnly
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tUsername\tEmail\tIsActive\tIsAdmin\t2FA")
		for offset := 0; ; offset += 50 {
			users, _, err := d.Store.Users().Search(ctx, q, store.Page{Offset: offset, Limit: 50})
			if err != nil {
				return err
			}
			for _, u := range users {
				fmt.Fprintf(w, "%d\t%s\t%s\t%v\t%v\t%v\n", u.ID, u.Name, u.Email, u.IsActive, u.IsAdmin, false)
			}
			if len(users) < 50 {
				break
			}
		}
		return w.Flush()
	})
}

func changePassword(args []string, log *slog.Logger) error {
	var name, password string
	var mustChange bool
	return adminCommand("user change-password", args, log, func(fs *flag.FlagSet) func() error {
		fs.StringVar(&name, "username", "", "the account")
		fs.StringVar(&password, "password", "", "the new password")
		fs.BoolVar(&mustChange, "must-change-password", true, "require a password change before API use")
		return required(map[string]*string{"username": &name, "password": &password})
	}, func(ctx context.Context, d *app.Deps, s impl.Services) error {
		u, err := findIndividual(ctx, d, name)
		if err != nil {
			return err
		}
		if _, err := s.Users.Edit(ctx, operator, u, user.EditInput{Password: password, MustChangePassword: &mustChange}); err != nil {
			return fmt.Errorf("cannot change the password of %q: %w", name, err)
		}
		fmt.Printf("%s's password has been successfully updated\n", u.Name)
		return nil
	})
}

func deleteUser(args []string, log *slog.Logger) error {
	var name string
	var purge bool
	return adminCommand("user delete", args, log, func(fs *flag.FlagSet) func() error {
		fs.StringVar(&name, "username", "", "the account")
		fs.BoolVar(&purge, "purge", false, "also delete its repositories and the organizations it alone owns")
		return required(map[string]*string{"username": &name})
	}, func(ctx context.Context, d *app.Deps, s impl.Services) error {
		u, err := findIndividual(ctx, d, name)
		if err != nil {
			return err
		}
		if err := s.Users.Delete(ctx, operator, u, purge); err != nil {
			return fmt.Errorf("cannot delete %q: %w", name, err)
		}
		fmt.Printf("deleted user %s (id %d)\n", u.Name, u.ID)
		return nil
	})
}

func generateToken(args []string, log *slog.Logger) error {
	var name, tokenName, scopes string
	var raw bool
	return adminCommand("user generate-access-token", args, log, func(fs *flag.FlagSet) func() error {
		fs.StringVar(&name, "username", "", "the account the token acts as")
		fs.StringVar(&tokenName, "token-name", "cli", "the token's name (unique per account)")
		fs.StringVar(&scopes, "scopes", "all", "comma-separated scopes (the reference's, e.g. read:repository,write:issue)")
		fs.BoolVar(&raw, "raw", false, "print the token only")
		return required(map[string]*string{"username": &name, "token-name": &tokenName, "scopes": &scopes})
	}, func(ctx context.Context, d *app.Deps, s impl.Services) error {
		u, err := findIndividual(ctx, d, name)
		if err != nil {
			return err
		}
		_, secret, err := s.Users.CreateToken(ctx, operator, u, user.TokenInput{Name: tokenName, Scopes: strings.Split(scopes, ",")})
		if err != nil {
			return fmt.Errorf("cannot create a token for %q: %w", name, err)
		}
		if raw {
			fmt.Println(secret)
		} else {
			fmt.Printf("Access token was successfully created: %s\n", secret)
		}
		return nil
	})
}

func syncReleases(args []string, log *slog.Logger) error {
	var only string
	return adminCommand("repo-sync-releases", args, log, func(fs *flag.FlagSet) func() error {
		fs.StringVar(&only, "repo", "", "owner/name of one repository (default: every repository)")
		return func() error {
			if only != "" && strings.Count(only, "/") != 1 {
				return fmt.Errorf("--repo %q: want owner/name", only)
			}
			return nil
		}
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		var repos []*store.Repository
		if only != "" {
			owner, name, _ := strings.Cut(only, "/")
			r, err := d.Store.Repos().FindByOwnerAndName(ctx, owner, name)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no repository %q", only)
			} else if err != nil {
				return err
			}
			repos = append(repos, r)
		} else {
			for offset := 0; ; offset += 50 {
				page, _, err := d.Store.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{IsAdmin: true}, OrderBy: "id ASC"},
					store.Page{Offset: offset, Limit: 50})
				if err != nil {
					return err
				}
				repos = append(repos, page...)
				if len(page) < 50 {
					break
				}
			}
		}
		failed := 0
		for _, r := range repos {
			res, err := release.Service{Deps: d}.SyncReleases(ctx, r)
			if err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "%s: %v\n", r.FullName(), err)
				continue
			}
			fmt.Printf("%s: %d releases checked, %d updated, %d with a missing tag\n", r.FullName(), res.Checked, res.Updated, res.Missing)
		}
		if failed > 0 {
			return fmt.Errorf("%d repositories could not be synchronised", failed)
		}
		return nil
	})
}

func listNotices(args []string, log *slog.Logger) error {
	var limit int
	return adminCommand("notices", args, log, func(fs *flag.FlagSet) func() error {
		fs.IntVar(&limit, "limit", 50, "how many of the newest notices to show")
		return func() error {
			if limit < 1 {
				return fmt.Errorf("--limit %d: at least 1", limit)
			}
			return nil
		}
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		notices, total, err := d.Store.Notices().List(ctx, store.Page{Limit: limit})
		if err != nil {
			return err
		}
		for _, n := range notices {
			fmt.Printf("%s\t%s\t%s\n", n.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), n.Type, n.Description)
		}
		fmt.Printf("%d of %d notices\n", len(notices), total)
		return nil
	})
}

// reindexIssues rebuilds the full-text index of issues and comments. The
// database keeps that index in the transactions that write the text, so
// this is for an operator who doubts it (after restoring a partial backup,
// say); --check only reports how many entries disagree with their text.
func reindexIssues(args []string, log *slog.Logger) error {
	var check bool
	return adminCommand("reindex-issues", args, log, func(fs *flag.FlagSet) func() error {
		fs.BoolVar(&check, "check", false, "only report entries of the index that disagree with their text")
		return func() error { return nil }
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		if !check {
			start := time.Now()
			if err := d.Store.Issues().Reindex(ctx); err != nil {
				return err
			}
			fmt.Printf("issue index rebuilt in %s\n", time.Since(start).Round(time.Millisecond))
		}
		bad, err := d.Store.Issues().CheckSearchIndex(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("%d entries of the issue index disagree with their text\n", bad)
		if bad > 0 {
			return fmt.Errorf("issue index: %d entries out of date (run repohost admin reindex-issues)", bad)
		}
		return nil
	})
}

func listEventQueues(args []string, log *slog.Logger) error {
	return adminCommand("events queues", args, log, func(*flag.FlagSet) func() error {
		return func() error { return nil }
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		stats, err := d.Events.Stats(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "Consumer\tPending\tRetrying\tDead\tOldest pending")
		for _, s := range stats {
			oldest := "-"
			if !s.OldestPending.IsZero() {
				oldest = s.OldestPending.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", s.Consumer, s.Pending, s.Retrying, s.Dead, oldest)
		}
		return w.Flush()
	})
}

func listDeadLetters(args []string, log *slog.Logger) error {
	var consumer string
	var limit int
	return adminCommand("events dead-letters", args, log, func(fs *flag.FlagSet) func() error {
		fs.StringVar(&consumer, "consumer", "", "only this consumer's (default: every consumer's)")
		fs.IntVar(&limit, "limit", 50, "how many of the newest to show")
		return func() error {
			if limit < 1 {
				return fmt.Errorf("--limit %d: at least 1", limit)
			}
			return nil
		}
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		list, total, err := d.Events.DeadLetters(ctx, consumer, 0, limit)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tConsumer\tEvent\tKind\tRepo\tAttempts\tFailed at\tLast error")
		for _, l := range list {
			fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%d\t%d\t%s\t%s\n", l.ID, l.Consumer, l.EventID, l.Kind, l.RepoID, l.Attempts,
				l.UpdatedAt.Format(time.RFC3339), l.LastError)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Printf("%d of %d dead letters\n", len(list), total)
		return nil
	})
}

func retryDeadLetters(args []string, log *slog.Logger) error {
	var consumer string
	var id int64
	var all bool
	return adminCommand("events retry", args, log, func(fs *flag.FlagSet) func() error {
		fs.Int64Var(&id, "id", 0, "the dead letter to retry")
		fs.StringVar(&consumer, "consumer", "", "with --all: only this consumer's")
		fs.BoolVar(&all, "all", false, "retry every dead letter (of --consumer)")
		return func() error {
			if (id == 0) == !all {
				return errors.New("give either --id N or --all")
			}
			if id != 0 && consumer != "" {
				return errors.New("--consumer goes with --all")
			}
			return nil
		}
	}, func(ctx context.Context, d *app.Deps, _ impl.Services) error {
		n, err := d.Events.Retry(ctx, consumer, id)
		if err != nil {
			return err
		}
		if id != 0 && n == 0 {
			return fmt.Errorf("no dead letter %d", id)
		}
		fmt.Printf("%d dead letters pending again; a server process takes them\n", n)
		return nil
	})
}
