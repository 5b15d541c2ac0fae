package server

import (
	"encoding/json"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/filter"
)

// jsFeedFilter returns the feed filter of filter=ddoc/name (ddocFilter)
// or filter=_view&view=ddoc/name (viewFilter), run by package
// localdb/filter with the request as CouchDB's req; CouchDB's 400s for a
// malformed name and 404s for what is missing. onError hears of a filter
// function failing on a document.
func jsFeedFilter(r *http.Request, db *localdb.DB, ddocFilter, viewFilter string, onError func(error)) (func(*couchdoc.Doc) bool, error) {
	if viewFilter != "" {
		ddoc, name, ok := filter.Split(viewFilter)
		if !ok {
			return nil, badRequest("`view` must be of the form `designname/viewname`")
		}
		return filter.ViewFunc(r.Context(), db, ddoc, name)
	}
	ddoc, name, ok := filter.Split(ddocFilter)
	if !ok {
		return nil, badRequest("`filter` must be of the form `designname/filtername`")
	}
	req := &filter.Request{Method: r.Method, Query: map[string]string{}, OnError: onError}
	for k, vs := range r.URL.Query() {
		req.Query[k] = vs[len(vs)-1]
	}
	if c := callOf(r); c != nil {
		req.DB, req.Path = c.rt.db, []string{c.rt.db, "_changes"}
		req.UserName, req.Roles = c.auth.User.Name, c.auth.User.Roles
		if c.sec != nil {
			req.SecObj = json.RawMessage(c.sec.Raw)
		}
	}
	return filter.Func(r.Context(), db, ddoc, name, req)
}
