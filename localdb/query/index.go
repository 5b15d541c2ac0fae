package query

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

// CreateResult is CreateIndex's answer, as CouchDB's POST /{db}/_index.
type CreateResult struct {
	Result string `json:"result"` // "created" or "exists"
	ID     string `json:"id"`     // the design document's id
	Name   string `json:"name"`
}

// IndexInfo is one index as GET /{db}/_index lists it; DDoc is nil for the
// special _all_docs index.
type IndexInfo struct {
	DDoc        *string        `json:"ddoc"`
	Name        string         `json:"name"`
	Type        string         `json:"type"`
	Partitioned *bool          `json:"partitioned,omitempty"`
	Def         map[string]any `json:"def"`
}

// IndexList is GET /{db}/_index's answer.
type IndexList struct {
	TotalRows int         `json:"total_rows"`
	Indexes   []IndexInfo `json:"indexes"`
}

// CreateIndex creates a json index from a POST /{db}/_index body:
// {"index": {"fields": [...], "partial_filter_selector": {...}}, "ddoc",
// "name", "type": "json"}. Without ddoc or name, both derive from a hash of
// the definition, so the same request twice gives "exists". The index is
// a view of the design document, created or updated, and is built before
// CreateIndex returns. Bad requests are 400 errors naming what is wrong; a
// design document that is not a query design document is bad_request.
func CreateIndex(ctx context.Context, db *localdb.DB, body []byte) (*CreateResult, error) {
	req, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	rawDef, ok := req["index"]
	if !ok {
		return nil, mangoError(http.StatusBadRequest, "missing_required_key", "Missing required key: index")
	}
	def, err := mango.ParseIndexDef(rawDef)
	if err != nil {
		return nil, err
	}
	if t, ok := req["type"]; ok && t == "text" {
		// CouchDB without its search plugin answers the same.
		return nil, mangoError(http.StatusServiceUnavailable, "required index service unavailable", "text")
	}
	if t, ok := req["type"]; ok && t != "json" {
		return nil, mangoError(http.StatusBadRequest, "invalid_index", "Invalid type for index: %v", t)
	}
	defJSON, err := json.Marshal(rawDef)
	if err != nil {
		return nil, err
	}
	hash, err := genIndexName(body)
	if err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid UTF-8 JSON")
	}
	ddoc, name := "_design/"+hash, hash
	if v, ok := req["ddoc"]; ok {
		s, ok := v.(string)
		if !ok || s == "" || s == "_design/" {
			return nil, mangoError(http.StatusBadRequest, "invalid_value", "Invalid value for ddoc")
		}
		ddoc = designID(s)
	}
	if v, ok := req["name"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, mangoError(http.StatusBadRequest, "invalid_value", "Invalid value for name")
		}
		name = s
	}
	def.DDoc, def.Name = ddoc, name
	for _, ix := range db.Indexes() {
		if ix.DDoc == ddoc && ix.Name == name && ix.Same(def) {
			return &CreateResult{Result: "exists", ID: ddoc, Name: name}, nil
		}
	}
	doc, views, err := loadDesign(ctx, db, ddoc)
	if err != nil {
		return nil, err
	}
	views[name] = def.View(defJSON)
	if err := saveDesign(ctx, db, doc, views); err != nil {
		return nil, err
	}
	return &CreateResult{Result: "created", ID: ddoc, Name: name}, nil
}

// designID adds the "_design/" prefix when missing.
func designID(s string) string {
	if strings.HasPrefix(s, "_design/") {
		return s
	}
	return "_design/" + s
}

// loadDesign reads a query design document (a new one when missing) and
// its views.
func loadDesign(ctx context.Context, db *localdb.DB, id string) (*couchdoc.Doc, map[string]json.RawMessage, error) {
	doc, err := db.Get(ctx, id, localdb.GetOptions{})
	if errors.Is(err, couchdoc.ErrNotFound) {
		return &couchdoc.Doc{ID: id}, map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var d struct {
		Language string                     `json:"language"`
		Views    map[string]json.RawMessage `json:"views"`
	}
	if err := json.Unmarshal(doc.Body, &d); err != nil {
		return nil, nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "design document %s does not parse: %v", id, err)
	}
	if d.Language != "query" {
		return nil, nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "design document %s is not a query design document", id)
	}
	if d.Views == nil {
		d.Views = map[string]json.RawMessage{}
	}
	return doc, d.Views, nil
}

// saveDesign writes the design document with its views replaced, keeping
// its other members; no views left deletes it.
func saveDesign(ctx context.Context, db *localdb.DB, doc *couchdoc.Doc, views map[string]json.RawMessage) error {
	if len(views) == 0 {
		_, err := db.Delete(ctx, doc.ID, doc.Rev)
		return err
	}
	body := map[string]json.RawMessage{}
	if len(doc.Body) > 0 {
		if err := json.Unmarshal(doc.Body, &body); err != nil {
			return err
		}
	}
	body["language"] = json.RawMessage(`"query"`)
	vj, err := json.Marshal(views)
	if err != nil {
		return err
	}
	body["views"] = vj
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = db.Put(ctx, &couchdoc.Doc{ID: doc.ID, Rev: doc.Rev, Body: b, Attachments: doc.Attachments})
	if errors.Is(err, couchdoc.ErrConflict) {
		return mangoError(http.StatusInternalServerError, "error_saving_ddoc", "Encountered a conflict while saving the design document.")
	}
	return err
}

// ListIndexes lists the _all_docs index, then the json indexes by design
// document and name, as GET /{db}/_index.
func ListIndexes(db *localdb.DB) *IndexList {
	out := &IndexList{Indexes: []IndexInfo{allDocsInfo()}}
	for _, ix := range db.Indexes() {
		out.Indexes = append(out.Indexes, jsonInfo(ix))
	}
	out.TotalRows = len(out.Indexes)
	return out
}

func allDocsInfo() IndexInfo {
	return IndexInfo{Name: "_all_docs", Type: "special", Def: map[string]any{"fields": []any{map[string]any{"_id": "asc"}}}}
}

func jsonInfo(ix *mango.Index) IndexInfo {
	ddoc, f := ix.DDoc, false
	return IndexInfo{DDoc: &ddoc, Name: ix.Name, Type: "json", Partitioned: &f, Def: ix.DefJSON()}
}

// DeleteIndex removes index name of design document ddoc ("_design/"
// optional), deleting the design document when it has no views left.
// A missing index is ErrIndexNotFound.
func DeleteIndex(ctx context.Context, db *localdb.DB, ddoc, name string) error {
	ddoc = designID(ddoc)
	doc, views, err := loadDesign(ctx, db, ddoc)
	if err != nil {
		if errors.Is(err, couchdoc.ErrBadRequest) {
			return ErrIndexNotFound
		}
		return err
	}
	if _, ok := views[name]; !ok || doc.Rev == "" {
		return ErrIndexNotFound
	}
	delete(views, name)
	return saveDesign(ctx, db, doc, views)
}

// decodeObject decodes a JSON request body that must be an object, numbers
// as json.Number.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid UTF-8 JSON")
	}
	if dec.More() {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid UTF-8 JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Request body must be a JSON object")
	}
	return m, nil
}
