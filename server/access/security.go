package access

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// Group is the names and roles of a security object's admins or members.
type Group struct {
	Names []string
	Roles []string
}

func (g Group) empty() bool { return len(g.Names) == 0 && len(g.Roles) == 0 }

// has reports whether u is in g by name or by one of its roles.
func (g Group) has(u UserCtx) bool {
	if u.Name != "" && slices.Contains(g.Names, u.Name) {
		return true
	}
	for _, r := range u.Roles {
		if slices.Contains(g.Roles, r) {
			return true
		}
	}
	return false
}

// Security is a database's security object (_security): who administers
// it and who may read and write it. Raw is the object as stored, which
// GET /db/_security answers unchanged (other members included).
type Security struct {
	Admins  Group
	Members Group
	Raw     json.RawMessage
}

// AdminOnly is the security object CouchDB 3 gives a new database
// ([couchdb] default_security = admin_only): only server admins.
var AdminOnly = mustParse(`{"members":{"roles":["_admin"]},"admins":{"roles":["_admin"]}}`)

// Everyone is the empty security object: any user, anonymous included,
// reads and writes documents; only server admins administer.
var Everyone = mustParse(`{}`)

func mustParse(s string) *Security {
	sec, err := ParseSecurity([]byte(s))
	if err != nil {
		panic(err)
	}
	return sec
}

// ErrBadSecurity reports a security object CouchDB refuses; its text is
// CouchDB's reason.
var ErrBadSecurity = errors.New("invalid security object")

type securityError string

func (e securityError) Error() string { return string(e) }
func (e securityError) Is(target error) bool {
	return target == ErrBadSecurity
}

// ParseSecurity validates a security object as CouchDB's
// validate_security_object: admins and members, when present, are objects
// whose names and roles are lists of strings ("readers" stands in for a
// missing "members", as in CouchDB). Errors match ErrBadSecurity.
func ParseSecurity(raw []byte) (*Security, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, securityError("Security object must be a JSON object")
	}
	sec := &Security{Raw: compact(raw)}
	var err error
	if sec.Admins, err = parseGroup(top["admins"]); err != nil {
		return nil, err
	}
	members := top["members"]
	if members == nil {
		members = top["readers"]
	}
	if sec.Members, err = parseGroup(members); err != nil {
		return nil, err
	}
	return sec, nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

func parseGroup(raw json.RawMessage) (Group, error) {
	var g Group
	if raw == nil {
		return g, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return g, securityError("admins or members must be a JSON list of strings")
	}
	var err error
	if g.Names, err = stringList(obj["names"], "names must be a JSON list of strings"); err != nil {
		return g, err
	}
	if g.Roles, err = stringList(obj["roles"], "roles must be a JSON list of strings"); err != nil {
		return g, err
	}
	return g, nil
}

func stringList(raw json.RawMessage, msg string) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || list == nil && string(raw) != "[]" {
		return nil, securityError(msg)
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, securityError(msg)
		}
		out = append(out, s)
	}
	return out, nil
}

// IsAdmin reports whether u administers the database: a server admin, or
// named or holding a role in admins (couch_db:is_admin).
func (s *Security) IsAdmin(u UserCtx) bool {
	return u.IsServerAdmin() || s.Admins.has(u)
}

// IsMember reports whether u may read and write the database's documents:
// an admin, anyone when members is empty, else a user named or holding a
// role in members (couch_db:is_member).
func (s *Security) IsMember(u UserCtx) bool {
	return s.IsAdmin(u) || s.Members.empty() || s.Members.has(u)
}
