package server

import (
	"context"
	"encoding/json"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/validate"
)

// Every write the server takes (PUT, POST, DELETE, COPY, attachments,
// _bulk_docs with new_edits true or false) runs the database's
// validate_doc_update functions after checkDocWrite's checks, as CouchDB
// does (package localdb/validate); a refusal changes nothing. The
// writer's context is the request's: its database, user and the
// database's security object.

// validators run the validate_doc_update functions of every served store.
var validators = validate.New(nil)

// writerOf returns the WriteContext of the request ctx belongs to: its
// database, user and security object (a server admin without a call).
func writerOf(ctx context.Context) *validate.WriteContext {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return validate.AdminContext("", "")
	}
	wc := &validate.WriteContext{DB: c.rt.db, UserName: c.auth.User.Name, Roles: c.auth.User.Roles}
	if c.sec != nil && len(c.sec.Raw) > 0 {
		wc.SecObj = json.RawMessage(c.sec.Raw)
	}
	return wc
}

// checkWrite runs the validation functions on a write of doc.
func checkWrite(ctx context.Context, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) error {
	return validators.Check(ctx, db, doc, newEdits, writerOf(ctx))
}
