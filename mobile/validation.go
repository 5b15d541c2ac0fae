package mobile

import (
	"github.com/settee/settee/localdb/validate"
)

// SetValidation turns on (enabled) or off the validate_doc_update
// functions of the store's design documents for every later write of
// this Database: Put, Delete, batches, conflict resolution, attachments
// (written with their document) and the documents a pull brings in. A
// refused write fails with code "forbidden" or "unauthorized" and the
// function's reason, and changes nothing; a pull counts each refused
// revision in docWriteFailures and writes the rest, as CouchDB's
// replicator does.
//
// userCtxJSON is who writes, as CouchDB gives it to the functions:
// {"name": "ann", "roles": ["editor"], "db": "tasks"} ("" or a null name:
// anonymous), with an optional "secObj" member, the security object the
// functions get (default: CouchDB's of a database that has none).
//
// PouchDB validates nothing locally, and neither does a Database until
// this is called: CouchDB validates every write it receives, so an app
// that must refuse offline what its CouchDB would refuse turns it on.
func (d *Database) SetValidation(enabled bool, userCtxJSON string) (err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return err
	}
	if !enabled {
		return d.setValidator(nil, nil)
	}
	wc := &validate.WriteContext{}
	if userCtxJSON != "" {
		if wc, err = validate.ParseUserCtx([]byte(userCtxJSON)); err != nil {
			return err
		}
	}
	return d.setValidator(validate.New(nil), wc)
}

// setValidator makes v (nil: none) check the store's writes as wc, and
// closes the validator it replaces; after Close it closes v and returns
// errClosed.
func (d *Database) setValidator(v *validate.Validator, wc *validate.WriteContext) error {
	d.mu.Lock()
	if d.closed {
		// Close ran since the caller's check: it closes the old one.
		d.mu.Unlock()
		if v != nil {
			v.Close()
		}
		return errClosed
	}
	old := d.validator
	d.validator = v
	if v == nil {
		d.db.SetWriteCheck(nil)
	} else {
		d.db.SetWriteCheck(v.WriteCheck(wc))
	}
	d.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}
