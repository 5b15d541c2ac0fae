package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

// No JavaScript runs here. A request for a design document's function
// (view, show, list, update, rewrite, filter) is answered as CouchDB 3.5.0
// answers it up to the point where CouchDB would run the function: 404
// for a missing design document or function, with CouchDB's reasons. An
// existing function is then refused with a 400 bad_request, CouchDB's
// answer to requests it cannot serve, so that clients and replicators stop
// rather than retry; the reason says why.

// designActions are the design document handlers of CouchDB
// (chttpd_httpd_handlers:design_handler) that run a function, with the
// member of the design document holding the functions.
var designActions = map[string]string{
	"_view": "views", "_show": "shows", "_list": "lists", "_update": "updates", "_rewrite": "rewrites",
}

// jsRefused is the answer to a request that would run a JavaScript function.
func jsRefused(what string) error {
	return badRequest("%s is a JavaScript function, which this server does not run (Mango queries, and _doc_ids, _selector or _design filters, are served)", what)
}

// designDoc reads a design document's body as JSON members; CouchDB's 404
// (missing or deleted) when it does not exist.
func designDoc(ctx context.Context, db *localdb.DB, name string) (map[string]json.RawMessage, error) {
	doc, err := db.Get(ctx, couchdoc.DesignPrefix+name, localdb.GetOptions{})
	if err != nil {
		return nil, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(doc.Body, &body); err != nil {
		return nil, err
	}
	return body, nil
}

// designMember finds body[member][name] as couch_util:get_nested_json_value
// does: 404 "missing json key: NAME" when absent, "json_mismatch" when
// member is not an object.
func designMember(body map[string]json.RawMessage, member, name string) error {
	raw, ok := body[member]
	if !ok || string(raw) == "null" {
		return couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: %s", member)
	}
	var fns map[string]json.RawMessage
	if json.Unmarshal(raw, &fns) != nil {
		return couchdoc.Errorf(couchdoc.ErrNotFound, "json_mismatch")
	}
	if v, ok := fns[name]; !ok || string(v) == "null" {
		return couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: %s", name)
	}
	return nil
}

// isDesignAction reports whether an attachment path of a design document
// is one of CouchDB's design handlers rather than an attachment.
func isDesignAction(att string) bool {
	action, _, _ := strings.Cut(att, "/")
	_, ok := designActions[action]
	return ok || att == "_info"
}

// serveDesignAction is /{db}/_design/{ddoc}/_view|_show|_list|_update|
// _rewrite/...: the design document must exist (404 missing or deleted),
// then the function (404 missing_named_view for a view, "missing json
// key: NAME" for the others), then it is refused.
func (s *Server) serveDesignAction(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	ddoc := strings.TrimPrefix(rt.docID, couchdoc.DesignPrefix)
	body, err := designDoc(r.Context(), db, ddoc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	action, rest, _ := strings.Cut(rt.att, "/")
	name, tail, _ := strings.Cut(rest, "/")
	member := designActions[action]
	switch {
	case action == "_info":
		s.serveDesignInfo(w, r, db, ddoc)
		return
	case action == "_view":
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost:
		default:
			err = methodNotAllowed("GET,POST,HEAD")
		}
		if err == nil && designMember(body, member, name) != nil {
			err = couchdoc.Errorf(couchdoc.ErrNotFound, "missing_named_view")
		}
		if err == nil {
			s.serveView(w, r, db, ddoc, name, tail)
			return
		}
	case action == "_rewrite":
		// Rules are a list or a function, not named (chttpd_rewrite).
		if m, ok := body[member]; !ok || bytes.Equal(m, []byte("null")) {
			err = &couchdoc.Error{Status: http.StatusNotFound, Name: "rewrite_error", Reason: "Invalid path."}
		} else {
			err = badRequest("the rewrite rules of design documents are not served by this server")
		}
	default:
		err = designMember(body, member, name)
	}
	if err == nil {
		err = jsRefused(strings.TrimPrefix(action, "_") + " " + ddoc + "/" + name)
	}
	s.writeError(w, r, err)
}

// changesSelector reads filter=_selector's body members as couch_changes
// does: the selector must be a JSON object, fields (if given) an array;
// a bad selector is a 400 with Mango's reason.
func changesSelector(raw, fields json.RawMessage) (*mango.Selector, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, badRequest("Selector error: expected a JSON object")
	}
	if f := bytes.TrimSpace(fields); len(f) > 0 && !bytes.Equal(f, []byte("null")) && f[0] != '[' {
		return nil, badRequest("Selector error: fields must be JSON array")
	}
	sel, err := mango.Parse(raw)
	var se *mango.SyntaxError
	switch {
	case errors.As(err, &se) && se.Op != "":
		return nil, badRequest("Invalid operator: %s", se.Op)
	case err != nil:
		return nil, badRequest("%v", err)
	}
	return sel, nil
}
