// Package validate runs the validate_doc_update functions of a store's
// design documents on a write, as CouchDB 3.5 does: every design document
// that has one, in id order, with newDoc, oldDoc, userCtx and secObj; the
// first refusal wins. _local documents are not validated, and design
// documents are not given to the functions (CouchDB asks only for a
// database admin there) but are checked as CouchDB checks them on write:
// member types, views with a map, known built-in reduces, map and reduce
// functions that compile.
//
// CouchDB validates every write it receives, replicated ones included;
// PouchDB validates none locally. The HTTP server (settee serve) validates
// every write; a local store validates only when the app turns it on:
//
//	db.SetWriteCheck(v.WriteCheck(&validate.WriteContext{UserName: "ann", Roles: []string{"editor"}}))
//
// Then every write of that handle is validated (Put, Delete, BulkDocs,
// Batch, ResolveConflict, and the writes of a pull into it, whose refused
// revisions count as doc_write_failures while the rest is written): an
// app that must refuse what its CouchDB would refuse can do it offline,
// the others pay nothing. db.SetWriteCheck(nil) turns it off.
package validate

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	gosync "sync"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/jsfunc"
	"github.com/settee/settee/localdb"
)

// WriteContext is who writes and under which security object: CouchDB's
// userCtx and secObj.
type WriteContext struct {
	// DB is the database name userCtx.db gives.
	DB string
	// UserName is the user's name; empty for an anonymous writer (null).
	UserName string
	Roles    []string
	// SecObj is the database's security object (JSON); nil means CouchDB's
	// default for a database without one (admin_only).
	SecObj json.RawMessage
}

// ParseUserCtx reads a writer given as CouchDB's userCtx object,
// {"name": "ann", "roles": ["editor"], "db": "tasks"} (a null or missing
// name: anonymous), with an optional "secObj" member for the security
// object. Anything else is a couchdoc.ErrBadRequest.
func ParseUserCtx(b []byte) (*WriteContext, error) {
	var uc struct {
		Name   *string         `json:"name"`
		Roles  []string        `json:"roles"`
		DB     string          `json:"db"`
		SecObj json.RawMessage `json:"secObj"`
	}
	if err := json.Unmarshal(b, &uc); err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, `userCtx must be a JSON object {"name", "roles", "db"}: %v`, err)
	}
	if string(uc.SecObj) == "null" {
		uc.SecObj = nil
	}
	if len(uc.SecObj) > 0 && uc.SecObj[0] != '{' {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "userCtx's secObj must be a JSON object")
	}
	wc := &WriteContext{DB: uc.DB, Roles: uc.Roles, SecObj: uc.SecObj}
	if uc.Name != nil {
		wc.UserName = *uc.Name
	}
	return wc, nil
}

// AdminContext is the context of a server admin: what the server passes
// until it knows its users' roles and databases' security objects.
func AdminContext(db, name string) *WriteContext {
	return &WriteContext{DB: db, UserName: name, Roles: []string{"_admin"}}
}

// defaultSecObj is CouchDB 3.5's security object of a database that has
// none (default_security = admin_only).
var defaultSecObj = json.RawMessage(`{"members":{"roles":["_admin"]},"admins":{"roles":["_admin"]}}`)

func (wc *WriteContext) userCtx() json.RawMessage {
	var name any
	if wc.UserName != "" {
		name = wc.UserName
	}
	roles := wc.Roles
	if roles == nil {
		roles = []string{}
	}
	b, _ := json.Marshal(struct {
		DB    string   `json:"db"`
		Name  any      `json:"name"`
		Roles []string `json:"roles"`
	}{wc.DB, name, roles})
	return b
}

// validator is one design document's validate_doc_update.
type validator struct {
	id, rev string
	source  string
	ddoc    json.RawMessage
}

// storeFuncs are the validators of one store, by design document id.
type storeFuncs struct {
	mu   gosync.Mutex
	byID map[string]*validator
	// list is the store's validators as of the store's design
	// generation gen (loaded false: never listed).
	list   []*validator
	gen    int64
	loaded bool
}

// Validator checks writes against the stores' validate_doc_update
// functions. Its zero value is not usable: call New. It is safe for
// concurrent use.
type Validator struct {
	pools  *jsfunc.Pools
	mu     gosync.Mutex
	stores map[*localdb.DB]*storeFuncs // by handle: DesignGeneration is per handle
}

// New returns a Validator running functions with opts (nil: defaults).
func New(opts *jsfunc.Options) *Validator {
	return &Validator{pools: jsfunc.NewPools(opts, 2), stores: map[*localdb.DB]*storeFuncs{}}
}

// WriteCheck returns the check a local store runs on every write once
// given to localdb.DB.SetWriteCheck: Check, with wc as the writer (nil:
// a server admin without a name, as AdminContext).
func (v *Validator) WriteCheck(wc *WriteContext) localdb.WriteCheck {
	return &writeCheck{v: v, wc: wc}
}

// writeCheck is a Validator bound to one writer.
type writeCheck struct {
	v  *Validator
	wc *WriteContext
}

func (c *writeCheck) CheckWrite(ctx context.Context, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) error {
	return c.v.Check(ctx, db, doc, newEdits, c.wc)
}

// Close frees the runtimes.
func (v *Validator) Close() { v.pools.Close() }

// functions returns db's validators, in design document id order,
// reloading those whose design document changed.
func (v *Validator) functions(ctx context.Context, db *localdb.DB) ([]*validator, error) {
	v.mu.Lock()
	sf := v.stores[db]
	if sf == nil {
		sf = &storeFuncs{byID: map[string]*validator{}}
		v.stores[db] = sf
	}
	v.mu.Unlock()
	sf.mu.Lock()
	defer sf.mu.Unlock()
	// Listing the design documents on every write would cost a query
	// per document: the list is kept until a design document changes.
	gen := db.DesignGeneration()
	if sf.loaded && sf.gen == gen {
		return sf.list, nil
	}
	var out []*validator
	seen := map[string]bool{}
	_, err := db.AllDocs(ctx, localdb.AllDocsOptions{StartKey: couchdoc.DesignPrefix, EndKey: "_design0", ExclusiveEnd: true}, func(row *localdb.AllDocsRow) error {
		if row.Deleted || row.Error != "" {
			return nil
		}
		seen[row.ID] = true
		cur := sf.byID[row.ID]
		if cur == nil || cur.rev != row.Rev {
			doc, err := db.Get(ctx, row.ID, localdb.GetOptions{})
			if errors.Is(err, couchdoc.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			cur = &validator{id: row.ID, rev: doc.Rev}
			var body struct {
				VDU *string `json:"validate_doc_update"`
			}
			if json.Unmarshal(doc.Body, &body) == nil && body.VDU != nil {
				cur.source = *body.VDU
				if cur.ddoc, err = doc.AppendJSON(nil); err != nil {
					return err
				}
			}
			sf.byID[row.ID] = cur
		}
		if cur.source != "" {
			out = append(out, cur)
		}
		return nil
	})
	for id := range sf.byID {
		if !seen[id] {
			delete(sf.byID, id)
		}
	}
	if err == nil {
		sf.list, sf.gen, sf.loaded = out, gen, true
	}
	return out, err
}

// batchKey keys a batch's cache of validators in a context.
type batchKey struct{}

// batchCache holds the validators of the stores a batch writes to.
type batchCache struct {
	mu   gosync.Mutex
	fns  map[string][]*validator
	seen map[string]bool
}

// WithBatch returns a context under which Check reads each store's
// validators once: the writes of one batch (one _bulk_docs request) are
// validated against the design documents as they were when it began, as
// CouchDB validates them, without reading them again for each document.
func WithBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &batchCache{fns: map[string][]*validator{}, seen: map[string]bool{}})
}

func (v *Validator) cachedFunctions(ctx context.Context, db *localdb.DB) ([]*validator, error) {
	bc, _ := ctx.Value(batchKey{}).(*batchCache)
	if bc == nil {
		return v.functions(ctx, db)
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.seen[db.UUID()] {
		return bc.fns[db.UUID()], nil
	}
	fns, err := v.functions(ctx, db)
	if err == nil {
		bc.fns[db.UUID()], bc.seen[db.UUID()] = fns, true
	}
	return fns, err
}

// Check runs the validate_doc_update functions of db on a write of doc
// (with new_edits as given) by wc. It returns nil when every function
// accepts it, else the first refusal: a *couchdoc.Error matching
// couchdoc.ErrForbidden (403) or couchdoc.ErrUnauthorized (401), or
// another 500 *couchdoc.Error for a function that throws anything else,
// does not compile or runs out of time (jsfunc.ErrTimeout).
func (v *Validator) Check(ctx context.Context, db *localdb.DB, doc *couchdoc.Doc, newEdits bool, wc *WriteContext) error {
	if couchdoc.IsLocalID(doc.ID) {
		return nil
	}
	if strings.HasPrefix(doc.ID, couchdoc.DesignPrefix) {
		if doc.Deleted {
			return nil
		}
		return v.checkDesign(doc.Body)
	}
	fns, err := v.cachedFunctions(ctx, db)
	if err != nil || len(fns) == 0 {
		return err
	}
	if !newEdits && doc.Rev != "" {
		// A replicated revision the store has is not written again:
		// CouchDB validates only the new ones.
		if _, err := db.Get(ctx, doc.ID, localdb.GetOptions{Rev: doc.Rev}); err == nil {
			return nil
		}
	}
	newDoc, oldDoc, err := writeDocs(ctx, db, doc, newEdits)
	if err != nil {
		return err
	}
	if wc == nil {
		wc = AdminContext("", "")
	}
	sec := wc.SecObj
	if len(sec) == 0 {
		sec = defaultSecObj
	}
	user := wc.userCtx()
	for _, f := range fns {
		pool := v.pools.For(db.UUID() + "\x00" + f.id)
		rt, err := pool.Get()
		if err != nil {
			return err
		}
		err = rt.Validate(f.source, f.ddoc, newDoc, oldDoc, user, sec)
		pool.Put(rt)
		if errors.Is(err, jsfunc.ErrTimeout) {
			// CouchDB's answer to a validator that runs out of time has no ref.
			return couchdoc.Errorf(jsfunc.ErrTimeout, "%s", jsfunc.ErrTimeout.Reason)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func errorsAs(err error, target **couchdoc.Error) bool { return errors.As(err, target) }

// writeDocs returns the newDoc and oldDoc a validation function gets, as
// JSON: the document written with the history of its parent
// (_revisions), and that parent (null for a new document).
func writeDocs(ctx context.Context, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) (json.RawMessage, json.RawMessage, error) {
	parent := doc.Rev
	if !newEdits {
		parent = ""
		if r := doc.Revisions; r != nil && len(r.IDs) > 1 {
			parent = strconv.Itoa(r.Start-1) + "-" + r.IDs[1]
		}
	}
	nd := *doc
	oldDoc := json.RawMessage("null")
	if parent != "" {
		old, err := db.Get(ctx, doc.ID, localdb.GetOptions{Rev: parent, Revs: true})
		switch {
		case err == nil:
			if oldDoc, err = argJSON(old); err != nil {
				return nil, nil, err
			}
			if newEdits && old.Revisions != nil && len(old.Revisions.IDs) > 0 {
				// The new revision is not computed yet: CouchDB gives the
				// parent alone.
				nd.Revisions = &couchdoc.Revisions{Start: old.Revisions.Start, IDs: old.Revisions.IDs[:1]}
			}
			nd.Attachments = attachmentStubs(nd.Attachments, old.Attachments)
		case !errors.Is(err, couchdoc.ErrNotFound):
			return nil, nil, err
		}
	}
	if parent == "" {
		nd.Attachments = attachmentStubs(nd.Attachments, nil)
	}
	newDoc, err := argJSON(&nd)
	return newDoc, oldDoc, err
}

// argJSON encodes a document as CouchDB gives it to a function, which
// sees the order of its members (JSON.stringify, for-in): _attachments
// last, after _revisions, each a stub with CouchDB's members in its order
// (content_type, revpos, digest, length, stub).
func argJSON(doc *couchdoc.Doc) (json.RawMessage, error) {
	if len(doc.Attachments) == 0 {
		return doc.AppendJSON(nil)
	}
	bare := *doc
	bare.Attachments = nil
	b, err := bare.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1]
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"_attachments":{`...)
	names := make([]string, 0, len(doc.Attachments))
	for name := range doc.Attachments {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		a := doc.Attachments[name]
		if i > 0 {
			b = append(b, ',')
		}
		b = couchdoc.AppendJSONString(b, name, true)
		b = append(b, `:{"content_type":`...)
		b = couchdoc.AppendJSONString(b, a.ContentType, true)
		b = append(b, `,"revpos":`...)
		b = strconv.AppendInt(b, int64(a.RevPos), 10)
		if a.Digest != "" {
			b = append(b, `,"digest":`...)
			b = couchdoc.AppendJSONString(b, a.Digest, true)
		}
		b = append(b, `,"length":`...)
		b = strconv.AppendInt(b, a.Length, 10)
		b = append(b, `,"stub":true}`...)
	}
	return append(b, "}}"...), nil
}

// attachmentStubs gives the attachments of a write as a validator sees
// them in CouchDB: stubs, those kept from the parent (old) with its
// metadata, new ones with their length and revpos 0, no data.
func attachmentStubs(atts, old map[string]*couchdoc.Attachment) map[string]*couchdoc.Attachment {
	if len(atts) == 0 {
		return atts
	}
	out := make(map[string]*couchdoc.Attachment, len(atts))
	for name, a := range atts {
		if a.Stub {
			if o := old[name]; o != nil {
				kept := *o
				kept.Stub, kept.Data, kept.Body = true, nil, nil
				out[name] = &kept
				continue
			}
			out[name] = a
			continue
		}
		length := a.Length
		if a.Data != nil {
			length = int64(len(a.Data))
		}
		out[name] = &couchdoc.Attachment{Name: a.Name, ContentType: a.ContentType, Length: length, Stub: true}
	}
	return out
}
