package access

import "slices"

// AdminRole is the role of a server administrator.
const AdminRole = "_admin"

// UserCtx is who makes a request, CouchDB's userCtx: a name ("" when
// anonymous) and roles.
type UserCtx struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

// Anonymous is the context of a request without credentials.
var Anonymous = UserCtx{Roles: []string{}}

// Admin returns the context of a server administrator named name ("" in
// an admin party, where everyone administers the server).
func Admin(name string) UserCtx { return UserCtx{Name: name, Roles: []string{AdminRole}} }

// IsServerAdmin reports whether u holds the _admin role.
func (u UserCtx) IsServerAdmin() bool { return slices.Contains(u.Roles, AdminRole) }

// IsAnonymous reports whether u sent no valid credentials: CouchDB
// answers such a request 401 where it answers a known user 403.
func (u UserCtx) IsAnonymous() bool { return u.Name == "" && !u.IsServerAdmin() }

// JSON is u as CouchDB shows it: a null name when anonymous, roles never
// null.
func (u UserCtx) JSON() map[string]any {
	var name any
	if u.Name != "" {
		name = u.Name
	}
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	return map[string]any{"name": name, "roles": roles}
}
