package server

import (
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// query wraps a request's query string with CouchDB's parameter parsing;
// the first malformed parameter is remembered in err.
type query struct {
	v   url.Values
	err error
}

func newQuery(u *url.URL) *query {
	v, err := url.ParseQuery(u.RawQuery)
	q := &query{v: v}
	if err != nil {
		q.err = badRequest("invalid query string: %v", err)
	}
	return q
}

func (q *query) has(name string) bool { return q.v.Has(name) }

func (q *query) str(name string) string { return q.v.Get(name) }

// bool parses "true"/"false"; anything else is a 400.
func (q *query) bool(name string) bool {
	if !q.v.Has(name) {
		return false
	}
	switch q.v.Get(name) {
	case "true", "":
		return true
	case "false":
		return false
	}
	q.fail("Invalid boolean parameter: %s", name)
	return false
}

// boolDefault is bool with a default when absent.
func (q *query) boolDefault(name string, def bool) bool {
	if !q.v.Has(name) {
		return def
	}
	return q.bool(name)
}

func (q *query) int(name string, def int64) int64 {
	if !q.v.Has(name) {
		return def
	}
	n, err := parseInt(q.v.Get(name))
	if err != nil || n < 0 {
		q.fail("Invalid value for %s: %q", name, q.v.Get(name))
		return def
	}
	return n
}

// json decodes a JSON-valued parameter (keys, open_revs, startkey ...).
func (q *query) json(name string, v any) bool {
	if !q.v.Has(name) {
		return false
	}
	if err := decodeJSON([]byte(q.v.Get(name)), v); err != nil {
		q.fail("Invalid JSON in %s", name)
		return false
	}
	return true
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = badRequest(format, args...)
	}
}

func parseInt(s string) (int64, error) {
	return strconv.ParseInt(s, 10, 64)
}

// revList decodes a JSON list of revs, each in the form CouchDB answers
// it (couchdoc.CanonRev).
func (q *query) revList(name string) []string {
	var revs []string
	if !q.json(name, &revs) {
		return nil
	}
	for i, r := range revs {
		c, err := couchdoc.CanonRev(r)
		if err != nil {
			q.fail("Invalid rev format")
			return nil
		}
		revs[i] = c
	}
	return revs
}

// getOptions reads the options of GET /{db}/{docid} shared with open_revs
// and _bulk_get.
func (q *query) getOptions() localdb.GetOptions {
	o := localdb.GetOptions{
		Rev:              q.str("rev"),
		Revs:             q.bool("revs"),
		RevsInfo:         q.bool("revs_info"),
		Conflicts:        q.bool("conflicts"),
		DeletedConflicts: q.bool("deleted_conflicts"),
		Latest:           q.bool("latest"),
		Attachments:      q.bool("attachments"),
		LocalSeq:         q.bool("local_seq"),
	}
	if q.has("meta") && q.bool("meta") {
		o.Conflicts, o.DeletedConflicts, o.RevsInfo = true, true, true
	}
	if q.has("atts_since") {
		o.AttsSince = q.revList("atts_since")
		o.Attachments = true
	}
	if o.Rev != "" {
		c, err := couchdoc.CanonRev(o.Rev)
		if err != nil {
			q.fail("Invalid rev format")
		}
		o.Rev = c
	}
	return o
}

// rawJSON is a helper for answers that embed pre-encoded JSON.
type rawJSON = json.RawMessage
