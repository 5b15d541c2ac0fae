package mobile

import (
	"github.com/settee/settee/localdb/query"
)

// Query queries a JavaScript map/reduce view, CouchDB's
// _design/{ddoc}/_view/{view}: optionsJSON holds its query options as a
// JSON object ({"key": ..., "keys": [...], "startkey", "endkey",
// "inclusive_end", "descending", "skip", "limit", "reduce", "group",
// "group_level", "include_docs", "conflicts", "update", "update_seq"}; ""
// for none) and the answer is CouchDB's JSON ({"total_rows", "offset",
// "rows": [{"id", "key", "value", "doc"}]}, or a reduction's {"rows":
// [{"key", "value"}]}). The view is brought up to date first unless
// update is "false" or "lazy". Errors are CouchDB's: not_found
// (missing_named_view), query_parse_error, and the function's own.
func (d *Database) Query(ddoc, view, optionsJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	opts, err := query.ViewOptionsFromJSON([]byte(optionsJSON))
	if err != nil {
		return "", err
	}
	res, err := query.View(d.ctx, d.db, ddoc, view, opts)
	if err != nil {
		return "", err
	}
	return marshal(res)
}
