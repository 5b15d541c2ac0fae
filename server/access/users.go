package access

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// UsersDB is the name of the database of users.
const UsersDB = "_users"

// UserPrefix starts the id of every user document: org.couchdb.user:NAME.
const UserPrefix = "org.couchdb.user:"

// User is what authentication needs of a user document.
type User struct {
	Name  string
	Roles []string
	Hash  Hash
}

// userBody is the part of a user document's body CouchDB's rules read.
type userBody struct {
	Type         json.RawMessage `json:"type"`
	Name         json.RawMessage `json:"name"`
	Roles        json.RawMessage `json:"roles"`
	Password     json.RawMessage `json:"password"`
	PasswordSHA  json.RawMessage `json:"password_sha"`
	Salt         json.RawMessage `json:"salt"`
	Scheme       json.RawMessage `json:"password_scheme"`
	Iterations   json.RawMessage `json:"iterations"`
	DerivedKey   json.RawMessage `json:"derived_key"`
	PRF          json.RawMessage `json:"pbkdf2_prf"`
	rolesStrings []string
}

// ParseUser reads a stored user document; ok is false when it is not one
// (deleted, or without a name). A user without a usable password hash
// (no pbkdf2 fields) has an empty Hash: no password matches it.
func ParseUser(doc *couchdoc.Doc) (User, bool) {
	var b userBody
	if doc == nil || doc.Deleted || json.Unmarshal(doc.Body, &b) != nil {
		return User{}, false
	}
	var u User
	if json.Unmarshal(b.Name, &u.Name) != nil || u.Name == "" {
		return User{}, false
	}
	_ = json.Unmarshal(b.Roles, &u.Roles)
	if u.Roles == nil {
		u.Roles = []string{}
	}
	var scheme string
	_ = json.Unmarshal(b.Scheme, &scheme)
	var h Hash
	if scheme == "pbkdf2" && json.Unmarshal(b.Iterations, &h.Iterations) == nil &&
		json.Unmarshal(b.Salt, &h.Salt) == nil && json.Unmarshal(b.DerivedKey, &h.DerivedKey) == nil {
		_ = json.Unmarshal(b.PRF, &h.PRF)
		u.Hash = h
	}
	return u, true
}

func forbidden(reason string) error { return couchdoc.Errorf(couchdoc.ErrForbidden, "%s", reason) }

// PrepareUserDoc applies CouchDB's rules for a write of newDoc to _users
// by u, where old is the revision it replaces (nil for a new document)
// and sec the database's security object: couch_users_db's
// before_doc_update (another user's document is not found; a password is
// replaced by its PBKDF2 hash, never stored) and the _design/_auth
// validation function. It changes newDoc's Body in place and returns
// CouchDB's forbidden or not_found error for a refused write.
func PrepareUserDoc(newDoc, old *couchdoc.Doc, u UserCtx, sec *Security, iterations int) error {
	if strings.HasPrefix(newDoc.ID, couchdoc.DesignPrefix) {
		if !sec.IsAdmin(u) {
			return forbidden("Only administrators can write design docs in the users database.")
		}
		return nil
	}
	admin := sec.IsAdmin(u)
	var b userBody
	if !newDoc.Deleted || len(newDoc.Body) > 0 {
		if err := json.Unmarshal(orEmpty(newDoc.Body), &b); err != nil {
			return couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid JSON")
		}
	}
	name := jsonString(b.Name)
	if !admin && u.Name != "" && u.Name != name && !newDoc.Deleted {
		return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
	}
	if err := validateUser(newDoc, old, &b, u, sec); err != nil {
		return err
	}
	if newDoc.Deleted {
		return nil
	}
	return hashPasswordField(newDoc, iterations)
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// validateUser is the _design/_auth validate_doc_update of CouchDB 3.5's
// users database, rule for rule.
func validateUser(newDoc, old *couchdoc.Doc, b *userBody, u UserCtx, sec *Security) error {
	admin := sec.IsAdmin(u)
	var oldName string
	var oldRoles []string
	if old != nil && !old.Deleted {
		var ob userBody
		_ = json.Unmarshal(orEmpty(old.Body), &ob)
		oldName = jsonString(ob.Name)
		_ = json.Unmarshal(ob.Roles, &oldRoles)
	}
	if newDoc.Deleted {
		if admin || (old != nil && u.Name != "" && u.Name == oldName) {
			return nil
		}
		return forbidden("Only admins may delete other user docs.")
	}
	if jsonString(b.Type) != "user" {
		return forbidden("doc.type must be user")
	}
	name := jsonString(b.Name)
	if name == "" {
		return forbidden("doc.name is required")
	}
	if len(b.Roles) == 0 || string(b.Roles) == "null" {
		return forbidden("doc.roles must exist")
	}
	var roles []json.RawMessage
	if json.Unmarshal(b.Roles, &roles) != nil {
		return forbidden("doc.roles must be an array")
	}
	for _, r := range roles {
		var s string
		if len(r) == 0 || r[0] != '"' || json.Unmarshal(r, &s) != nil {
			return forbidden("doc.roles can only contain strings")
		}
		b.rolesStrings = append(b.rolesStrings, s)
	}
	if newDoc.ID != UserPrefix+name {
		return forbidden("Doc ID must be of the form org.couchdb.user:name")
	}
	if old != nil && !old.Deleted && oldName != name {
		return forbidden("Usernames can not be changed.")
	}
	if len(b.PasswordSHA) > 0 && len(b.Salt) == 0 {
		return forbidden("Users with password_sha must have a salt.See /_utils/script/couch.js for example code.")
	}
	if jsonString(b.Scheme) == "pbkdf2" && len(b.Password) == 0 {
		var n float64
		if json.Unmarshal(b.Iterations, &n) != nil {
			return forbidden("iterations must be a number.")
		}
		if jsonString(b.DerivedKey) == "" && string(b.DerivedKey) != `""` {
			return forbidden("derived_key must be a string.")
		}
	}
	if !admin {
		if old != nil && !old.Deleted {
			if u.Name != name {
				return forbidden("You may only update your own user document.")
			}
			a, c := slices.Clone(oldRoles), slices.Clone(b.rolesStrings)
			slices.Sort(a)
			slices.Sort(c)
			if !slices.Equal(a, c) {
				return forbidden("Only _admin may edit roles")
			}
		} else if len(b.rolesStrings) > 0 {
			return forbidden("Only _admin may set roles")
		}
	}
	for _, r := range b.rolesStrings {
		if strings.HasPrefix(r, "_") {
			return forbidden("No system roles (starting with underscore) in users db.")
		}
	}
	if strings.HasPrefix(name, "_") {
		return forbidden("Username may not start with underscore.")
	}
	if strings.Contains(name, ":") {
		return forbidden("Character `:` is not allowed in usernames.")
	}
	return nil
}

// hashPasswordField replaces a "password" member by its hash, as
// couch_users_db:save_doc; a null password is left as it is.
func hashPasswordField(doc *couchdoc.Doc, iterations int) error {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(doc.Body), &body); err != nil {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid JSON")
	}
	raw, ok := body["password"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var password string
	if json.Unmarshal(raw, &password) != nil {
		return forbidden(fmt.Sprintf("Password value of '%s' is invalid.", raw))
	}
	if iterations <= 0 {
		iterations = DefaultIterations
	}
	h := HashPassword(password, iterations)
	delete(body, "password")
	set := func(k string, v any) { body[k], _ = json.Marshal(v) }
	set("password_scheme", "pbkdf2")
	set("pbkdf2_prf", h.PRF)
	set("iterations", h.Iterations)
	set("derived_key", h.DerivedKey)
	set("salt", h.Salt)
	out, err := json.Marshal(body)
	if err != nil {
		return err
	}
	doc.Body = out
	return nil
}

// CanRead applies couch_users_db:after_doc_read: admins read every user
// document, a user their own; design documents are for admins.
func CanRead(doc *couchdoc.Doc, u UserCtx, sec *Security) error {
	if sec.IsAdmin(u) {
		return nil
	}
	if strings.HasPrefix(doc.ID, couchdoc.DesignPrefix) {
		return forbidden("Only administrators can view design docs in the users database.")
	}
	if u.Name != "" && doc.ID == UserPrefix+u.Name {
		return nil
	}
	return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
}
