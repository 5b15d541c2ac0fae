package mobile

import (
	"github.com/settee/settee/localdb/query"
)

// Find runs a Mango query, CouchDB's _find: queryJSON is its body
// ({"selector": {...}, "fields", "sort", "limit", "skip", "bookmark",
// "use_index", "execution_stats"}) and the answer is CouchDB's JSON
// ({"docs": [...], "bookmark": "...", "warning": "..."}). A sort needs a
// json index on its fields (CreateIndex), else the error is
// "no_usable_index", as in CouchDB. Page with limit and the bookmark.
func (d *Database) Find(queryJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	res, err := query.Find(d.ctx, d.db, []byte(queryJSON))
	if err != nil {
		return "", err
	}
	return marshal(res)
}

// Explain returns CouchDB's _explain answer for a Find query: the index
// it would use and the key range it would read.
func (d *Database) Explain(queryJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	ex, err := query.Explain(d.ctx, d.db, d.Path(), []byte(queryJSON))
	if err != nil {
		return "", err
	}
	return marshal(ex)
}

// CreateIndex creates a Mango json index from CouchDB's _index body
// ({"index": {"fields": [...], "partial_filter_selector": {...}}, "ddoc",
// "name"}) and returns {"result": "created"|"exists", "id", "name"}. The
// index is a design document, so it replicates like any document; it is
// built before CreateIndex returns.
func (d *Database) CreateIndex(indexJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return "", err
	}
	res, err := query.CreateIndex(d.ctx, d.db, []byte(indexJSON))
	if err != nil {
		return "", err
	}
	return marshal(res)
}

// Indexes lists the indexes as CouchDB's GET _index: {"total_rows": N,
// "indexes": [...]}, the _all_docs index first.
func (d *Database) Indexes() (listJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	return marshal(query.ListIndexes(d.db))
}

// DeleteIndex removes an index ("_design/" optional on ddoc); a missing
// one is a "not_found" error.
func (d *Database) DeleteIndex(ddoc, name string) (err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return err
	}
	return query.DeleteIndex(d.ctx, d.db, ddoc, name)
}
