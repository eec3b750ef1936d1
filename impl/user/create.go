package user

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/names"
	"repohost/store"
)

// NewUser describes an account to create.
type NewUser struct {
	Name               string
	Email              string
	Password           string
	FullName           string
	LoginName          string
	SourceID           int64
	IsAdmin            bool
	MustChangePassword bool
	Restricted         bool
	Visibility         store.Visibility
	// CreatedAt back-dates the account (admin imports); zero means now.
	CreatedAt time.Time
}

// CheckEmail validates the form of an address.
func CheckEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || !strings.Contains(email, "@") {
		return apierr.Validation("e-mail invalid [email: %s]", email)
	}
	return nil
}

// Create makes an account with its primary email address, in one
// transaction. It is shared by the admin API, the CLI and the first start.
func Create(ctx context.Context, d *app.Deps, n NewUser) (*store.User, error) {
	if err := names.CheckUser("Username", n.Name); err != nil {
		return nil, err
	}
	if err := CheckEmail(n.Email); err != nil {
		return nil, err
	}
	// An account without a password (one signed in by an external source)
	// keeps an empty hash, which no password matches.
	hash := ""
	if n.Password != "" {
		var err error
		if hash, err = d.Hasher.HashPassword(n.Password); err != nil {
			return nil, err
		}
	}
	u := &store.User{
		Name:               n.Name,
		FullName:           n.FullName,
		Email:              n.Email,
		PasswordHash:       hash,
		Type:               store.UserTypeIndividual,
		IsAdmin:            n.IsAdmin,
		IsActive:           true,
		MustChangePassword: n.MustChangePassword,
		Restricted:         n.Restricted,
		Visibility:         n.Visibility,
		LoginName:          n.LoginName,
		SourceID:           n.SourceID,
		AllowCreateOrg:     true,
		MaxRepoCreation:    -1,
		CreatedAt:          n.CreatedAt,
		UpdatedAt:          n.CreatedAt,
	}
	err := d.Store.WithTx(ctx, func(ctx context.Context) error {
		if _, err := d.Store.Users().FindByName(ctx, n.Name); err == nil {
			return apierr.Validation("user already exists [name: %s]", n.Name)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, err := d.Store.Emails().FindByEmail(ctx, n.Email); err == nil {
			return apierr.Validation("e-mail already in use [email: %s]", n.Email)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := d.Store.Users().Create(ctx, u); err != nil {
			if errors.Is(err, store.ErrDuplicate) {
				return apierr.Validation("user already exists [name: %s]", n.Name)
			}
			return err
		}
		return d.Store.Emails().Create(ctx, &store.Email{UserID: u.ID, Email: n.Email, IsPrimary: true, IsActivated: true})
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
