package org

import "repohost/impl/app"

// Handlers implements restapi.OrganizationAPI.
type Handlers struct{ *app.Deps }
