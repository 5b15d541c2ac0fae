// Package filter runs design document filters on a store's changes feed,
// as CouchDB 3.5 does: filter=ddoc/name (a JavaScript filter function,
// given each change's winning revision and CouchDB's req object) and
// filter=_view (a view's map function: a document passes when it emits a
// row). The HTTP server and the local replication peer use the same
// functions, so a push that names a filter sends what CouchDB would.
package filter

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/jsfunc"
	"github.com/settee/settee/localdb"
)

// runtimes are the filters' JavaScript runtimes, one pool per store and
// design document.
var runtimes = jsfunc.NewPools(nil, 2)

// Request is what CouchDB gives a filter as req: the request's method,
// path, query and user.
type Request struct {
	Method string
	// Path is the request's path segments (["db", "_changes"]).
	Path  []string
	Query map[string]string
	// UserName and Roles are the user's (userCtx.name null when empty);
	// DB its database.
	UserName, DB string
	Roles        []string
	// SecObj is the database's security object (nil: {}).
	SecObj json.RawMessage
	// OnError, when set, is told when the function fails on a document
	// (throws, does not compile, runs out of time), which then does not
	// pass; nil logs the failure.
	OnError func(error)
}

// JSON returns CouchDB's req object for r.
func (r *Request) JSON() json.RawMessage {
	var name any
	if r.UserName != "" {
		name = r.UserName
	}
	roles, query, path := r.Roles, r.Query, r.Path
	if roles == nil {
		roles = []string{}
	}
	if query == nil {
		query = map[string]string{}
	}
	if path == nil {
		path = []string{}
	}
	sec := r.SecObj
	if len(sec) == 0 {
		sec = json.RawMessage(`{}`)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	raw := "/" + strings.Join(path, "/")
	if len(query) > 0 {
		v := url.Values{}
		for k, x := range query {
			v.Set(k, x)
		}
		raw += "?" + v.Encode()
	}
	b, _ := json.Marshal(map[string]any{
		"info": map[string]any{}, "id": nil, "method": method, "path": path, "requested_path": path,
		"raw_path": raw, "query": query, "headers": map[string]string{}, "body": "undefined", "peer": "127.0.0.1",
		"form": map[string]string{}, "cookie": map[string]string{},
		"userCtx": map[string]any{"db": r.DB, "name": name, "roles": roles}, "secObj": sec,
	})
	return b
}

// designPart reads design document ddoc's member[name] (a function's
// source), with CouchDB's 404s: the design document missing or deleted,
// "missing json key: NAME" for the member or the function.
func designPart(ctx context.Context, db *localdb.DB, ddoc, member, name string) (*couchdoc.Doc, string, map[string]json.RawMessage, error) {
	doc, err := db.Get(ctx, couchdoc.DesignPrefix+ddoc, localdb.GetOptions{})
	if err != nil {
		return nil, "", nil, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(doc.Body, &body); err != nil {
		return nil, "", nil, err
	}
	raw, ok := body[member]
	if !ok || string(raw) == "null" {
		return nil, "", nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: %s", member)
	}
	var fns map[string]json.RawMessage
	if json.Unmarshal(raw, &fns) != nil {
		return nil, "", nil, couchdoc.Errorf(couchdoc.ErrNotFound, "json_mismatch")
	}
	fn, ok := fns[name]
	if !ok || string(fn) == "null" {
		return nil, "", nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: %s", name)
	}
	return doc, string(fn), body, nil
}

// Func returns the filter function ddoc/name of db as a feed filter
// (localdb.ChangesOptions.Filter) run with req. Errors: CouchDB's 404s for
// what is missing. A document the function throws on, or that it cannot
// judge in time, does not pass; the failure goes to req.OnError, or the log.
func Func(ctx context.Context, db *localdb.DB, ddoc, name string, req *Request) (func(*couchdoc.Doc) bool, error) {
	doc, src, _, err := designPart(ctx, db, ddoc, "filters", name)
	if err != nil {
		return nil, err
	}
	var source string
	if err := json.Unmarshal([]byte(src), &source); err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "filter %s/%s is not a string", ddoc, name)
	}
	ddocJSON, err := doc.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	reqJSON := req.JSON()
	pool := runtimes.For(db.UUID() + "\x00" + doc.ID)
	return func(d *couchdoc.Doc) bool {
		b, err := d.AppendJSON([]byte{'['})
		if err != nil {
			return false
		}
		b = append(b, ']')
		rt, err := pool.Get()
		if err != nil {
			return false
		}
		ok, err := rt.Filter(source, ddocJSON, b, reqJSON)
		pool.Put(rt)
		if err != nil {
			if req.OnError != nil {
				req.OnError(err)
			} else {
				slog.Warn("filter failed", "filter", ddoc+"/"+name, "doc", d.ID, "err", err)
			}
			return false
		}
		return len(ok) == 1 && ok[0]
	}, nil
}

// ViewFunc returns filter=_view's filter for view ddoc/name of db: a
// document passes when the view's map function emits a row for it.
func ViewFunc(ctx context.Context, db *localdb.DB, ddoc, name string) (func(*couchdoc.Doc) bool, error) {
	doc, src, body, err := designPart(ctx, db, ddoc, "views", name)
	if err != nil {
		return nil, err
	}
	var view struct {
		Map string `json:"map"`
	}
	if err := json.Unmarshal([]byte(src), &view); err != nil || view.Map == "" {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: map")
	}
	var views map[string]json.RawMessage
	_ = json.Unmarshal(body["views"], &views)
	lib := views["lib"]
	pool := runtimes.For(db.UUID() + "\x00" + doc.ID + "\x00view")
	return func(d *couchdoc.Doc) bool {
		b, err := d.AppendJSON(nil)
		if err != nil {
			return false
		}
		rt, err := pool.Get()
		if err != nil {
			return false
		}
		defer pool.Put(rt)
		if err := rt.SetMaps([]string{view.Map}, lib); err != nil {
			slog.Warn("view filter failed", "view", ddoc+"/"+name, "err", err)
			return false
		}
		rows, err := rt.Map(b)
		if err != nil {
			slog.Warn("view filter failed", "view", ddoc+"/"+name, "doc", d.ID, "err", err)
			return false
		}
		return len(rows) == 1 && len(rows[0]) > 0
	}, nil
}

// Split reads "ddoc/name" as CouchDB does (each part unescaped); ok is
// false unless there are exactly two parts.
func Split(s string) (ddoc, name string, ok bool) {
	var parts []string
	for _, p := range strings.Split(s, "/") {
		if p == "" {
			continue
		}
		if u, err := url.QueryUnescape(p); err == nil {
			p = u
		}
		parts = append(parts, p)
	}
	if len(parts) != 2 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
